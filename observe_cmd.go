package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/observe/otelenv"
)

// newObserver makes the observer of `mcpstack serve`: metrics unless
// --metrics=false, spans when the OTEL_* variables configure an exporter,
// the access log unless --access-log=false; nil when all three are off. Its labels name the tools and prompts that
// *names reports registered: the profile's handler sets it once it exists
// (until then, none is a label). stop flushes the spans.
func newObserver(ctx context.Context, c serveConfig, log *slog.Logger) (_ *observe.Observer, names *func(method, name string) bool, stop func(), err error) {
	if c.stdio && os.Getenv("OTEL_TRACES_EXPORTER") == "console" {
		return nil, nil, nil, errors.New("OTEL_TRACES_EXPORTER=console writes to stdout, which the stdio transport owns: use otlp, or serve over HTTP")
	}
	tp, shutdown, err := otelenv.TracerProvider(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	names = new(func(method, name string) bool)
	opts := []observe.Option{observe.WithNames(func(method, name string) bool { return *names != nil && (*names)(method, name) })}
	if tp != nil {
		opts = append(opts, observe.WithTracerProvider(tp))
		log.Info("tracing on: spans go to the exporter the OTEL_* variables configure")
	}
	if c.accessLog {
		opts = append(opts, observe.WithLogger(log))
	}
	if !c.metrics {
		opts = append(opts, observe.WithRegisterer(nil))
	}
	stop = func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("tracing: flushing the last spans", "err", err)
		}
	}
	if tp == nil && !c.accessLog && !c.metrics {
		return nil, names, stop, nil // nothing to observe: no observer on the request path
	}
	return observe.New(opts...), names, stop, nil
}

// serveMetrics serves /metrics on a listener of its own (--metrics-addr).
func serveMetrics(addr string, obs *observe.Observer, log *slog.Logger) (stop func(), err error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", obs.Metrics())
	return serveAside(addr, mux, "metrics", "/metrics", log)
}

// serveAside serves h on a listener of its own at addr, beside the MCP
// listener, until stop; what names it in the log lines.
func serveAside(addr string, h http.Handler, what, path string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(what+" listener", "err", err)
		}
	}()
	log.Info("serving "+what, "url", fmt.Sprintf("http://%s%s", ln.Addr(), path))
	return func() { _ = hs.Close() }, nil
}
