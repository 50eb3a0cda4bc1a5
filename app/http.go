package app

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
	"github.com/mcpstack/mcpstack/server/guard"
	"github.com/mcpstack/mcpstack/server/httpx"
	"github.com/mcpstack/mcpstack/server/sse"
	"github.com/mcpstack/mcpstack/server/streamable"
	"github.com/mcpstack/mcpstack/server/ws"
)

// HTTPOption configures Handler. The defaults are those of `mcpstack
// serve`.
type HTTPOption func(*httpConfig)

type httpConfig struct {
	auth                        *auth.Auth
	maxBody                     int64
	mode                        streamable.ResponseMode
	stateless                   bool
	eventBytes, eventBytesTotal int64
	writeTimeout                time.Duration
	rate, bytes                 httpx.RateLimit
	maxConcurrent               int
	loopback                    bool
	observer                    *observe.Observer
	metrics                     http.Handler
	ready                       func() error
}

// DefaultMaxBody is the largest HTTP body (or WebSocket message) Handler
// accepts by default (413 above).
const DefaultMaxBody = 4 << 20

// HTTPAuth puts every MCP route behind a's bearer-token check and serves
// its protected-resource metadata (/.well-known/oauth-protected-resource).
// Without it the routes are open: serve loopback only (HTTPLoopbackOnly).
func HTTPAuth(a *auth.Auth) HTTPOption { return func(c *httpConfig) { c.auth = a } }

// HTTPMaxBody sets the largest accepted body or WebSocket message in bytes
// (default DefaultMaxBody).
func HTTPMaxBody(n int64) HTTPOption { return func(c *httpConfig) { c.maxBody = n } }

// HTTPResponseMode answers POSTed requests as an event stream
// (streamable.SSE, the default) or as one JSON body (streamable.JSON).
func HTTPResponseMode(m streamable.ResponseMode) HTTPOption {
	return func(c *httpConfig) { c.mode = m }
}

// HTTPStateless keeps no sessions over Streamable HTTP: every POST stands
// alone.
func HTTPStateless() HTTPOption { return func(c *httpConfig) { c.stateless = true } }

// HTTPEventLimits bounds the stream events kept for resumption, per
// session and in all, in bytes (defaults streamable.DefaultEventBytes and
// DefaultEventBytesTotal).
func HTTPEventLimits(perSession, total int64) HTTPOption {
	return func(c *httpConfig) { c.eventBytes, c.eventBytesTotal = perSession, total }
}

// HTTPWriteTimeout bounds how long a write to a stream or socket may wait
// on its client (default httpx.DefaultWriteTimeout).
func HTTPWriteTimeout(d time.Duration) HTTPOption { return func(c *httpConfig) { c.writeTimeout = d } }

// HTTPRateLimit bounds the requests (and WebSocket frames) per client, and
// their bytes: in bytes, the RateLimit's Requests counts bytes
// (httpx.ParseRateLimit("32MiB/10s")). Default 1000 per 10s and 32 MiB per
// 10s; a zero RateLimit is no limit. A client is the authenticated
// principal, else the address.
func HTTPRateLimit(requests, bytes httpx.RateLimit) HTTPOption {
	return func(c *httpConfig) { c.rate, c.bytes = requests, bytes }
}

// HTTPMaxConcurrent bounds the requests one WebSocket has in flight
// (default 256, as server.WithMaxInflight).
func HTTPMaxConcurrent(n int) HTTPOption { return func(c *httpConfig) { c.maxConcurrent = n } }

// HTTPObserver counts the MCP routes' answers with o, by status and
// authentication failure, and takes a request's traceparent header as
// the parent of its spans (observe.HTTP). Give the server the same
// Observer (server.WithObserver) for its requests.
func HTTPObserver(o *observe.Observer) HTTPOption { return func(c *httpConfig) { c.observer = o } }

// HTTPMetrics serves h at /metrics, unauthenticated like /healthz (for
// an endpoint apart from the MCP listener, serve it on one of its own).
func HTTPMetrics(h http.Handler) HTTPOption { return func(c *httpConfig) { c.metrics = h } }

// HTTPLoopbackOnly refuses requests whose Host or Origin is not a loopback
// name (DNS rebinding): for a server bound to 127.0.0.1 or localhost.
func HTTPLoopbackOnly() HTTPOption { return func(c *httpConfig) { c.loopback = true } }

// HTTPReadiness adds a check to /readyz: while it returns an error, /readyz
// answers 503 with the error's text, so that a load balancer sends this
// replica nothing new (mcpstack serve fails it from SIGTERM on).
func HTTPReadiness(check func() error) HTTPOption {
	return func(c *httpConfig) { c.ready = check }
}

// Handler returns an http.Handler serving srv over every HTTP transport:
// Streamable HTTP at /mcp (POST, GET, DELETE; GET /mcp/stream too),
// HTTP+SSE at /sse and /messages, WebSocket at /mcp/ws; /healthz and
// /readyz for probes. The MCP routes are authenticated (HTTPAuth), then
// rate-limited per client, as `mcpstack serve` serves them. shutdown
// drains: /readyz answers 503, streams end once their calls are done, and
// it blocks until the WebSocket sockets have closed (1001) or ctx ends.
// http.Server.Shutdown does not wait for those (they are hijacked): run
// the two side by side (ListenAndServe shows how).
func Handler(srv *server.Server, opts ...HTTPOption) (h http.Handler, shutdown func(context.Context)) {
	c := httpConfig{
		maxBody:         DefaultMaxBody,
		mode:            streamable.SSE,
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
	events := streamable.NewMemoryEventStore(streamable.DefaultEventsPerSession, streamable.DefaultEventAge,
		streamable.WithEventBytes(c.eventBytes, c.eventBytesTotal))
	mcpH := streamable.New(srv, streamable.WithResponseMode(c.mode), streamable.WithMaxBody(c.maxBody), streamable.WithStateless(c.stateless),
		streamable.WithEventStore(events), streamable.WithWriteTimeout(c.writeTimeout))
	// HTTP+SSE of 2024-11-05 (deprecated): GET /sse opens a session, POST
	// /messages?sessionId=... carries the client's messages.
	sseH := sse.New(srv, sse.WithMaxBody(c.maxBody), sse.WithEndpoint("/messages"), sse.WithWriteTimeout(c.writeTimeout))
	// WebSocket: this project's extension (subprotocol "mcp"); its frames
	// count like HTTP requests.
	wsH := ws.New(srv, ws.WithReadLimit(c.maxBody), ws.WithWriteTimeout(c.writeTimeout), ws.WithMaxConcurrent(c.maxConcurrent),
		ws.WithRateLimit(c.rate.Requests, c.rate.Window), ws.WithByteRateLimit(c.bytes.Requests, c.bytes.Window))

	r := chi.NewRouter()
	r.Use(middleware.Recoverer)
	if c.loopback {
		r.Use(guard.Loopback())
	}
	chain := []func(http.Handler) http.Handler{httpx.Identify, c.rate.Middleware(), c.bytes.BytesMiddleware(c.maxBody)}
	if c.auth != nil {
		c.auth.Mount(r)
		chain = append([]func(http.Handler) http.Handler{c.auth.Middleware()}, chain...)
	}
	if c.observer != nil {
		o := c.observer
		chain = append([]func(http.Handler) http.Handler{func(next http.Handler) http.Handler { return observe.HTTP(o, next) }}, chain...)
		o.WatchStreams(mcpH.OpenStreams, events.Bytes)
	}
	mcp := r.With(chain...)
	mcp.Handle("/mcp", mcpH)
	mcp.Get("/mcp/stream", mcpH.ServeHTTP) // the docs' path for the GET stream of a session
	mcp.Handle("/sse", sseH.Stream())
	mcp.Handle("/messages", sseH.Messages())
	mcp.Handle("/mcp/ws", wsH)
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
	return r, func(ctx context.Context) {
		draining.Store(true)
		mcpH.Shutdown()
		sseH.Shutdown()
		srv.Drain()
		// http.Server.Shutdown does not wait for hijacked connections: the
		// WebSocket handler drains its sockets itself.
		if err := wsH.Shutdown(ctx); err != nil {
			srv.Logger().Warn("websocket drain timed out; sockets closed", "err", err)
		}
	}
}
