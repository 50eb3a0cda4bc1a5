package mcphttp

import (
	"context"
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/server"
)

// Transport is a transport served beside Streamable HTTP and HTTP+SSE, at
// a path of its own, behind the MCP routes' authentication and per-client
// rate limits. mcphttp/websocket's Transport is one. A transport is a
// package of its own so that a server which adds none links none of it
// (WebSocket brings a library and compress/flate: about 400 KiB of
// resident memory). The transports are this module's: a Server's sessions
// are served through its internal core, which other modules cannot
// import, so this interface may grow methods.
type Transport interface {
	// Path is where Handler mounts the transport.
	Path() string
	// Serve returns the transport's handler for srv, held to l, and how
	// to drain it: Handler's shutdown calls drain after the server has
	// drained its calls, and drain returns once the transport's
	// connections have closed or ctx has ended.
	Serve(srv *server.Server, l Limits) (h http.Handler, drain func(ctx context.Context) error)
}

// Limits are the bounds Handler's options set, for a Transport to hold
// its connections to as well.
type Limits struct {
	MaxBody      int64         // the largest message, in bytes (WithMaxBody)
	WriteTimeout time.Duration // how long one write may wait on its client (WithWriteTimeout)
	// Requests per RequestWindow and Bytes per ByteWindow one client may
	// send (WithRateLimit, WithByteRateLimit; 0: no bound).
	Requests      int
	RequestWindow time.Duration
	Bytes         int
	ByteWindow    time.Duration
	// MaxConcurrent is how many requests of one connection are served at
	// once (WithMaxConcurrent).
	MaxConcurrent int
}

// WithTransport serves t at t.Path() beside the MCP routes, behind the
// same authentication and rate limits. Handler panics when a path is
// taken already (by its own routes or another Transport).
func WithTransport(t Transport) Option {
	return func(c *config) { c.transports = append(c.transports, t) }
}

func (c *config) limits() Limits {
	return Limits{
		MaxBody: c.maxBody, WriteTimeout: c.writeTimeout,
		Requests: c.rate.Requests, RequestWindow: c.rate.Window,
		Bytes: c.bytes.Requests, ByteWindow: c.bytes.Window,
		MaxConcurrent: c.maxConcurrent,
	}
}
