package app

import (
	"context"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
)

// NewServer returns the server core for a (validation of every message
// against the negotiated revision, sessions, limits: see package server):
// server.New(a.Handler(), opts...).
func NewServer(a *App, opts ...server.Option) *server.Server {
	return server.New(a.Handler(), opts...)
}

// Attach sends the app's notifications through srv: list_changed to every
// session and listen stream, resources/updated to the subscribers; and
// the app logs through srv's logger. server.New calls it, for the handler
// and for a type that embeds it.
func (h handler) Attach(srv *server.Server) {
	a := h.app
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notify = append(a.notify, func(ctx context.Context, method string) { srv.Broadcast(ctx, method, nil) })
	a.updated = append(a.updated, srv.ResourceUpdated)
	a.log = core.Of(srv).Logger()
}
