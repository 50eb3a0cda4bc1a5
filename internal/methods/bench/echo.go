// Package bench holds the app that `mcpstack bench` and the server
// benchmarks load: one cheap tool, so that what is measured is the stack
// (transport, framing, validation, dispatch) and not the method.
package bench

import (
	"context"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
)

// ToolEcho is the name of the one tool.
const ToolEcho = "echo"

type echoIn struct {
	Text string `json:"text"`
}

// echoSchema is written out rather than derived: other arguments are
// ignored, as the peers' echo servers ignore them.
var echoSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"text": map[string]any{"type": "string", "description": "The text to answer with."}},
	"required":   []any{"text"},
}

// New returns the app: the tool echo {text}, which answers its text
// unchanged (its arguments validated like any tool's). Serve it with
// app.NewServer, or a.Handler() with server.New.
func New() *app.App {
	yes, no := true, false
	a := app.New("mcpstack-bench", "dev")
	app.AddTool(a, app.Tool{
		Name:        ToolEcho,
		Description: "Answers the text it is given, unchanged.",
		InputSchema: echoSchema,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: &yes, IdempotentHint: &yes, OpenWorldHint: &no},
	}, func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	return a
}
