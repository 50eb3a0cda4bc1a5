// Command gosdk-echo is the benchmark echo server built on the official
// go-sdk (github.com/modelcontextprotocol/go-sdk): one tool, echo {text},
// answering one text content with the same text, over stateful Streamable
// HTTP (SSE or JSON responses) or stdio.
package main

import (
	"context"
	"net/http"
	"os"

	"github.com/mcpstack/mcpstack/internal/tools/bench/peers/internal/serve"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const name = "gosdk-echo"

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back as one text content."},
		func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

func main() {
	o := serve.Parse(name, os.Args[1:])
	ctx, stop := serve.Context()
	defer stop()
	s := newServer()
	if o.Stdio {
		serve.Fatal(name, s.Run(ctx, &mcp.StdioTransport{}))
		return
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{JSONResponse: o.ResponseMode == "json"})
	serve.Fatal(name, serve.ServeHTTP(ctx, o, h))
}
