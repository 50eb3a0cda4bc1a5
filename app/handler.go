package app

import (
	"github.com/mcpstack/mcpstack/internal/methods/base"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
)

// Handler is the mcp.Handler an App makes, and which of its tools run as
// tasks. To add a method the app does not have (one of a revision newer
// than it), or to change one, embed the Handler in a type of your own and
// serve that with server.New (which attaches the app to the server, so
// that its notifications reach the sessions):
//
//	type withPing struct{ app.Handler }
//	srv := server.New(withPing{a.Handler()})
type Handler interface {
	mcp.Handler
	server.TaskSupporter
	// Attach is how server.New gives the app its server, for a handler
	// and a type that embeds it. Call it only for a server whose handler
	// wraps this one without embedding it (a second call for the same
	// server sends every notification twice).
	Attach(srv *server.Server)
}

// Handler returns the mcp.Handler of a: initialize and server/discover
// declare what is registered; tools/call validates the arguments against
// the tool's input schema and runs it (an unknown tool is -32602;
// invalid arguments, a handler's error and a refused input are tool
// errors, which the model can read); the lists are paged; resources/read
// finds a resource or a template that matches; resources/subscribe
// accepts what the app has; completion/complete asks the Completer.
func (a *App) Handler() Handler { return handler{app: a} }

// handler serves an App; base.Lifecycle answers what the app leaves to
// the core (ping, logging/setLevel, notifications, tasks).
type handler struct {
	base.Lifecycle
	app *App
}

var _ mcp.Handler = handler{}
