// Command echo (bin/mcpstack-echo in make bench) is the benchmark echo
// server built on mcpstack's library (app, mcphttp, server/stdio), as the
// peers are built on theirs: one tool, echo {text}, answering one text
// content with the same text, over Streamable HTTP or stdio, with the
// peers' flags. `make bench` compares its memory with the peers' beside
// that of `mcpstack serve`, which links far more (SQLite, PostgreSQL,
// Redis, OpenTelemetry, the tools).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/addrfile"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

type echoIn struct {
	Text string `json:"text" jsonschema:"description=the text to echo"`
}

func main() {
	fl := flag.NewFlagSet("echo", flag.ExitOnError)
	addr := fl.String("http", "127.0.0.1:0", "serve Streamable HTTP on `ADDR`, path /mcp (loopback only)")
	addrFile := fl.String("addr-file", "", "write the bound host:port to `FILE` once listening")
	mode := fl.String("response-mode", "auto", "answer POSTed requests as `auto`, sse or json")
	useStdio := fl.Bool("stdio", false, "serve newline-delimited JSON-RPC on stdin/stdout instead of HTTP")
	_ = fl.Parse(os.Args[1:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := app.NewServer(newApp(), quotasOff())
	defer srv.Close()
	if err := run(ctx, srv, *addr, *addrFile, *mode, *useStdio); err != nil {
		slog.Error("echo", "err", err)
		os.Exit(1)
	}
}

func newApp() *app.App {
	a := app.New("mcpstack-echo", "1")
	app.AddTool(a, app.Tool{Name: "echo", Description: "Echo the text back as one text content."},
		func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	return a
}

// quotasOff turns the per-client quotas off, as they are for serve in
// make bench: the load generator is one client.
func quotasOff() server.Option {
	return server.WithLimits(server.Limits{SessionsPerClient: -1, InflightPerClient: -1})
}

func run(ctx context.Context, srv *server.Server, addr, addrFile, mode string, useStdio bool) error {
	if useStdio {
		return stdio.Serve(ctx, srv, os.Stdin, os.Stdout)
	}
	m := mcphttp.ResponseMode(mode)
	if m != mcphttp.ResponseAuto && m != mcphttp.ResponseSSE && m != mcphttp.ResponseJSON {
		return fmt.Errorf("--response-mode must be auto, sse or json, not %q", mode)
	}
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithResponseMode(m), mcphttp.WithLoopbackOnly(),
		mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if addrFile != "" {
		if err := addrfile.Write(addrFile, ln.Addr().String()); err != nil {
			ln.Close()
			return err
		}
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		drain, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		shutdown(drain) // the streams and sockets, bounded
		_ = hs.Close()
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
