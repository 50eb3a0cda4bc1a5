package app

import (
	"context"
	"errors"
	"os"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// NewServer returns the server core for a (validation of every message
// against the negotiated revision, sessions, limits: see package server),
// with a's list_changed notifications wired to it.
func NewServer(a *App, opts ...server.Option) *server.Server {
	srv := server.New(a.Handler(), opts...)
	a.Attach(srv)
	return srv
}

// Attach sends a's notifications through srv: list_changed to every
// session and listen stream, resources/updated to the subscribers; and
// the app logs through srv's logger unless WithLogger gave one. NewServer calls
// it; call it yourself when srv serves a type that embeds a's Handler.
func (a *App) Attach(srv *server.Server) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.notify = append(a.notify, func(ctx context.Context, method string) { srv.Broadcast(ctx, method, nil) })
	a.updated = append(a.updated, srv.ResourceUpdated)
	if !a.logSet {
		a.log = core.Of(srv).Logger()
	}
}

// ServeStdio serves a to one client over stdin and stdout until stdin ends
// or ctx does. Logs must go to stderr (server.WithLogger): stdout is the
// transport.
func ServeStdio(ctx context.Context, a *App, opts ...server.Option) error {
	srv := NewServer(a, opts...)
	defer srv.Close()
	err := stdio.Serve(ctx, srv, os.Stdin, os.Stdout)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
