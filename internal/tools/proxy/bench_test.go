package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
)

// BenchmarkProxyLatency measures what the HTTP proxy adds to a call: the
// p50 of a stateless tools/call POST straight to the server and through
// the proxy (recording to a discarded file), in turns, in the same run
// (go test ./internal/tools/proxy -run '^$' -bench ProxyLatency -benchtime 1x).
func BenchmarkProxyLatency(b *testing.B) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)))
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithResponseMode(mcphttp.ResponseJSON))
	upstream := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); upstream.Close(); srv.Close() }()
	tp, _ := newTap(io.Discard, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	post := func(base string) time.Duration {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "test_simple_text"} {
			req.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return time.Since(start)
	}
	var direct, proxied []time.Duration
	for b.Loop() {
		for range 2000 {
			direct = append(direct, post(upstream.URL))
			proxied = append(proxied, post(front.URL))
		}
	}
	p50 := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	dp, pp := p50(direct), p50(proxied)
	b.ReportMetric(float64(dp.Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(pp.Microseconds()), "proxied-p50-µs")
	b.ReportMetric(float64((pp - dp).Microseconds()), "added-p50-µs")
}
