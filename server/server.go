// Package server serves an mcp.Handler to MCP clients: New makes a Server,
// its options set the bounds and what it is told of (observers, task
// stores, taps), and a transport (package server/stdio, or package
// mcphttp for Streamable HTTP and HTTP+SSE, and mcphttp/websocket)
// carries its messages. Every message is validated against the schema of the revision
// the client negotiated before the handler sees it.
//
// The machinery (sessions, routing, validation, dispatch, tasks, quotas)
// is in internal/core: what this package exports is all a user
// configures.
package server

import (
	"context"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func init() {
	core.Of = func(facade any) *core.Server { return facade.(*Server).core }
}

// Server serves one mcp.Handler to any number of sessions, over any number
// of transports.
type Server struct{ core *core.Server }

// New returns a Server for h. When h implements TaskSupporter, the tools it
// names run as tasks. When h has a method Attach(*Server), New calls it
// with the new Server before returning, so that a handler that sends
// notifications of its own (list_changed, resources/updated) reaches the
// sessions: package app's handlers have one, and so does a type that
// embeds them.
func New(h mcp.Handler, opts ...Option) *Server {
	var c config
	for _, o := range opts {
		o.apply(&c)
	}
	if ts, ok := h.(TaskSupporter); ok {
		c.core = append(c.core, core.WithTaskRunner(ts))
	}
	srv := &Server{core: core.New(h, c.core...)}
	if a, ok := h.(interface{ Attach(*Server) }); ok {
		a.Attach(srv)
	}
	return srv
}

// Broadcast sends a notification to every initialized session and to the
// subscriptions/listen streams that ask for it. Each recipient has its own
// bounded queue, so that a client that does not read delays nobody else
// (and loses what does not fit); Broadcast does not wait.
func (s *Server) Broadcast(ctx context.Context, method string, params wire.Encoder) {
	s.core.Broadcast(ctx, method, params)
}

// Notify sends a notification to one session, on its stream for messages
// not related to a request. It fails with ErrSessionNotFound when the
// session is not live in this process (gone, or held by another that
// shares the SessionStore), and with an error of its own when the session
// has not finished initialize or keeps no such stream open.
func (s *Server) Notify(ctx context.Context, session, method string, params wire.Encoder) error {
	sess, ok := s.core.Session(session)
	if !ok {
		return ErrSessionNotFound
	}
	return sess.Notify(ctx, method, params)
}

// ResourceUpdated tells the sessions subscribed to uri, and the listen
// streams whose filter names it, that the resource changed.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) { s.core.ResourceUpdated(ctx, uri) }

// OnSessionClosed registers fn to be called with the id of every session
// that ends, so that what is kept per session can go with it.
func (s *Server) OnSessionClosed(fn func(session string)) { s.core.OnSessionClosed(fn) }

// SessionCount is the number of live sessions.
func (s *Server) SessionCount() int { return s.core.SessionCount() }

// Drain ends the long-lived streams the server holds open by itself
// (subscriptions/listen), so that an HTTP server can shut down
// gracefully; calls in flight go on.
func (s *Server) Drain() { s.core.Drain() }

// Close ends every session (their streams close, calls in flight are
// cancelled) and refuses new ones. Changes to a stored session's state
// that are not saved yet (a save failed, or had not begun) are saved
// first, all at once, waiting on the SessionStore 5 s at most: keep the
// store's client open until Close returns.
func (s *Server) Close() { s.core.Close() }
