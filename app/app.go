// Package app is the registration layer of mcpstack: tools, resources
// and prompts registered on an App make its mcp.Handler (a.Handler()), so
// that an MCP server is a dozen lines.
//
//	a := app.New("hello", "1.0.0")
//	app.AddTool(a, app.Tool{Name: "greet", Description: "Greets someone."},
//		func(ctx context.Context, in struct{ Name string `json:"name"` }) (string, error) {
//			return "Hello, " + in.Name + "!", nil
//		})
//	srv := app.NewServer(a)
//	defer srv.Close()
//	stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout)
//
// What the layer does for every registration:
//   - a tool's input and output JSON Schemas are derived from its Go types
//     (github.com/invopop/jsonschema: `jsonschema:"description=...,minimum=1,enum=a,default=3"`
//     tags), or given; they are compiled once, and every call's arguments are
//     validated against the input schema: a failure is a tool error
//     (isError) naming the JSON pointer and the reason;
//   - structured output is validated against the output schema (a failure
//     is a bug of the server: -32603 and a log line), and text content is
//     filled from it;
//   - a handler's error is a tool error; a panic is -32603 and a log line
//     (the server core recovers it; under middleware, the app does, so
//     that the middleware sees the -32603);
//   - capabilities and server info are derived from what is registered, for
//     initialize and server/discover alike; lists paginate;
//   - adding or removing at run time sends the list_changed notification;
//     subscriptions are kept by the server core, and ResourceUpdated reaches
//     the subscribers;
//   - a handler reaches the client through package peer (progress, log
//     messages, sampling, elicitation, roots).
//
// Revisions, validation of the messages themselves and transports stay
// with the server core (package server): a.Handler() is what it
// dispatches to.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/base"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// App is what a server serves, built from registrations: tools,
// resources, templates, prompts and completions. It is safe for
// concurrent use: registrations may change while it serves. NewServer
// serves it; Handler is the mcp.Handler it makes.
type App struct {
	info         mcp.Implementation
	instructions string
	log          atomic.Pointer[slog.Logger] // the first server's (Attach)
	pager        base.Paginator
	middleware   []Middleware
	cache        map[string]cachePolicy // by method
	adjust       []func(ctx context.Context, c *mcp.ServerCapabilities)

	mu        sync.RWMutex
	tools     registry[*tool]
	resources registry[*resource]
	templates registry[*template]
	prompts   registry[*prompt]
	servers   []*server.Server // those it is attached to, for list_changed and resources/updated
}

// Option configures an App.
type Option func(*App)

// WithTitle sets the human-readable name in serverInfo.
func WithTitle(title string) Option { return func(a *App) { a.info.Title = title } }

// WithInstructions sets what initialize and server/discover tell the
// client about using the server.
func WithInstructions(s string) Option { return func(a *App) { a.instructions = s } }

// WithPageSize sets the page size of the list methods (default 50).
func WithPageSize(n int) Option { return func(a *App) { a.pager.PageSize = n } }

// cachePolicy says how long a client may keep a result.
type cachePolicy struct {
	scope string
	ttl   time.Duration
}

// WithCacheHint says how long a client may keep the results of a method
// (2026-07-28 cacheScope and ttlMs): scope "public" when the result is the
// same for every user, "private" otherwise. The method is a list
// (mcp.MethodListTools, mcp.MethodListPrompts, mcp.MethodListResources,
// mcp.MethodListResourceTemplates), mcp.MethodReadResource (for the
// results whose handler set none) or mcp.MethodDiscover. Without one a
// result is "private" and not to be cached (ttlMs 0), which is always
// correct. Revisions without the members drop them. Another scope, or a
// negative ttl, panics in New (a bug of the program).
func WithCacheHint(method, scope string, ttl time.Duration) Option {
	return func(a *App) {
		if scope != "public" && scope != "private" || ttl < 0 {
			panic(fmt.Sprintf("app: WithCacheHint(%q, %q, %v): the scope is \"public\" or \"private\", the ttl at least 0", method, scope, ttl))
		}
		if a.cache == nil {
			a.cache = map[string]cachePolicy{}
		}
		a.cache[method] = cachePolicy{scope: scope, ttl: ttl}
	}
}

// cacheHint is the scope and ttlMs of a list's result ("" and nil: the
// server's defaults).
func (a *App) cacheHint(method string) (string, *int64) {
	h, ok := a.cache[method]
	if !ok {
		return "", nil
	}
	ms := h.ttl.Milliseconds()
	return h.scope, &ms
}

// WithCapabilities adjusts the capabilities derived from what is
// registered, per call (initialize and server/discover): to declare an
// experimental capability, one that depends on the client (ctx carries
// its peer.Peer), or tools before any is registered, for a server whose
// tools arrive after clients have connected (they then hear of them
// through list_changed). Several run in order.
func WithCapabilities(adjust func(ctx context.Context, c *mcp.ServerCapabilities)) Option {
	return func(a *App) { a.adjust = append(a.adjust, adjust) }
}

// WithMiddleware wraps every tool call, resource read and prompt get, in
// order: the first is the outermost.
func WithMiddleware(mw ...Middleware) Option {
	return func(a *App) { a.middleware = append(a.middleware, mw...) }
}

// New returns an App named name at version.
func New(name, version string, opts ...Option) *App {
	a := &App{info: mcp.Implementation{Name: name, Version: version}}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Invocation is what a middleware sees of a call: the MCP method, what it
// names (the tool, the prompt, the resource URI), and its params (a
// *mcp.CallToolRequestParams, *mcp.ReadResourceRequestParams or
// *mcp.GetPromptRequestParams: arguments and _meta included).
type Invocation struct {
	Method string
	Name   string
	Params any
}

// Middleware wraps a call: it may refuse it (return a *wire.Error, which is
// the call's JSON-RPC error; any other error is -32603 and a log line),
// time it, log it, or look at its result (a *mcp.CallToolResult,
// *mcp.ReadResourceResult or *mcp.GetPromptResult), which next returns and
// it must return too.
type Middleware func(ctx context.Context, call Invocation, next func(context.Context) (any, error)) (any, error)

// wrap is fn under the middleware, the first outermost; fn itself when
// there is none, so that a call goes through no frame of the app's own
// (a panic is then the server core's to recover). Under middleware a
// panic of fn is recovered here, so that every middleware sees the -32603
// and what it does after next runs.
func (a *App) wrap(call Invocation, fn func(context.Context) (any, error)) func(context.Context) (any, error) {
	if len(a.middleware) == 0 {
		return fn
	}
	next := func(ctx context.Context) (res any, err error) {
		defer func() {
			if r := recover(); r != nil {
				a.logger().Error("app: handler panicked", "method", call.Method, "name", call.Name, "panic", r, "stack", string(debug.Stack()))
				res, err = nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
			}
		}()
		return fn(ctx)
	}
	for i := len(a.middleware) - 1; i >= 0; i-- {
		mw, inner := a.middleware[i], next
		next = func(ctx context.Context) (any, error) { return mw(ctx, call, inner) }
	}
	return next
}

func (a *App) capabilities(ctx context.Context) mcp.ServerCapabilities {
	c := a.registered()
	for _, adjust := range a.adjust {
		adjust(ctx, &c)
	}
	return c
}

func (a *App) registered() mcp.ServerCapabilities {
	yes := func() *bool { b := true; return &b }
	a.mu.RLock()
	defer a.mu.RUnlock()
	var c mcp.ServerCapabilities
	if a.tools.declared {
		c.Tools = &mcp.ServerCapabilitiesTools{ListChanged: yes()}
	}
	if a.resources.declared || a.templates.declared {
		c.Resources = &mcp.ServerCapabilitiesResources{ListChanged: yes(), Subscribe: yes()}
	}
	if a.prompts.declared {
		c.Prompts = &mcp.ServerCapabilitiesPrompts{ListChanged: yes()}
	}
	if a.completes() {
		c.Completions = mcp.JSONObject{}
	}
	if a.runsTasks() { // each revision keeps its own: the tasks capability (2025-11-25) or the extension (2026-07-28)
		c.Tasks = &mcp.ServerCapabilitiesTasks{List: map[string]any{}, Cancel: map[string]any{},
			Requests: &mcp.ServerCapabilitiesTasksRequests{Tools: &mcp.ServerCapabilitiesTasksRequestsTools{Call: map[string]any{}}}}
		c.Extensions = map[string]mcp.JSONObject{mcp.ExtensionTasks: {}}
	}
	c.Logging = mcp.JSONObject{}
	return c
}

// Initialize answers with the capabilities of what is registered; the
// server fills protocolVersion.
func (h handler) Initialize(ctx context.Context, _ *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	a := h.app
	return &mcp.InitializeResult{Capabilities: a.capabilities(ctx), ServerInfo: a.info, Instructions: a.instructions}, nil
}

// Discover (2026-07-28) describes the same server as initialize, speaking
// every revision mcpstack has.
func (h handler) Discover(ctx context.Context, _ *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	a := h.app
	info := a.info
	res := &mcp.DiscoverResult{Meta: &mcp.ResultMetaObject{ServerInfo: &info}, Capabilities: a.capabilities(ctx), Instructions: a.instructions,
		SupportedVersions: slices.Clone(mcp.Revisions)}
	if scope, ttl := a.cacheHint(mcp.MethodDiscover); ttl != nil {
		res.CacheScope, res.TTLMs = scope, *ttl
	}
	return res, nil
}

// registry is the items of one list, in registration order, and whether
// the list was ever used (its capability stays declared when it empties,
// so that clients keep listening for list_changed).
type registry[T interface{ key() string }] struct {
	items    []T
	declared bool
}

// put adds an item, or replaces the one with its key in place.
func (r *registry[T]) put(item T) {
	r.declared = true
	for i, it := range r.items {
		if it.key() == item.key() {
			r.items[i] = item
			return
		}
	}
	r.items = append(r.items, item)
}

// remove drops the items with these keys and reports whether any was.
func (r *registry[T]) remove(keys ...string) bool {
	n := len(r.items)
	for _, k := range keys {
		for i, it := range r.items {
			if it.key() == k {
				r.items = append(r.items[:i:i], r.items[i+1:]...)
				break
			}
		}
	}
	return len(r.items) != n
}

func (r *registry[T]) get(key string) (T, bool) {
	for _, it := range r.items {
		if it.key() == key {
			return it, true
		}
	}
	var zero T
	return zero, false
}

// page lists one page of a registry's definitions (def copies one, so
// that the caller may keep it).
func page[T interface{ key() string }, D any](a *App, r *registry[T], list string, p *mcp.PaginatedRequestParams, def func(T) *D) ([]*D, string, error) {
	a.mu.RLock()
	all := append([]T(nil), r.items...)
	a.mu.RUnlock()
	items, next, err := base.Paginate(a.pager, list, all, cursor(p))
	if err != nil {
		return nil, "", err
	}
	defs := make([]*D, len(items))
	for i, it := range items {
		defs[i] = def(it)
	}
	return defs, next, nil
}

// unknown is the -32602 of a name nothing is registered under; field is
// where the request names it.
func unknown(what, name, field string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "unknown %s %q", what, name)
	e.Data = map[string]any{"field": field, "reason": fmt.Sprintf("no %s named %q", what, name)}
	return e
}

func cursor(p *mcp.PaginatedRequestParams) string {
	if p == nil {
		return ""
	}
	return p.Cursor
}

// Registered reports whether name is registered for method: a tool for
// tools/call, a prompt for prompts/get. It bounds what observers make
// labels of (observe.WithNames) to what the app has, never the client's
// input.
func (a *App) Registered(method, name string) bool {
	a.mu.RLock()
	defer a.mu.RUnlock()
	switch method {
	case mcp.MethodCallTool:
		_, ok := a.tools.get(name)
		return ok
	case mcp.MethodGetPrompt:
		_, ok := a.prompts.get(name)
		return ok
	}
	return false
}
