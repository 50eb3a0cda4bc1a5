// Command mcpgo-echo is the benchmark echo server built on
// github.com/mark3labs/mcp-go: one tool, echo {text}, answering one text
// content with the same text, over stateful Streamable HTTP or stdio.
//
// mcp-go answers a POSTed request with application/json unless the session
// has been upgraded to SSE (which it does itself when it sends a
// notification). With --response-mode sse every session is upgraded when
// its notifications/initialized arrives, so that every later response is an
// SSE stream. (Upgrading in an after-initialize hook would put the
// initialize result on an SSE stream without the Mcp-Session-Id header.)
package main

import (
	"context"
	"os"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpstack/mcpstack/internal/tools/bench/peers/internal/serve"
)

const name = "mcpgo-echo"

func newServer(sse bool) *server.MCPServer {
	s := server.NewMCPServer(name, "1", server.WithToolCapabilities(false))
	if sse {
		s.AddNotificationHandler(string(mcp.MethodNotificationInitialized), func(ctx context.Context, _ mcp.JSONRPCNotification) {
			if cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithStreamableHTTPConfig); ok {
				cs.UpgradeToSSEWhenReceiveNotification()
			}
		})
	}
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echo the text back as one text content."),
		mcp.WithString("text", mcp.Required(), mcp.Description("the text to echo")),
	), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText(text), nil
	})
	return s
}

func main() {
	o := serve.Parse(name, os.Args[1:])
	ctx, stop := serve.Context()
	defer stop()
	if o.Stdio {
		s := newServer(false)
		serve.Fatal(name, server.NewStdioServer(s).Listen(ctx, os.Stdin, os.Stdout))
		return
	}
	s := newServer(o.ResponseMode == "sse")
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	serve.Fatal(name, serve.ServeHTTP(ctx, o, h))
}
