// Command client is an example MCP client: it starts a server (the
// command after --), lists its tools and calls one, and says so when the
// server breaks the protocol: everything the server sends is checked
// against the schema of the revision they agreed on.
//
//	go run ./examples/client -- go run ./examples/weather
//	go run ./examples/client -tool forecast -args '{"city":"Oslo","days":2}' -- go run ./examples/weather
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
)

func main() {
	tool := flag.String("tool", "forecast", "the tool to call")
	args := flag.String("args", `{"city":"Paris"}`, "its arguments, as a JSON object")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: client [-tool NAME -args JSON] -- SERVER COMMAND...")
	}
	var arguments map[string]any
	if err := json.Unmarshal([]byte(*args), &arguments); err != nil {
		log.Fatalf("-args: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := client.New("example-client", "1.0.0",
		client.WithViolationHandler(func(v *client.Violation) { log.Printf("the server broke the protocol: %v", v) }))
	s, err := c.Connect(ctx, &client.Command{Cmd: exec.Command(flag.Arg(0), flag.Args()[1:]...)})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("%s %s, revision %s\n", s.ServerInfo().Name, s.ServerInfo().Version, s.Revision())
	for t, err := range s.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("tool %s: %s\n", t.Name, t.Description)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: *tool, Arguments: arguments})
	if err != nil {
		log.Fatal(err)
	}
	for _, block := range res.Content {
		if text, ok := block.(*mcp.TextContent); ok {
			fmt.Println(text.Text)
		}
	}
	if res.IsError != nil && *res.IsError {
		os.Exit(1)
	}
}
