// Package bigecho is a handler for the transports' tests: the bench echo
// with a tool whose answer is as large as asked, so that a test can make
// the server write more than a client takes.
package bigecho

import (
	"context"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/mcp"
)

// ToolBig answers {"mib": n} with a text of n MiB.
const ToolBig = "big"

// New returns the bench echo with ToolBig.
func New() *app.App {
	a := bench.New()
	app.AddTool(a, app.Tool{Name: ToolBig}, func(_ context.Context, in struct {
		MiB int `json:"mib"`
	}) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: strings.Repeat("x", in.MiB<<20)}}}, nil
	})
	return a
}
