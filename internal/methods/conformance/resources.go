package conformance

import (
	"context"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
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
	templateMIMEType = "application/json"
	templateArgument = "id"
	templateName     = "template-data"
)

// addResources registers the three resources and the template.
func addResources(a *app.App) {
	text := func(body string) func(context.Context, string) (*mcp.ReadResourceResult, error) {
		return func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return app.Text(uri, "text/plain", body), nil
		}
	}
	a.AddResource(app.Resource{URI: URIStaticText, Name: "static-text", Title: "Static text resource",
		Description: "A text resource with fixed content.", MIMEType: "text/plain"}, text(StaticText))
	a.AddResource(app.Resource{URI: URIStaticBinary, Name: "static-binary", Title: "Static binary resource",
		Description: "A binary resource: a 1x1 red PNG.", MIMEType: "image/png"},
		func(_ context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ReadResourceResultContentsItem{
				&mcp.BlobResourceContents{URI: uri, MIMEType: "image/png", Blob: redPixelPNG()}}}, nil
		})
	a.AddResource(app.Resource{URI: URIWatched, Name: "watched-resource", Title: "Watched resource",
		Description: "A resource clients can subscribe to.", MIMEType: "text/plain"}, text(WatchedText))
	a.AddResourceTemplate(app.ResourceTemplate{URITemplate: URITemplate, Name: templateName, Title: "Template data",
		Description: "Data for an id: test://template/{id}/data.", MIMEType: templateMIMEType,
		Complete: map[string]app.Completer{templateArgument: app.Prefixed(templateCompletions...)}},
		func(_ context.Context, uri string, vars map[string]string) (*mcp.ReadResourceResult, error) {
			id := vars[templateArgument]
			if id == "" {
				return nil, wire.ResourceNotFound(uri)
			}
			body, err := jsontree.Marshal(map[string]any{"id": id, "templateTest": true, "data": "Data for ID: " + id})
			if err != nil {
				return nil, err
			}
			return app.Text(uri, templateMIMEType, string(body)), nil
		})
}

// templateCompletions are the candidates for {id} of the resource template.
var templateCompletions = []string{"1", "123", "2", "3"}
