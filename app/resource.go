package app

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Resource describes a resource at a fixed URI.
type Resource struct {
	URI         string
	Name        string
	Title       string
	Description string
	MIMEType    string
}

// readFunc reads a resource.
type readFunc = func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)

// ResourceTemplate describes resources whose URIs follow an RFC 6570
// template (conversation://{id}). Complete offers completions per variable
// (completion/complete with a ref/resource).
type ResourceTemplate struct {
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	Complete    map[string]Completer
}

// readTemplateFunc reads a resource of a template.
type readTemplateFunc = func(ctx context.Context, uri string, vars map[string]string) (*mcp.ReadResourceResult, error)

type resource struct {
	def  mcp.Resource
	read readFunc
}

func (r *resource) key() string { return r.def.URI }

type template struct {
	def      mcp.ResourceTemplate
	tmpl     *uritemplate.Template
	read     readTemplateFunc
	complete map[string]Completer
}

func (t *template) key() string { return t.def.URITemplate }

// AddResource registers a resource, replacing one at the same URI. h
// reads it; Text and Blob build the usual results. A *wire.Error is sent
// as it is (wire.ResourceNotFound: -32002); any other error is -32603
// (and logged).
func (a *App) AddResource(r Resource, h func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)) {
	if r.URI == "" {
		panic("app: a resource needs a URI")
	}
	name := r.Name
	if name == "" {
		name = r.URI
	}
	res := &resource{def: mcp.Resource{URI: r.URI, Name: name, Title: r.Title, Description: r.Description, MIMEType: r.MIMEType}, read: h}
	a.mu.Lock()
	a.resources.put(res)
	a.mu.Unlock()
	a.onChange(mcp.MethodResourceListChanged)
}

// AddResourceTemplate registers a template; it panics when the template is
// not RFC 6570 (a bug of the program). h reads a resource of the
// template: vars holds the values the URI gave the template's variables,
// percent-decoded ("a%2Fb" is "a/b": check a value before it names a
// file, filepath.IsLocal). A URI that several templates match is read by
// the first registered.
func (a *App) AddResourceTemplate(t ResourceTemplate, h func(ctx context.Context, uri string, vars map[string]string) (*mcp.ReadResourceResult, error)) {
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		panic(fmt.Sprintf("app: resource template %q: %v", t.URITemplate, err))
	}
	for name := range t.Complete {
		if !slices.Contains(tmpl.Varnames(), name) {
			panic(fmt.Sprintf("app: resource template %q: a completer for %q, which is not a variable", t.URITemplate, name))
		}
	}
	name := t.Name
	if name == "" {
		name = t.URITemplate
	}
	tt := &template{
		def:  mcp.ResourceTemplate{URITemplate: t.URITemplate, Name: name, Title: t.Title, Description: t.Description, MIMEType: t.MIMEType},
		tmpl: tmpl, read: h, complete: t.Complete,
	}
	a.mu.Lock()
	a.templates.put(tt)
	a.mu.Unlock()
	a.onChange(mcp.MethodResourceListChanged)
}

// RemoveResources unregisters resources (by URI) and templates (by
// template); the clients hear of it (list_changed).
func (a *App) RemoveResources(uris ...string) {
	a.mu.Lock()
	changed := a.resources.remove(uris...)
	changed = a.templates.remove(uris...) || changed
	a.mu.Unlock()
	if changed {
		a.onChange(mcp.MethodResourceListChanged)
	}
}

// ListResources lists the resources at fixed URIs, a page at a time.
func (h handler) ListResources(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	a := h.app
	defs, next, err := page(a, &a.resources, "resources", p, func(r *resource) *mcp.Resource { d := r.def; return &d })
	if err != nil {
		return nil, err
	}
	scope, ttl := a.cacheHint(mcp.MethodListResources)
	return &mcp.ListResourcesResult{Resources: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// ListResourceTemplates lists the templates, a page at a time.
func (h handler) ListResourceTemplates(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	a := h.app
	defs, next, err := page(a, &a.templates, "resourceTemplates", p, func(t *template) *mcp.ResourceTemplate { d := t.def; return &d })
	if err != nil {
		return nil, err
	}
	scope, ttl := a.cacheHint(mcp.MethodListResourceTemplates)
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// ReadResource reads the resource at a registered URI, or the first
// template the URI matches; anything else is -32002 (resource not found).
func (h handler) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	a := h.app
	a.mu.RLock()
	r, fixed := a.resources.get(p.URI)
	var t *template
	var vars map[string]string
	if !fixed {
		for _, tt := range a.templates.items {
			if m := tt.tmpl.Match(p.URI); m != nil {
				t, vars = tt, map[string]string{}
				for _, name := range tt.tmpl.Varnames() {
					if v := m.Get(name); v.Valid() {
						vars[name] = v.String()
					}
				}
				break
			}
		}
	}
	a.mu.RUnlock()
	if !fixed && t == nil {
		return nil, wire.ResourceNotFound(p.URI)
	}
	res, err := a.wrap(Invocation{Method: mcp.MethodReadResource, Name: p.URI, Params: p}, func(ctx context.Context) (any, error) {
		if fixed {
			return r.read(ctx, p.URI)
		}
		return t.read(ctx, p.URI, vars)
	})(ctx)
	if err != nil {
		return nil, err
	}
	out, _ := res.(*mcp.ReadResourceResult)
	if out == nil {
		a.logger().Error("app: resource handler returned no result", "uri", p.URI)
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	}
	if scope, ttl := a.cacheHint(mcp.MethodReadResource); ttl != nil && out.TTLMs == nil {
		out.CacheScope, out.TTLMs = scope, ttl
	}
	return out, nil
}

// Blob is the result of reading a binary resource (sent base64-encoded).
func Blob(uri, mimeType string, data []byte) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{&mcp.BlobResourceContents{URI: uri, MIMEType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}}}
}

// Text is the result of reading a text resource.
func Text(uri, mimeType, text string) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{&mcp.TextResourceContents{URI: uri, MIMEType: mimeType, Text: text}}}
}

// Subscribe accepts a subscription to a resource the app has (a
// registered URI or one a template matches; anything else is -32002). The
// server core keeps it for the session; ResourceUpdated reaches it.
func (h handler) Subscribe(_ context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	a := h.app
	a.mu.RLock()
	_, known := a.resources.get(p.URI)
	for _, t := range a.templates.items {
		known = known || t.tmpl.Match(p.URI) != nil
	}
	a.mu.RUnlock()
	if !known {
		return nil, wire.ResourceNotFound(p.URI)
	}
	return &mcp.EmptyResult{}, nil
}

// Unsubscribe ends a subscription (the server core forgets it); one that
// does not exist is not an error.
func (handler) Unsubscribe(context.Context, *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	return &mcp.EmptyResult{}, nil
}
