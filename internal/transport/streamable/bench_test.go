package streamable_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
)

// benchCalls measures tools/call echo over real HTTP in one response mode;
// BenchmarkCallSSE reports its cost as a ratio to JSON answers.
func benchCalls(b *testing.B, mode streamable.ResponseMode) {
	srv := server.New(bench.New().Handler())
	h := streamable.New(srv, streamable.WithResponseMode(mode))
	ts := httptest.NewServer(h)
	defer func() { h.Shutdown(); ts.Close(); srv.Close() }()
	post := func(body, sid string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", ts.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp, string(out)
	}
	resp, _ := post(initBody, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	var ids atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call := `{"jsonrpc":"2.0","id":` + strconv.FormatInt(ids.Add(1), 10) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"0123456789012345678901234567890123456789012345678901234567890123"}}}`
			if _, body := post(call, sid); !strings.Contains(body, "0123456789") {
				b.Fatalf("answer %q", body)
			}
		}
	})
}

func BenchmarkCallSSE(b *testing.B)  { benchCalls(b, streamable.SSE) }
func BenchmarkCallJSON(b *testing.B) { benchCalls(b, streamable.JSON) }
