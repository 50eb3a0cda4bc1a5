package observe_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
)

// stream keeps what the server sends a session unasked.
type stream struct {
	mu   sync.Mutex
	msgs []map[string]any
}

func (s *stream) Send(b []byte) error {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	s.mu.Unlock()
	return nil
}

func (s *stream) await(t *testing.T, method string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		for _, m := range s.msgs {
			if m["method"] == method {
				s.mu.Unlock()
				return m
			}
		}
		s.mu.Unlock()
	}
	t.Fatalf("no %s sent", method)
	return nil
}

const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func setup(t *testing.T) (*server.Server, *observe.Observer, *tracetest.SpanRecorder) {
	t.Helper()
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	f := conformance.New(conformance.WithStepDelay(0))
	o := observe.New(observe.WithTracerProvider(tp), observe.WithNames(f.Registered))
	srv := server.New(f, server.WithObserver(o))
	t.Cleanup(srv.Close)
	o.Watch(srv)
	return srv, o, spans
}

// span finds the one ended span named name.
func span(t *testing.T, spans *tracetest.SpanRecorder, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range spans.Ended() {
		if s.Name() == name {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		var names []string
		for _, s := range spans.Ended() {
			names = append(names, s.Name())
		}
		t.Fatalf("%d spans named %q among %v, want 1", len(found), name, names)
	}
	return found[0]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	out := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		out[kv.Key] = kv.Value.Emit()
	}
	return out
}

// metric reads one sample of the Prometheus text the Observer serves.
func metric(t *testing.T, o *observe.Observer, name string, labels map[string]string) float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	o.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	fam := families[name]
	if fam == nil {
		t.Fatalf("no metric %s", name)
	}
next:
	for _, m := range fam.GetMetric() {
		got := map[string]string{}
		for _, l := range m.GetLabel() {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range labels {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.GetHistogram() != nil:
			return float64(m.GetHistogram().GetSampleCount())
		case m.GetCounter() != nil:
			return m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func TestSessionSpansAndMetrics(t *testing.T) {
	srv, o, spans := setup(t)
	out := &stream{}
	sess, err := core.Of(srv).NewSession("s-1", out, core.Transport("streamable"))
	if err != nil {
		t.Fatal(err)
	}
	call := func(id int, method, params string) map[string]any {
		var m map[string]any
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params)
		_ = json.Unmarshal(sess.Handle(context.Background(), []byte(body), nil), &m)
		return m
	}
	call(1, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}`)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	if open := metric(t, o, "mcpstack_sessions_open", nil); open != 1 {
		t.Errorf("sessions open %v, want 1", open)
	}

	// A tool call, its parent from params._meta.
	call(2, "tools/call", `{"name":"test_simple_text","_meta":{"traceparent":"`+parent+`"}}`)
	s := span(t, spans, "tools/call test_simple_text")
	a := attrs(s)
	if s.SpanKind() != trace.SpanKindServer || s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Errorf("tools/call span: kind %v, parent %v, want a server span under the _meta traceparent", s.SpanKind(), s.Parent())
	}
	for k, want := range map[attribute.Key]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "test_simple_text", "gen_ai.operation.name": "execute_tool",
		"jsonrpc.request.id": "2", "mcp.protocol.version": "2025-11-25", "mcp.session.id": digest("s-1"), "network.transport": "tcp", "jsonrpc.protocol.version": "2.0"} {
		if a[k] != want {
			t.Errorf("tools/call span %s = %q, want %q", k, a[k], want)
		}
	}
	if _, has := a["error.type"]; has {
		t.Errorf("a successful call has error.type %q", a["error.type"])
	}

	// A tool error; a validation refusal; an unregistered tool (no label
	// of it); a notification.
	call(3, "tools/call", `{"name":"test_error_handling"}`)
	if a := attrs(span(t, spans, "tools/call test_error_handling")); a["error.type"] != "tool_error" {
		t.Errorf("tool error: error.type %q, want tool_error", a["error.type"])
	}
	call(4, "tools/call", `{"arguments":{}}`)
	if a := attrs(span(t, spans, "tools/call")); a["error.type"] != "-32602" || a["rpc.response.status_code"] != "-32602" {
		t.Errorf("refused call: %v, want error.type -32602", a)
	}
	call(5, "tools/call", `{"name":"no_such_tool_`+strings.Repeat("x", 8)+`"}`)
	if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"gen_ai_tool_name": "_OTHER", "error_type": "-32602"}); n != 1 {
		t.Errorf("an unknown tool is counted %v times under _OTHER, want 1", n)
	}
	if n := metric(t, o, "mcpstack_messages_refused_total", map[string]string{"definition": "CallToolRequest", "reason": "required", "mcp_protocol_version": "2025-11-25"}); n != 1 {
		t.Errorf("refusals %v, want 1 of CallToolRequest for a required member", n)
	}
	if s := span(t, spans, "notifications/initialized"); s.SpanKind() != trace.SpanKindServer {
		t.Errorf("notification span kind %v", s.SpanKind())
	}
	for _, c := range []struct {
		tool, errType string
		want          float64
	}{{"test_simple_text", "", 1}, {"test_error_handling", "tool_error", 1}} {
		if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": c.tool, "error_type": c.errType, "network_transport": "tcp"}); n != c.want {
			t.Errorf("%s calls counted %v, want %v", c.tool, n, c.want)
		}
	}

	// A sampling round trip: the server's request to the client is a
	// client span under the call's, and carries its trace context.
	done := make(chan map[string]any, 1)
	go func() { done <- call(6, "tools/call", `{"name":"test_sampling","arguments":{"prompt":"2+2?"}}`) }()
	req := out.await(t, "sampling/createMessage")
	meta, _ := req["params"].(map[string]any)["_meta"].(map[string]any)
	answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"role":"assistant","content":{"type":"text","text":"4"},"model":"m"}}`, req["id"])
	sess.Handle(context.Background(), []byte(answer), nil)
	<-done
	toolSpan, ask := span(t, spans, "tools/call test_sampling"), span(t, spans, "sampling/createMessage")
	if ask.SpanKind() != trace.SpanKindClient || ask.Parent().SpanID() != toolSpan.SpanContext().SpanID() {
		t.Errorf("sampling span: kind %v parent %v, want a client span under the tool call's", ask.SpanKind(), ask.Parent())
	}
	if tp, _ := meta["traceparent"].(string); !strings.Contains(tp, ask.SpanContext().SpanID().String()) {
		t.Errorf("the sampling request's _meta %v does not carry its span", meta)
	}

	sess.Close()
	if n := metric(t, o, "mcp_server_session_duration_seconds", map[string]string{"mcp_protocol_version": "2025-11-25", "network_transport": "tcp"}); n != 1 {
		t.Errorf("session durations %v, want 1", n)
	}
}

// A stateless 2026-07-28 call: no session id, the revision from _meta.
func TestStatelessSpan(t *testing.T) {
	srv, o, spans := setup(t)
	body := `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"` + parent + `"}}}`
	core.Of(srv).ServeStateless(context.Background(), core.Of(srv).Parse([]byte(body)), nil, nil)
	s := span(t, spans, "tools/call greet")
	a := attrs(s)
	if _, has := a["mcp.session.id"]; has || a["mcp.protocol.version"] != "2026-07-28" || a["jsonrpc.request.id"] != "a" || s.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Errorf("stateless span %s: %v, parent %v", s.Name(), a, s.Parent())
	}
	if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"mcp_protocol_version": "2026-07-28", "gen_ai_tool_name": "greet"}); n != 1 {
		t.Errorf("stateless call counted %v, want 1", n)
	}
}

// Our client's span of a call is the parent of the server's: the client
// carries its trace context in params._meta, over Streamable HTTP.
func TestClientSpanIsTheParent(t *testing.T) {
	srv, o, serverSpans := setup(t)
	// SSE answers: the call's events are kept for resumption, and counted.
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithObserver(o), mcphttp.WithResponseMode(mcphttp.ResponseSSE))
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close() }()
	clientSpans := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	c := client.New("traced", "1", client.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(clientSpans))),
		client.WithMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := c.Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "test_error_handling"}); err != nil {
		t.Fatal(err)
	}
	cs, ss := span(t, clientSpans, "tools/call test_error_handling"), span(t, serverSpans, "tools/call test_error_handling")
	if cs.SpanKind() != trace.SpanKindClient || attrs(cs)["error.type"] != "tool_error" {
		t.Errorf("client span: kind %v, %v", cs.SpanKind(), attrs(cs))
	}
	if ss.Parent().SpanID() != cs.SpanContext().SpanID() || ss.SpanContext().TraceID() != cs.SpanContext().TraceID() {
		t.Errorf("server span's parent %v, want the client's span %v", ss.Parent(), cs.SpanContext())
	}
	if attrs(cs)["mcp.session.id"] == "" || attrs(cs)["mcp.session.id"] != attrs(ss)["mcp.session.id"] {
		t.Errorf("session ids: client %q, server %q", attrs(cs)["mcp.session.id"], attrs(ss)["mcp.session.id"])
	}
	if n := metric(t, o, "mcpstack_http_responses_total", map[string]string{"code": "200"}); n < 2 {
		t.Errorf("HTTP answers counted %v, want the initialize and the call at least", n)
	}
	if n := metric(t, o, "mcpstack_sse_event_bytes", nil); n <= 0 {
		t.Errorf("event bytes kept %v, want the call's event stream's", n)
	}
	metric(t, o, "mcpstack_sse_streams_open", nil) // served
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var toolErrors uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == "mcp.client.operation.duration" {
				for _, dp := range h.DataPoints {
					if v, _ := dp.Attributes.Value("error.type"); v.AsString() == "tool_error" {
						toolErrors += dp.Count
					}
				}
			}
		}
	}
	if toolErrors != 1 {
		t.Errorf("the client recorded %d tool errors in mcp.client.operation.duration, want 1", toolErrors)
	}
}

// A handler's calls to its store or model are child spans of the request
// and count by kind, operation and outcome.
func TestDependency(t *testing.T) {
	_, o, spans := setup(t)
	ctx, parentSpan := sdktrace.NewTracerProvider().Tracer("t").Start(context.Background(), "request")
	_, end := o.Dependency(ctx, "store", "get")
	end(nil)
	_, end = o.Dependency(ctx, "model", "openai")
	end(errors.New("503"))
	parentSpan.End()
	if s := span(t, spans, "store get"); s.Parent().SpanID() != parentSpan.SpanContext().SpanID() {
		t.Errorf("store span's parent %v, want the request's", s.Parent())
	}
	if a := attrs(span(t, spans, "model openai")); a["error.type"] != "error" {
		t.Errorf("failed model call: %v", a)
	}
	for _, c := range []struct{ kind, op, outcome string }{{"store", "get", "ok"}, {"model", "openai", "error"}} {
		if n := metric(t, o, "mcpstack_dependency_duration_seconds", map[string]string{"kind": c.kind, "operation": c.op, "outcome": c.outcome}); n != 1 {
			t.Errorf("%s %s %s counted %v, want 1", c.kind, c.op, c.outcome, n)
		}
	}
}

// The Grafana dashboard of deploy/ asks only for metrics the Observer
// serves.
func TestDashboardMetrics(t *testing.T) {
	raw, err := os.ReadFile("../deploy/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	srv, o, _ := setup(t)
	_, shutdown := mcphttp.Handler(srv, mcphttp.WithObserver(o)) // the HTTP transports' own metrics
	defer shutdown(context.Background())
	sess, _ := core.Of(srv).NewSession("d", nil, core.Transport("streamable"))
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`), nil) // refused
	sess.Close()
	_, end := o.Dependency(context.Background(), "store", "get")
	end(nil)
	h := o.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
	rec := httptest.NewRecorder()
	o.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	served := rec.Body.String()
	names := regexp.MustCompile(`\b(mcp|mcpstack)_[a-z_]+?(_bucket|_count|_total|_open|_in_flight)\b`).FindAllString(string(raw), -1)
	if len(names) < 8 {
		t.Fatalf("the dashboard names only %v", names)
	}
	for _, n := range names {
		if !strings.Contains(served, "\n"+n) && !strings.HasPrefix(served, n) {
			t.Errorf("the dashboard asks for %s, which /metrics does not serve", n)
		}
	}
	if n := metric(t, o, "mcpstack_auth_failures_total", map[string]string{"reason": "invalid_token"}); n != 1 {
		t.Errorf("auth failures %v, want 1 invalid_token", n)
	}
}

// What a client sends cannot make new label values: an unknown method or
// revision is _OTHER; a request refused before it is served (the
// connection too busy) is counted too.
func TestLabelsStayBounded(t *testing.T) {
	srv, o, _ := setup(t)
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"made/up/method-1","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-made-up","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	} {
		core.Of(srv).ServeStateless(context.Background(), core.Of(srv).Parse([]byte(body)), nil, nil)
	}
	if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "_OTHER", "mcp_protocol_version": "2026-07-28", "error_type": "-32601"}); n != 1 {
		t.Errorf("an unknown method counted %v times as _OTHER, want 1", n)
	}
	if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/list", "mcp_protocol_version": "_OTHER"}); n != 1 {
		t.Errorf("an unknown revision counted %v times as _OTHER, want 1", n)
	}
	sess, _ := core.Of(srv).NewSession("busy", nil, core.Transport("streamable"))
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.ServeBusy(context.Background(), core.Of(srv).Parse([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)), nil)
	if n := metric(t, o, "mcp_server_operation_duration_seconds", map[string]string{"mcp_method_name": "tools/list", "error_type": "-32000", "mcp_protocol_version": "2025-11-25"}); n != 1 {
		t.Errorf("a request refused as busy counted %v times, want 1", n)
	}
}

// What a client chose is bounded in spans, and a session id stays out of
// the info-level access line (the regressions: a 1 MiB tool name went
// into a span whole; the access line printed session=<Mcp-Session-Id>).
func TestClientStringsAreBounded(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	log, logs := textLog()
	f := conformance.New(conformance.WithStepDelay(0))
	o := observe.New(observe.WithTracerProvider(tp), observe.WithNames(f.Registered), observe.WithLogger(log))
	srv := server.New(f, server.WithObserver(o))
	t.Cleanup(srv.Close)
	const id = "secret-session-0123456789"
	sess, err := core.Of(srv).NewSession(id, &stream{}, core.Transport("streamable"))
	if err != nil {
		t.Fatal(err)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	long := strings.Repeat("x", 1<<20)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":"`+long+`","method":"tools/call","params":{"name":"`+long+`"}}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"`+long+`"}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/`+long+`"}`), nil)
	if len(spans.Ended()) < 4 {
		t.Errorf("%d spans, want one per message", len(spans.Ended()))
	}

	for _, s := range spans.Ended() {
		if len(s.Name()) > 256 {
			t.Errorf("a span named with %d bytes, want a known method or _OTHER", len(s.Name()))
		}
		for _, kv := range s.Attributes() {
			if kv.Key == "mcp.session.id" && kv.Value.Emit() != digest(id) {
				t.Errorf("span %q names the session %q, want its digest", s.Name(), kv.Value.Emit())
			}
			if n := len(kv.Value.Emit()); n > 1024 {
				t.Errorf("span %q attribute %s holds %d bytes, want at most 1024", s.Name(), kv.Key, n)
			}
		}
	}
	text := logs()
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 2048 {
			t.Errorf("a log line of %d bytes, want at most 2048: %.200s", len(line), line)
		}
	}
	if strings.Contains(text, id) {
		t.Errorf("the info-level log names the session id:\n%.500s", text)
	}
	if !strings.Contains(text, "session="+digest(id)) {
		t.Errorf("the access line has no session digest:\n%.500s", text)
	}
}

// textLog is a text logger at info whose lines logs returns, safe for
// the server's goroutines.
func textLog() (log *slog.Logger, logs func() string) {
	var b strings.Builder
	var mu sync.Mutex
	log = slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return b.Write(p)
	}), nil))
	return log, func() string {
		mu.Lock()
		defer mu.Unlock()
		return b.String()
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// digest is the digest of a session id that logs and spans carry.
func digest(id string) string { return sessionid.Digest(id) }

// WithRegisterer(nil) counts no metrics (Metrics serves 404) and keeps the
// access log, with nothing on the request path that needs them.
func TestWithoutMetrics(t *testing.T) {
	log, logs := textLog()
	o := observe.New(observe.WithRegisterer(nil), observe.WithLogger(log))
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithObserver(o))
	t.Cleanup(srv.Close)
	o.Watch(srv)
	sess, err := core.Of(srv).NewSession("s1", &stream{}, core.Transport("streamable"))
	if err != nil {
		t.Fatal(err)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), nil)
	sess.Close()
	rec := httptest.NewRecorder()
	o.Middleware(o.Metrics()).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /metrics without metrics: %d, want 404", rec.Code)
	}
	if text := logs(); !strings.Contains(text, "method=ping id=2") {
		t.Errorf("no access line for the ping:\n%s", text)
	}
}

// A session's duration is observed once, when it ends everywhere: a
// replica whose copy of a session idles out, or stops, while the session
// lives on at another one saw it end as well.
func TestSessionDurationOnceEverywhere(t *testing.T) {
	o := observe.New()
	labels := map[string]string{"mcp_protocol_version": "2025-11-25", "network_transport": "tcp"}
	o.SessionEnded(server.EndedSession{ID: "s", Revision: "2025-11-25", Transport: "streamable", Lasted: time.Hour, Everywhere: true})
	if n := metric(t, o, "mcp_server_session_duration_seconds", labels); n != 1 {
		t.Errorf("the session's end counted %v durations, want 1", n)
	}
	o.SessionEnded(server.EndedSession{ID: "t", Revision: "2025-11-25", Transport: "streamable", Lasted: time.Minute})
	if n := metric(t, o, "mcp_server_session_duration_seconds", labels); n != 1 {
		t.Errorf("a copy's end counted too: %v durations, want 1", n)
	}
}
