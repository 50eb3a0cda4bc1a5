package app

import (
	"context"
	"log/slog"
	"slices"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
)

// NewServer returns the server core for a (validation of every message
// against the negotiated revision, sessions, limits: see package server):
// server.New(a.Handler(), opts...).
func NewServer(a *App, opts ...server.Option) *server.Server {
	return server.New(a.Handler(), opts...)
}

// Attach sends the app's notifications through srv until it closes:
// list_changed to every session and listen stream, resources/updated to
// the subscribers. The app logs through the logger of the first server it
// is attached to. server.New calls it, for the handler and for a type that
// embeds it.
func (h handler) Attach(srv *server.Server) {
	a := h.app
	a.log.CompareAndSwap(nil, core.Of(srv).Logger())
	a.mu.Lock()
	defer a.mu.Unlock()
	a.servers = append(a.servers, srv)
}

// served returns the servers the app is attached to that have not closed,
// and forgets those that have.
func (a *App) served() []*server.Server {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.servers = slices.DeleteFunc(a.servers, func(srv *server.Server) bool {
		select {
		case <-core.Of(srv).Done():
			return true
		default:
			return false
		}
	})
	return slices.Clone(a.servers)
}

// logger is where the app logs what the client is not told: its server's
// logger, or nowhere before it has one.
func (a *App) logger() *slog.Logger {
	if l := a.log.Load(); l != nil {
		return l
	}
	return discard
}

var discard = slog.New(slog.DiscardHandler)

// onChange tells the clients that a list changed, when the app is served.
func (a *App) onChange(method string) {
	for _, srv := range a.served() {
		srv.Broadcast(context.Background(), method, nil)
	}
}

// ResourceUpdated tells the clients subscribed to uri that it changed
// (notifications/resources/updated), on every server the app is served by.
func (a *App) ResourceUpdated(ctx context.Context, uri string) {
	for _, srv := range a.served() {
		srv.ResourceUpdated(ctx, uri)
	}
}
