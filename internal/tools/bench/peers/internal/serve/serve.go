// Package serve has the flag handling and HTTP plumbing that the two peer
// echo servers share, so that they differ only in the SDK calls.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"
)

// Options are the parsed command-line flags of a peer server.
type Options struct {
	HTTP         string // listen address
	AddrFile     string // where to write the bound address
	ResponseMode string // "sse" or "json"
	Stdio        bool   // serve stdio instead of HTTP
}

// Parse parses the flags of a peer server called name.
func Parse(name string, args []string) Options {
	var o Options
	fl := flag.NewFlagSet(name, flag.ExitOnError)
	fl.StringVar(&o.HTTP, "http", "127.0.0.1:0", "serve Streamable HTTP on `ADDR`, path /mcp (loopback only)")
	fl.StringVar(&o.AddrFile, "addr-file", "", "write the bound host:port to `FILE` once listening")
	fl.StringVar(&o.ResponseMode, "response-mode", "sse", "answer POSTed requests as `sse` (text/event-stream) or json (application/json)")
	fl.BoolVar(&o.Stdio, "stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), "Usage: %s [--http ADDR --addr-file FILE --response-mode sse|json | --stdio]\n\n"+
			"Benchmark peer: one tool, echo {text: string}, answering one text content with the same text.\n\nFlags:\n", name)
		fl.PrintDefaults()
	}
	_ = fl.Parse(args)
	if o.ResponseMode != "sse" && o.ResponseMode != "json" {
		fmt.Fprintf(os.Stderr, "%s: --response-mode must be sse or json, not %q\n", name, o.ResponseMode)
		os.Exit(2)
	}
	host, _, err := net.SplitHostPort(o.HTTP)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: --http %q: %v\n", name, o.HTTP, err)
		os.Exit(2)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		fmt.Fprintf(os.Stderr, "%s: --http must be a loopback address, not %q\n", name, o.HTTP)
		os.Exit(2)
	}
	return o
}

// Context is cancelled on SIGINT or SIGTERM.
func Context() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// ServeHTTP serves h at /mcp on o.HTTP until ctx ends, writing the bound
// address to o.AddrFile (atomically) once it listens.
func ServeHTTP(ctx context.Context, o Options, h http.Handler) error {
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return err
	}
	if o.AddrFile != "" {
		if err := writeAtomic(o.AddrFile, ln.Addr().String()+"\n"); err != nil {
			ln.Close()
			return err
		}
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

func writeAtomic(path, s string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".addr-*")
	if err != nil {
		return err
	}
	if _, err := tmp.WriteString(s); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Fatal prints err and exits 1 when err is not nil.
func Fatal(name string, err error) {
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}
