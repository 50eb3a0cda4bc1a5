package server_test

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// A server with bounds of its own, over stdio: the client's arguments are
// validated against the tool's schema before the tool runs.
func ExampleNew() {
	a := app.New("greeter", "1.0.0")
	app.AddTool(a, app.Tool{Name: "greet"}, func(_ context.Context, in struct {
		Name string `json:"name" jsonschema:"minLength=1"`
	}) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	srv := server.New(a.Handler(), server.WithLimits(server.Limits{InflightPerSession: 16, Depth: 32}))
	defer srv.Close()

	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":""}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	_ = stdio.Serve(context.Background(), srv, strings.NewReader(in), &out)
	var answers []string
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if !strings.Contains(line, `"id":1,`) { // initialize's
			answers = append(answers, line)
		}
	}
	sort.Strings(answers) // calls run concurrently: their answers come in any order
	for _, line := range answers {
		fmt.Println(line)
	}
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"Hello, Ada!","type":"text"}]}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"Invalid arguments: at /name: minLength: got 0 characters, want at least 1","type":"text"}],"isError":true}}
}
