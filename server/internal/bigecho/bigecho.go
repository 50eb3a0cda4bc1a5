// Package bigecho is a handler for the transports' tests: bench.Echo with
// a tool whose answer is as large as asked, so that a test can make the
// server write more than a client takes.
package bigecho

import (
	"context"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/bench"
)

// ToolBig answers {"mib": n} with a text of n MiB.
const ToolBig = "big"

// Handler is bench.Echo with ToolBig.
type Handler struct{ bench.Echo }

// CallTool serves ToolBig, and echo as bench.Echo does.
func (h Handler) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if p.Name != ToolBig {
		return h.Echo.CallTool(ctx, p)
	}
	n, _ := p.Arguments["mib"].(float64)
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: strings.Repeat("x", int(n)<<20)}}}, nil
}
