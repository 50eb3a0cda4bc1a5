// Command conformance-client is the client the official conformance suite
// drives in its client mode (`conformance client --command ... --scenario
// NAME`): it connects to the URL it is given with package client and does
// what the scenario in MCP_CONFORMANCE_SCENARIO expects. A scenario it
// does not know exits 2.
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
)

// scenarios are the core client scenarios of the suite.
var scenarios = map[string]func(ctx context.Context, s *client.Session) error{
	"initialize": func(ctx context.Context, s *client.Session) error {
		_, err := s.ListTools(ctx, nil)
		return err
	},
	"tools_call":                          callTool("add_numbers", map[string]any{"a": 5, "b": 3}),
	"elicitation-sep1034-client-defaults": callTool("test_client_elicitation_defaults", map[string]any{}),
	"sse-retry":                           callTool("test_reconnection", map[string]any{}),
}

// callTool lists the tools, checks that name is one, and calls it.
func callTool(name string, args map[string]any) func(context.Context, *client.Session) error {
	return func(ctx context.Context, s *client.Session) error {
		found := false
		for tool, err := range s.Tools(ctx) {
			if err != nil {
				return err
			}
			found = found || tool.Name == name
		}
		if !found {
			return fmt.Errorf("the server has no tool %q", name)
		}
		_, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: args})
		return err
	}
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance-client: ")
	if len(os.Args) != 2 {
		log.Print("usage: conformance-client URL (scenario in MCP_CONFORMANCE_SCENARIO)")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	run, ok := scenarios[name]
	if !ok {
		log.Printf("unknown scenario %q", name)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := client.New("mcpstack-conformance-client", "dev",
		// The defaults scenario checks that the server fills in what the
		// user left out: accept with nothing.
		client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}))
	s, err := c.Connect(ctx, &client.StreamableHTTP{URL: os.Args[1]})
	if err != nil {
		log.Fatalf("%s: %v", name, err)
	}
	defer s.Close()
	if err := run(ctx, s); err != nil {
		s.Close()
		log.Fatalf("%s: %v", name, err)
	}
}
