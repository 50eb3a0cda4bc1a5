// Command hello is the smallest MCP server: one tool over stdio.
//
//	go run ./examples/hello
package main

import (
	"context"
	"log"

	"github.com/mcpstack/mcpstack/app"
)

type greeting struct {
	Name string `json:"name" jsonschema:"description=Who to greet,minLength=1"`
}

func main() {
	a := app.New("hello", "1.0.0")
	app.AddTool(a, app.Tool{Name: "greet", Description: "Says hello."}, func(_ context.Context, in greeting) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	if err := app.ServeStdio(context.Background(), a); err != nil {
		log.Fatal(err)
	}
}
