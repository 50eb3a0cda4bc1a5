// Command hello is the smallest MCP server: one tool over stdio.
//
//	go run ./examples/hello
package main

import (
	"context"
	"log"
	"os"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/server/stdio"
)

type greeting struct {
	Name string `json:"name" jsonschema:"description=Who to greet,minLength=1"`
}

func main() {
	a := app.New("hello", "1.0.0")
	app.AddTool(a, app.Tool{Name: "greet", Description: "Says hello."}, func(_ context.Context, in greeting) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	srv := app.NewServer(a)
	defer srv.Close()
	if err := stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout); err != nil {
		log.Print(err)
	}
}
