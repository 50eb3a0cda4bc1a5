package app_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
)

// A typed tool: its input and output schemas come from the Go types and
// their tags; the arguments are validated before the handler runs.
func ExampleAddTool() {
	type in struct {
		City string `json:"city" jsonschema:"minLength=1"`
		Days int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7,default=3"`
	}
	type out struct {
		Summary string `json:"summary"`
	}
	a := app.New("weather", "1.0.0")
	app.AddTool(a, app.Tool{Name: "forecast", Description: "The weather for the next days."},
		func(_ context.Context, in in) (out, error) {
			return out{Summary: fmt.Sprintf("%d sunny days in %s", in.Days, in.City)}, nil
		})

	for _, args := range []map[string]any{{"city": "Oslo"}, {"city": "Oslo", "days": 9}} {
		res, _ := a.Handler().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "forecast", Arguments: args})
		fmt.Println(res.IsError != nil && *res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false {"summary":"3 sunny days in Oslo"}
	// true Invalid arguments: at /days: maximum: got 9, want at most 7
}

// A resource template: the handler gets the variables the URI gave it, and
// completion/complete offers values for them.
func ExampleApp_AddResourceTemplate() {
	a := app.New("notes", "1.0.0")
	a.AddResourceTemplate(app.ResourceTemplate{URITemplate: "note://{id}", MIMEType: "text/plain",
		Complete: map[string]app.Completer{"id": app.Prefixed("groceries", "garden")}},
		func(_ context.Context, uri string, vars map[string]string) (*mcp.ReadResourceResult, error) {
			return app.Text(uri, "text/plain", "the note "+vars["id"]), nil
		})

	res, _ := a.Handler().ReadResource(context.Background(), &mcp.ReadResourceRequestParams{URI: "note://garden"})
	fmt.Println(res.Contents[0].(*mcp.TextResourceContents).Text)
	c, _ := a.Handler().Complete(context.Background(), &mcp.CompleteRequestParams{Ref: &mcp.ResourceTemplateReference{URI: "note://{id}"},
		Argument: mcp.CompleteRequestParamsArgument{Name: "id", Value: "g"}})
	fmt.Println(c.Completion.Values)
	// Output:
	// the note garden
	// [groceries garden]
}

// A prompt with typed arguments: required unless omitempty.
func ExampleAddPrompt() {
	type args struct {
		Topic string `json:"topic" jsonschema:"description=What to write about"`
		Tone  string `json:"tone,omitempty"`
	}
	a := app.New("writer", "1.0.0")
	app.AddPrompt(a, app.Prompt{Name: "essay"}, func(_ context.Context, in args) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Write about " + in.Topic}}}}, nil
	})

	list, _ := a.Handler().ListPrompts(context.Background(), nil)
	for _, arg := range list.Prompts[0].Arguments {
		fmt.Printf("%s (required: %v) %q\n", arg.Name, *arg.Required, arg.Description)
	}
	_, err := a.Handler().GetPrompt(context.Background(), &mcp.GetPromptRequestParams{Name: "essay"})
	fmt.Println(err)
	// Output:
	// topic (required: true) "What to write about"
	// tone (required: false) ""
	// jsonrpc error -32602: Invalid params: argument "topic": missing required argument
}

// Middleware around every call: logging, authorization, metrics.
func ExampleWithMiddleware() {
	timing := func(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
		start := time.Now()
		res, err := next(ctx)
		slog.Debug("mcp call", "method", call.Method, "name", call.Name, "took", time.Since(start), "err", err)
		return res, err
	}
	a := app.New("timed", "1.0.0", app.WithMiddleware(timing))
	app.AddTool(a, app.Tool{Name: "now"}, func(context.Context, struct{}) (string, error) { return "later", nil })
	res, _ := a.Handler().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "now"})
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output: later
}

// A server whose tools arrive after its clients have connected declares
// the capability up front, so that the clients listen for list_changed.
func ExampleWithCapabilities() {
	listChanged := true
	a := app.New("late", "1.0.0", app.WithCapabilities(func(_ context.Context, c *mcp.ServerCapabilities) {
		if c.Tools == nil { // none registered yet
			c.Tools = &mcp.ServerCapabilitiesTools{ListChanged: &listChanged}
		}
	}))
	res, _ := a.Handler().Initialize(context.Background(), &mcp.InitializeRequestParams{})
	fmt.Println("tools declared:", res.Capabilities.Tools != nil)
	// Output:
	// tools declared: true
}
