// Package mcphttp serves a server.Server over HTTP as `mcpstack serve`
// does: Streamable HTTP and HTTP+SSE (and WebSocket, with
// mcphttp/websocket), behind authentication and per-client rate limits,
// with health and readiness probes. A stdio server does not import it,
// and links none of it.
package mcphttp

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/httprate"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/internal/transport/sse"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
)

// Handler returns an http.Handler serving srv over the HTTP transports of
// the specification: Streamable HTTP at /mcp (POST, GET, DELETE; GET
// /mcp/stream too), HTTP+SSE at /sse and /messages, and any other
// (WithTransport; `mcpstack serve` adds WebSocket at /mcp/ws); /healthz
// and /readyz for probes. The MCP routes are authenticated (WithAuth),
// then rate-limited per client, as `mcpstack serve` serves them. shutdown
// drains: /readyz answers 503, streams end once their calls are done, and
// it blocks until the other transports' connections have closed (a
// WebSocket with 1001) or ctx ends. http.Server.Shutdown does not wait
// for those (they are hijacked): run the two side by side
// (ListenAndServe shows how).
func Handler(srv *server.Server, opts ...Option) (h http.Handler, shutdown func(context.Context)) {
	c := config{
		maxBody:         DefaultMaxBody,
		mode:            ResponseAuto,
		eventBytes:      streamable.DefaultEventBytes,
		eventBytesTotal: streamable.DefaultEventBytesTotal,
		writeTimeout:    httpx.DefaultWriteTimeout,
		rate:            httpx.RateLimit{Requests: 1000, Window: 10 * time.Second},
		bytes:           httpx.RateLimit{Requests: 32 << 20, Window: 10 * time.Second},
		maxConcurrent:   256,
	}
	for _, o := range opts {
		o(&c)
	}
	events := c.events
	if shared, ok := events.(interface{ RateCounter() httprate.LimitCounter }); ok {
		c.rate.Counter, c.bytes.Counter = shared.RateCounter, shared.RateCounter
	}
	if events == nil {
		events = streamable.NewMemoryEventStore(streamable.DefaultEventsPerSession, streamable.DefaultEventAge,
			streamable.WithEventBytes(c.eventBytes, c.eventBytesTotal))
	}
	mcpH := streamable.New(srv, streamable.WithResponseMode(streamable.ResponseMode(c.mode)), streamable.WithMaxBody(c.maxBody), streamable.WithStateless(c.stateless),
		streamable.WithEventStore(events), streamable.WithWriteTimeout(c.writeTimeout))
	// HTTP+SSE of 2024-11-05 (deprecated): GET /sse opens a session, POST
	// /messages?sessionId=... carries the client's messages.
	sseH := sse.New(srv, sse.WithMaxBody(c.maxBody), sse.WithEndpoint("/messages"), sse.WithWriteTimeout(c.writeTimeout))

	r := chi.NewRouter()
	r.Use(httpx.Recover(core.Of(srv).Logger()), httpx.WriteDeadline(c.writeTimeout))
	if c.loopback {
		r.Use(guard.Loopback())
	}
	chain := []func(http.Handler) http.Handler{httpx.Identify(httpx.NewTrustedProxies(c.proxies)), c.rate.Middleware(), c.bytes.BytesMiddleware(c.maxBody)}
	if c.auth != nil {
		c.auth.Mount(r)
		chain = append([]func(http.Handler) http.Handler{c.auth.Middleware()}, chain...)
	}
	if c.observer != nil {
		chain = append([]func(http.Handler) http.Handler{c.observer.Middleware}, chain...)
		c.observer.WatchStreams(mcpH.OpenStreams, eventBytes(events))
	}
	mcp := r.With(chain...)
	mcp.Handle("/mcp", mcpH)
	mcp.Get("/mcp/stream", mcpH.ServeHTTP) // the docs' path for the GET stream of a session
	mcp.Handle("/sse", sseH.Stream())
	mcp.Handle("/messages", sseH.Messages())
	var draining atomic.Bool
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	if c.metrics != nil {
		r.Handle("/metrics", c.metrics)
	}
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if draining.Load() {
			http.Error(w, "shutting down", http.StatusServiceUnavailable)
			return
		}
		if c.ready != nil {
			if err := c.ready(); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		_, _ = fmt.Fprintf(w, "ready: %d sessions\n", srv.SessionCount())
	})
	// The transports last, so that a path any route has is taken.
	drains := make([]func(context.Context) error, 0, len(c.transports))
	for _, t := range c.transports {
		if r.Match(chi.NewRouteContext(), http.MethodGet, t.Path()) { // chi would replace the route, quietly
			panic(fmt.Sprintf("mcphttp: a Transport at %s, which Handler serves already", t.Path()))
		}
		h, drain := t.Serve(srv, c.limits())
		mcp.Handle(t.Path(), h)
		drains = append(drains, drain)
	}
	return r, func(ctx context.Context) {
		draining.Store(true)
		mcpH.Shutdown()
		sseH.Shutdown()
		srv.Drain()
		// http.Server.Shutdown does not wait for hijacked connections: a
		// transport drains its own.
		for i, drain := range drains {
			if err := drain(ctx); err != nil {
				core.Of(srv).Logger().Warn("transport drain timed out; connections closed", "path", c.transports[i].Path(), "err", err)
			}
		}
	}
}
