package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/peer"
)

// The inputs a server asks for in one round are bounded: each runs one of
// the client's handlers (sampling may call a model), and the schema bounds
// them by nothing. A round within the bound is answered.
func TestInputsOfARoundAreBounded(t *testing.T) {
	a := app.New("asker", "1")
	type in struct {
		N int `json:"n"`
	}
	app.AddTool(a, app.Tool{Name: "ask"}, func(ctx context.Context, args in) (string, error) {
		inputs := map[string]peer.Input{}
		for i := range args.N {
			inputs[fmt.Sprint("roots-", i)] = peer.Input{Method: mcp.MethodListRoots, Params: &mcp.ListRootsRequestParams{}}
		}
		got, err := peer.Ask(ctx, inputs)
		return fmt.Sprint(len(got), " answers"), err
	})
	srv := app.NewServer(a)
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)

	var asked atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1", client.WithProtocolVersion("2026-07-28"), client.WithRoots(func(context.Context) ([]*mcp.Root, error) {
		asked.Add(1)
		return []*mcp.Root{{URI: "file:///tmp"}}, nil
	})).Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "ask", Arguments: map[string]any{"n": 32}}); err != nil || text(t, r) != "32 answers" {
		t.Fatalf("32 inputs: %v %v", r, err)
	}
	asked.Store(0)
	_, err = s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "ask", Arguments: map[string]any{"n": 1000}})
	if err == nil || !strings.Contains(err.Error(), "at most 32") || asked.Load() != 0 {
		t.Errorf("1,000 inputs in one round: %v, with %d handler calls; want an error naming the bound, and none", err, asked.Load())
	}
}
