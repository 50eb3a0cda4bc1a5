package app

import (
	"context"

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

func (h handler) Initialize(ctx context.Context, p *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return h.app.initialize(ctx, p)
}

func (h handler) Discover(ctx context.Context, p *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	return h.app.discover(ctx, p)
}

func (h handler) ListTools(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	return h.app.listTools(ctx, p)
}

func (h handler) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	return h.app.callTool(ctx, p)
}

func (h handler) ListResources(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	return h.app.listResources(ctx, p)
}

func (h handler) ListResourceTemplates(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	return h.app.listResourceTemplates(ctx, p)
}

func (h handler) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	return h.app.readResource(ctx, p)
}

func (h handler) Subscribe(ctx context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	return h.app.subscribe(ctx, p)
}

func (h handler) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	return h.app.unsubscribe(ctx, p)
}

func (h handler) ListPrompts(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	return h.app.listPrompts(ctx, p)
}

func (h handler) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	return h.app.getPrompt(ctx, p)
}

func (h handler) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	return h.app.complete(ctx, p)
}

func (h handler) RunsTasks() bool { return h.app.declaresTasks() }

func (h handler) TaskSupport(tool string) string { return h.app.taskSupport(tool) }
