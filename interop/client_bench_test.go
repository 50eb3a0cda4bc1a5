package interop

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/methods/bench"
	gen "github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
)

// BenchmarkClientCall: one tools/call after another over Streamable HTTP
// against the same server (the bench profile's echo), by our client
// (which validates every message it receives against the negotiated
// revision's schema) and by the official go-sdk client, in one run:
//
//	go test -run '^$' -bench BenchmarkClientCall -benchtime 3s -count 3 ./interop/
//
// The figure to read is the ratio of the two ns/op.
func BenchmarkClientCall(b *testing.B) {
	srv := app.NewServer(bench.New())
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()
	url := hs.URL + "/mcp"
	ctx := context.Background()

	b.Run("mcpstack", func(b *testing.B) {
		s, err := client.New("bench", "1", client.WithProtocolVersion("2025-11-25")).Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		params := &gen.CallToolRequestParams{Name: bench.ToolEcho, Arguments: map[string]any{"text": "hello"}}
		b.ResetTimer()
		for range b.N {
			if _, err := s.CallTool(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-sdk", func(b *testing.B) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		params := &mcp.CallToolParams{Name: bench.ToolEcho, Arguments: map[string]any{"text": "hello"}}
		b.ResetTimer()
		for range b.N {
			if _, err := cs.CallTool(ctx, params); err != nil {
				b.Fatal(err)
			}
		}
	})
}
