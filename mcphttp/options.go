package mcphttp

import (
	"net/http"
	"net/netip"
	"reflect"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server/auth"
)

// Option configures Handler. The defaults are those of `mcpstack serve`.
type Option func(*config)

type config struct {
	auth                        *auth.Auth
	maxBody                     int64
	mode                        ResponseMode
	events                      EventStore
	stateless                   bool
	eventBytes, eventBytesTotal int64
	writeTimeout                time.Duration
	rate, bytes                 httpx.RateLimit
	maxConcurrent               int
	loopback                    bool
	observer                    Observer
	metrics                     http.Handler
	ready                       func() error
	proxies                     []netip.Prefix
	transports                  []Transport
}

// DefaultMaxBody is the largest HTTP body (or message of a Transport)
// Handler accepts by default (413 above).
const DefaultMaxBody = 4 << 20

// WithAuth puts every MCP route behind a's bearer-token check and serves
// its protected-resource metadata (/.well-known/oauth-protected-resource).
// Without it the routes are open: serve loopback only (WithLoopbackOnly).
func WithAuth(a *auth.Auth) Option { return func(c *config) { c.auth = a } }

// WithMaxBody sets the largest accepted body, or message of a Transport,
// in bytes (default DefaultMaxBody).
func WithMaxBody(n int64) Option { return func(c *config) { c.maxBody = n } }

// WithResponseMode answers POSTed requests as JSON until the call sends
// something else (ResponseAuto, the default), always as an event stream
// (ResponseSSE), or always as one JSON body (ResponseJSON).
func WithResponseMode(m ResponseMode) Option { return func(c *config) { c.mode = m } }

// WithStateless keeps no sessions over Streamable HTTP: every POST stands
// alone.
func WithStateless() Option { return func(c *config) { c.stateless = true } }

// WithEventLimits bounds the stream events kept for resumption, per
// session and in all, in bytes (defaults 8 MiB and 64 MiB), in the
// default, in-memory EventStore.
func WithEventLimits(perSession, total int64) Option {
	return func(c *config) { c.eventBytes, c.eventBytesTotal = perSession, total }
}

// WithWriteTimeout bounds how long a write to a stream or a Transport's
// connection, and any answer, may wait on its client (default 10s): a
// client that sends requests and reads nothing loses its connection
// after it.
func WithWriteTimeout(d time.Duration) Option { return func(c *config) { c.writeTimeout = d } }

// WithRateLimit bounds the requests (and a Transport's messages) one client
// sends per window (default 1000 per 10s; 0: none); over it, 429 with
// Retry-After. A client is the authenticated principal, else the address.
func WithRateLimit(requests int, window time.Duration) Option {
	return func(c *config) { c.rate = httpx.RateLimit{Requests: requests, Window: window} }
}

// WithByteRateLimit bounds the bytes of the requests (and a Transport's
// messages) one client sends per window, as WithRateLimit their number
// (default 32 MiB per 10s; 0: none).
func WithByteRateLimit(bytes int, window time.Duration) Option {
	return func(c *config) { c.bytes = httpx.RateLimit{Requests: bytes, Window: window} }
}

// WithMaxConcurrent bounds the requests one connection of a Transport
// (a WebSocket) has in flight (default 256, as
// server.Limits.InflightPerSession).
func WithMaxConcurrent(n int) Option { return func(c *config) { c.maxConcurrent = n } }

// Observer is what the HTTP routes report to; *observe.Observer is one.
// An interface, so that a server without observability links none of it.
type Observer interface {
	// Middleware wraps the MCP routes: trace context from the traceparent
	// header, answers counted by status.
	Middleware(next http.Handler) http.Handler
	// WatchStreams samples the open streams and the bytes of stream
	// events kept for resumption.
	WatchStreams(open func() int, eventBytes func() int64)
}

// WithObserver counts the MCP routes' answers with o, by status and
// authentication failure, and takes a request's traceparent header as
// the parent of its spans. Give the server the same Observer
// (server.WithObserver) for its requests.
// A nil Observer, typed or not, is none.
func WithObserver(o Observer) Option {
	return func(c *config) {
		if v := reflect.ValueOf(o); o == nil || v.Kind() == reflect.Pointer && v.IsNil() {
			c.observer = nil
			return
		}
		c.observer = o
	}
}

// WithMetrics serves h at /metrics, unauthenticated like /healthz (for an
// endpoint apart from the MCP listener, serve it on one of its own).
func WithMetrics(h http.Handler) Option { return func(c *config) { c.metrics = h } }

// WithLoopbackOnly refuses requests whose Host or Origin is not a loopback
// name (DNS rebinding): for a server bound to 127.0.0.1 or localhost.
func WithLoopbackOnly() Option { return func(c *config) { c.loopback = true } }

// WithReadiness adds a check to /readyz: while it returns an error, /readyz
// answers 503 with the error's text, so that a load balancer sends this
// replica nothing new (mcpstack serve fails it from SIGTERM on).
func WithReadiness(check func() error) Option { return func(c *config) { c.ready = check } }

// WithTrustedProxies believes the client address that a reverse proxy in
// prefixes forwards in X-Forwarded-For (the rightmost address outside
// prefixes; a Forwarded header is ignored: proxies pass the client's own
// through) for the per-client quotas of clients without a
// token; from any other address the headers are ignored, so that a client
// cannot pass for another. Without it, every client behind a load balancer
// is one client, the balancer.
func WithTrustedProxies(prefixes ...netip.Prefix) Option {
	return func(c *config) { c.proxies = prefixes }
}
