package observe_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
)

// discard is a span exporter that drops what it is given.
type discard struct{}

func (discard) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discard) Shutdown(context.Context) error                             { return nil }

// variant is a server configuration the benchmark measures.
type variant struct {
	name string
	opts func() []server.Option
}

// session opens an initialized 2025-11-25 session of a server with opts.
func session(b *testing.B, opts ...server.Option) (*server.Server, *core.Session) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), opts...)
	sess, err := core.Of(srv).NewSession("bench", nil, core.Transport("streamable"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`), nil)
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	return srv, sess
}

// callsPerSecond serves tools/call test_simple_text on sess for d and
// returns the rate.
func callsPerSecond(sess *core.Session, bodies [][]byte, d time.Duration) float64 {
	ctx := context.Background()
	n, start := 0, time.Now()
	for time.Since(start) < d {
		for range 64 {
			sess.Handle(ctx, bodies[n%len(bodies)], nil)
			n++
		}
	}
	return float64(n) / time.Since(start).Seconds()
}

// variants are the configurations BenchmarkObserver compares: both off,
// metrics on (tracing off), metrics and the access line (serve's
// defaults), metrics and tracing on (every span sampled, exported to a
// discarding exporter).
func variants() []variant {
	f := conformance.New(conformance.WithStepDelay(0))
	return []variant{
		{"off", func() []server.Option { return nil }},
		{"metrics", func() []server.Option {
			return []server.Option{server.WithObserver(observe.New(observe.WithNames(f.Registered)))}
		}},
		{"metrics+access", func() []server.Option { // mcpstack serve's defaults: the access line too
			log := slog.New(slog.NewTextHandler(io.Discard, nil))
			return []server.Option{server.WithObserver(observe.New(observe.WithNames(f.Registered), observe.WithLogger(log)))}
		}},
		{"metrics+tracing", func() []server.Option {
			tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discard{}), sdktrace.WithSampler(sdktrace.AlwaysSample()))
			return []server.Option{server.WithObserver(observe.New(observe.WithNames(f.Registered), observe.WithTracerProvider(tp)))}
		}},
	}
}

// compare runs measure for each variant in turn, rounds times (every
// other round in reverse order, so that a drift of the machine cancels),
// and reports each variant's calls/s and the median over the rounds of
// its ratio to the first one's.
func compare(b *testing.B, names []string, rounds int, measure []func() float64) {
	ratios := make([][]float64, len(measure))
	sums := make([]float64, len(measure))
	for b.Loop() {
		for r := range rounds {
			rate := make([]float64, len(measure))
			for k := range measure {
				i := k
				if r%2 == 1 {
					i = len(measure) - 1 - k
				}
				rate[i] = measure[i]()
				sums[i] += rate[i]
			}
			for i := range measure {
				ratios[i] = append(ratios[i], rate[i]/rate[0])
			}
		}
	}
	for i, name := range names {
		b.ReportMetric(sums[i]/float64(len(ratios[i])), name+"-calls/s")
		if i > 0 {
			sort.Float64s(ratios[i])
			b.ReportMetric(ratios[i][len(ratios[i])/2], name+"-x-off")
		}
	}
}

// BenchmarkObserver measures what observing costs in the core: calls/s of
// a tools/call served in process (the strictest case: nothing else costs
// anything), each variant's as a ratio of both off (make bench-observe).
// Ratios, not times: the machine's speed cancels out.
func BenchmarkObserver(b *testing.B) {
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"test_simple_text","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`, i+1))
	}
	var names []string
	var measure []func() float64
	for _, v := range variants() {
		srv, sess := session(b, v.opts()...)
		defer srv.Close()
		callsPerSecond(sess, bodies, 100*time.Millisecond) // warm up
		names = append(names, v.name)
		measure = append(measure, func() float64 { return callsPerSecond(sess, bodies, 200*time.Millisecond) })
	}
	compare(b, names, 30, measure)
}

// BenchmarkObserverHTTP is BenchmarkObserver over Streamable HTTP, as
// mcpstack serve serves it (the observer's HTTP middleware on): one
// stateless 2026-07-28 tools/call per POST, on a kept-alive connection.
func BenchmarkObserverHTTP(b *testing.B) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_simple_text","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
	var names []string
	var measure []func() float64
	for _, v := range variants() {
		opts := v.opts()
		srv := server.New(conformance.New(conformance.WithStepDelay(0)), opts...)
		defer srv.Close()
		var hopts []mcphttp.Option
		if len(opts) > 0 {
			hopts = append(hopts, mcphttp.WithObserver(observe.New()))
		}
		h, shutdown := mcphttp.Handler(srv, append(hopts, mcphttp.WithResponseMode(mcphttp.ResponseJSON))...)
		hs := httptest.NewServer(h)
		defer func() { shutdown(context.Background()); hs.Close() }()
		hc := hs.Client()
		post := func() {
			req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
			req.Header.Set("Mcp-Name", "test_simple_text")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		rate := func(d time.Duration) float64 {
			n, start := 0, time.Now()
			for time.Since(start) < d {
				post()
				n++
			}
			return float64(n) / time.Since(start).Seconds()
		}
		rate(100 * time.Millisecond)
		names = append(names, v.name)
		measure = append(measure, func() float64 { return rate(200 * time.Millisecond) })
	}
	compare(b, names, 30, measure)
}
