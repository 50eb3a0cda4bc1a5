package conformance

import (
	"context"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/wire"
)

// Resource URIs and the resource template, as the suite reads them.
const (
	URIStaticText    = "test://static-text"
	URIStaticBinary  = "test://static-binary"
	URIWatched       = "test://watched-resource"
	URITemplate      = "test://template/{id}/data"
	StaticText       = "This is the content of the static text resource."
	WatchedText      = "This resource is watched: subscribe to it for notifications/resources/updated."
	templatePrefix   = "test://template/"
	templateSuffix   = "/data"
	templateMIMEType = "application/json"
	templateArgument = "id"
	templateName     = "template-data"
)

type resource struct {
	def  mcp.Resource
	read func(uri string) mcp.ReadResourceResultContentsItem
}

var resources = []*resource{
	{def: mcp.Resource{URI: URIStaticText, Name: "static-text", Title: "Static text resource",
		Description: "A text resource with fixed content.", MIMEType: "text/plain"},
		read: func(uri string) mcp.ReadResourceResultContentsItem {
			return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: StaticText}
		}},
	{def: mcp.Resource{URI: URIStaticBinary, Name: "static-binary", Title: "Static binary resource",
		Description: "A binary resource: a 1x1 red PNG.", MIMEType: "image/png"},
		read: func(uri string) mcp.ReadResourceResultContentsItem {
			return &mcp.BlobResourceContents{URI: uri, MIMEType: "image/png", Blob: redPixelPNG}
		}},
	{def: mcp.Resource{URI: URIWatched, Name: "watched-resource", Title: "Watched resource",
		Description: "A resource clients can subscribe to.", MIMEType: "text/plain"},
		read: func(uri string) mcp.ReadResourceResultContentsItem {
			return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: WatchedText}
		}},
}

var templates = []*mcp.ResourceTemplate{{
	URITemplate: URITemplate, Name: templateName, Title: "Template data",
	Description: "Data for an id: test://template/{id}/data.", MIMEType: templateMIMEType,
}}

func resourceByURI(uri string) *resource {
	for _, r := range resources {
		if r.def.URI == uri {
			return r
		}
	}
	return nil
}

// templateID returns the {id} of a URI of the resource template.
func templateID(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, templatePrefix)
	if !ok {
		return "", false
	}
	id, ok := strings.CutSuffix(rest, templateSuffix)
	if !ok || id == "" || strings.Contains(id, "/") {
		return "", false
	}
	return id, true
}

func knownResource(uri string) bool {
	if resourceByURI(uri) != nil {
		return true
	}
	_, ok := templateID(uri)
	return ok
}

// ListResources lists the direct resources (not the template).
func (f *Fixtures) ListResources(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	page, next, err := base.Paginate(f.pager, "resources", resources, cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.Resource, len(page))
	for i, r := range page {
		d := r.def
		defs[i] = &d
	}
	scope, ttl := f.cache()
	return &mcp.ListResourcesResult{Resources: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// ListResourceTemplates lists test://template/{id}/data.
func (f *Fixtures) ListResourceTemplates(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	page, next, err := base.Paginate(f.pager, "resourceTemplates", templates, cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.ResourceTemplate, len(page))
	for i, t := range page {
		d := *t
		defs[i] = &d
	}
	scope, ttl := f.cache()
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// ReadResource reads a resource, or a URI of the template with its {id}
// substituted. Anything else is -32002 with data {uri}.
func (f *Fixtures) ReadResource(_ context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	var item mcp.ReadResourceResultContentsItem
	if r := resourceByURI(p.URI); r != nil {
		item = r.read(p.URI)
	} else if id, ok := templateID(p.URI); ok {
		body, err := wire.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
		if err != nil {
			return nil, err
		}
		item = &mcp.TextResourceContents{URI: p.URI, MIMEType: templateMIMEType, Text: string(body)}
	} else {
		return nil, resourceNotFound(p.URI)
	}
	scope, ttl := f.cache()
	return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{item}, CacheScope: scope, TTLMs: ttl}, nil
}

func resourceNotFound(uri string) *wire.Error {
	return &wire.Error{Code: wire.CodeResourceNotFound, Message: "Resource not found", Data: map[string]any{"uri": uri}}
}
