package app

import (
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/server"
)

// Handler is the mcp.Handler an App makes, and which of its tools run as
// tasks. To add a method the app does not have (one of a revision newer
// than it), or to change one, embed the Handler in a type of your own,
// serve that with server.New, and Attach the app to the server:
//
//	type withPing struct{ app.Handler }
//	srv := server.New(withPing{a.Handler()})
//	a.Attach(srv)
type Handler interface {
	mcp.Handler
	server.TaskSupporter
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
