package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
)

// Connect to a server over Streamable HTTP, list its tools and call one.
func ExampleClient_Connect() {
	// A server to talk to (any MCP server: its URL is all the client needs).
	a := app.New("hello", "1.0.0")
	app.AddTool(a, app.Tool{Name: "greet", Description: "Says hello."}, func(_ context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	srv := app.NewServer(a)
	defer srv.Close()
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer hs.Close()
	defer shutdown(context.Background())

	ctx := context.Background()
	s, err := client.New("example", "1.0.0").Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	for tool, err := range s.Tools(ctx) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("tool:", tool.Name)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tool: greet
	// Hello, Ada!
}

// A server that breaks the protocol: its tool has no inputSchema. The call
// fails with a *client.Violation saying where.
func ExampleViolation() {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     any    `json:"id"`
			Method string `json:"method"`
		}
		_ = jsonDecode(r, &msg)
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}`, msg.ID)
		case "tools/list":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%v,"result":{"tools":[{"name":"t"}]}}`, msg.ID)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer hs.Close()
	ctx := context.Background()
	s, err := client.New("example", "1.0.0").Connect(ctx, &client.StreamableHTTP{URL: hs.URL, NoListen: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	_, err = s.ListTools(ctx, nil)
	var v *client.Violation
	if errors.As(err, &v) {
		fmt.Println(v.Rule, v.Pointer)
	} else {
		fmt.Println("no violation:", err)
	}
	// Output: schema /result/tools/0/inputSchema
}

func jsonDecode(r *http.Request, v any) error { return json.NewDecoder(r.Body).Decode(v) }
