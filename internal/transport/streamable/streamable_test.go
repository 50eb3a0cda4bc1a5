package streamable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

type env struct {
	t   *testing.T
	url string
	srv *server.Server
}

func newEnv(t *testing.T, sopts []server.Option, opts ...streamable.Option) *env {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), append([]server.Option{server.WithStrict(true)}, sopts...)...)
	h := streamable.New(srv, opts...)
	mux := http.NewServeMux()
	mux.Handle("/mcp", guard.Loopback()(h))
	ts := httptest.NewServer(mux)
	t.Cleanup(func() {
		h.Shutdown()
		ts.Close()
		srv.Close()
	})
	return &env{t: t, url: ts.URL + "/mcp", srv: srv}
}

type req struct {
	method  string
	body    string
	headers map[string]string
}

func (e *env) do(r req) (*http.Response, string) {
	e.t.Helper()
	if r.method == "" {
		r.method = http.MethodPost
	}
	hr, err := http.NewRequest(r.method, e.url, strings.NewReader(r.body))
	if err != nil {
		e.t.Fatal(err)
	}
	if r.method == http.MethodPost {
		hr.Header.Set("Content-Type", "application/json")
		hr.Header.Set("Accept", "application/json, text/event-stream")
	}
	for k, v := range r.headers {
		if k == "Host" {
			hr.Host = v
			continue
		}
		if v == "" {
			hr.Header.Del(k)
		} else {
			hr.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// initialize opens a session and returns its id.
func (e *env) initialize() string {
	e.t.Helper()
	resp, body := e.do(req{body: initBody})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		e.t.Fatalf("initialize: %d %q sid %q", resp.StatusCode, body, sid)
	}
	return sid
}

func TestStatuses(t *testing.T) {
	e := newEnv(t, []server.Option{server.WithLimits(server.Limits{Sessions: 3})}, streamable.WithMaxBody(1024))
	sid := e.initialize()
	s := func(extra map[string]string) map[string]string {
		h := map[string]string{"Mcp-Session-Id": sid}
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	tests := []struct {
		name     string
		req      req
		status   int
		contains string
	}{
		{"request answered", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(nil)}, 200, `"result":{}`},
		{"notification accepted", req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: s(nil)}, 202, ""},
		{"client response accepted", req{body: `{"jsonrpc":"2.0","id":99,"result":{}}`, headers: s(nil)}, 202, ""},
		{"accept lacks event-stream", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Accept": "application/json"})}, 406, "Not Acceptable"},
		{"accept in other case, with parameters", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Accept": "Text/Event-Stream;q=0.9 , APPLICATION/JSON; charset=utf-8"})}, 200, `"result":{}`},
		{"accept */*", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Accept": "*/*"})}, 200, `"result":{}`},
		{"accept names a type that only starts alike", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Accept": "application/jsonx, text/event-stream"})}, 406, "Not Acceptable"},
		{"wrong content type", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Content-Type": "text/plain"})}, 415, "Unsupported Media Type"},
		{"body too large", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("a", 2000) + `"}}}`, headers: s(nil)}, 413, "Too Large"},
		{"not JSON", req{body: `{nope`, headers: s(nil)}, 400, `"code":-32700`},
		{"unsupported protocol version header", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"MCP-Protocol-Version": "1999-01-01"})}, 400, "unsupported MCP-Protocol-Version"},
		{"older supported version header", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"MCP-Protocol-Version": "2025-03-26"})}, 200, `"result":{}`},
		{"missing session", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, 400, "missing Mcp-Session-Id"},
		{"unknown session", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: map[string]string{"Mcp-Session-Id": "nope"}}, 404, "Session not found"},
		{"bad host", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Host": "evil.example.com"})}, 403, "Forbidden"},
		{"bad origin", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Origin": "http://evil.example.com"})}, 403, "Forbidden"},
		{"loopback origin", req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(map[string]string{"Origin": "http://localhost:3000"})}, 200, `"result":{}`},
		{"PUT not allowed", req{method: http.MethodPut, headers: s(nil)}, 405, "not allowed"},
		{"GET without event-stream", req{method: http.MethodGet, headers: s(map[string]string{"Accept": "application/json"})}, 406, "Not Acceptable"},
		{"invalid params keep HTTP 200", req{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}`, headers: s(nil)}, 200, `"field":"/params/name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(tt.req)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (body %q)", resp.StatusCode, tt.status, body)
			}
			if !strings.Contains(body, tt.contains) {
				t.Errorf("body %q lacks %q", body, tt.contains)
			}
		})
	}
	// The session cap: 3 sessions, one open; two more fit, the next is 503.
	e.initialize()
	e.initialize()
	if resp, body := e.do(req{body: initBody}); resp.StatusCode != 503 {
		t.Errorf("over the session cap: %d %q, want 503", resp.StatusCode, body)
	}
	// DELETE ends the session; then it is unknown.
	if resp, _ := e.do(req{method: http.MethodDelete, headers: s(nil)}); resp.StatusCode != 204 {
		t.Errorf("DELETE: %d, want 204", resp.StatusCode)
	}
	if resp, _ := e.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: s(nil)}); resp.StatusCode != 404 {
		t.Errorf("after DELETE: %d, want 404", resp.StatusCode)
	}
}

func TestSSEFraming(t *testing.T) {
	e := newEnv(t, nil)
	sid := e.initialize()
	resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":7}}}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := strings.Split(strings.TrimSpace(body), "\n\n")
	// priming event, 3 progress notifications, the response
	if len(events) != 5 {
		t.Fatalf("%d events, want 5:\n%s", len(events), body)
	}
	if !strings.HasPrefix(events[0], "id: ") || !strings.Contains(events[0], "retry: ") || !strings.HasSuffix(events[0], "data:") {
		t.Errorf("priming event %q", events[0])
	}
	ids := map[string]bool{}
	for i, ev := range events {
		id := strings.TrimPrefix(strings.SplitN(ev, "\n", 2)[0], "id: ")
		if ids[id] {
			t.Errorf("event id %q repeated", id)
		}
		ids[id] = true
		if i >= 1 && i <= 3 && !strings.Contains(ev, `"method":"notifications/progress"`) {
			t.Errorf("event %d is not progress: %q", i, ev)
		}
	}
	if !strings.Contains(events[4], `"id":"p","result"`) {
		t.Errorf("last event is not the response: %q", events[4])
	}
}

func TestJSONMode(t *testing.T) {
	e := newEnv(t, nil, streamable.WithResponseMode(streamable.JSON))
	sid := e.initialize()
	resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"ping"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" || body != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("%d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestGetStream: the GET stream carries messages not related to a request,
// and a second GET stream of the same session is refused.
func TestGetStream(t *testing.T) {
	e := newEnv(t, nil, streamable.WithKeepAlive(time.Hour))
	sid := e.initialize()
	e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
	hr.Header.Set("Accept", "text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	// wait until the stream is attached: a second GET is 409 then
	deadline := time.Now().Add(5 * time.Second)
	for {
		r2, _ := e.do(req{method: http.MethodGet, headers: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": sid}})
		if r2.StatusCode == 409 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("second GET: %d, want 409", r2.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sess, _ := core.Of(e.srv).Session(sid)
	if err := sess.Notify(context.Background(), "notifications/tools/list_changed", nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "notifications/tools/list_changed") {
			return
		}
	}
	t.Fatal("list_changed never arrived on the GET stream")
}

// TestStateless2026 checks the HTTP side of revision 2026-07-28: no session,
// headers that must agree with the body, and errors with their statuses.
func TestStateless2026(t *testing.T) {
	e := newEnv(t, nil, streamable.WithResponseMode(streamable.JSON))
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_simple_text",` + meta + `}}`
	good := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "test_simple_text"}
	with := func(k, v string) map[string]string {
		h := map[string]string{}
		for a, b := range good {
			h[a] = b
		}
		h[k] = v
		return h
	}
	tests := []struct {
		name     string
		body     string
		headers  map[string]string
		status   int
		contains string
	}{
		{"valid call", call, good, 200, `"resultType":"complete"`},
		{"header values trimmed", call, with("Mcp-Name", "  test_simple_text "), 200, `"resultType":"complete"`},
		{"missing Mcp-Name", call, with("Mcp-Name", ""), 400, `"code":-32020`},
		{"wrong Mcp-Method", call, with("Mcp-Method", "tools/list"), 400, `"code":-32020`},
		{"method case differs", call, with("Mcp-Method", "Tools/Call"), 400, `"code":-32020`},
		{"version header differs from _meta", call, with("MCP-Protocol-Version", "2025-11-25"), 400, `"code":-32020`},
		{"unsupported version", strings.Replace(call, `"2026-07-28"`, `"2099-01-01"`, 1), with("MCP-Protocol-Version", "2099-01-01"), 400, `"code":-32022`},
		{"no _meta", `{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{}}`, with("Mcp-Method", "tools/list"), 400, `"code":-32602`},
		{"removed method", `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}`, with("Mcp-Method", "initialize"), 404, `"code":-32601`},
		{"error keeps the id", `{"jsonrpc":"2.0","id":"abc","method":"ping","params":{` + meta + `}}`, with("Mcp-Method", "ping"), 404, `"id":"abc"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(req{body: tt.body, headers: tt.headers})
			if resp.StatusCode != tt.status || !strings.Contains(body, tt.contains) {
				t.Errorf("status %d body %q, want %d containing %q", resp.StatusCode, body, tt.status, tt.contains)
			}
		})
	}
}

// TestStatelessSessionRevisions: with WithStateless, session revisions are
// served without sessions, and what that loses fails clearly.
func TestStatelessSessionRevisions(t *testing.T) {
	e := newEnv(t, nil, streamable.WithStateless(true), streamable.WithResponseMode(streamable.JSON))
	resp, body := e.do(req{body: initBody})
	if resp.StatusCode != 200 || resp.Header.Get("Mcp-Session-Id") != "" || !strings.Contains(body, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %d sid %q %s", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
	}
	if e.srv.SessionCount() != 0 {
		t.Errorf("%d sessions kept", e.srv.SessionCount())
	}
	v := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	if resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}`, headers: v}); resp.StatusCode != 200 || !strings.Contains(body, "This is a simple text response") {
		t.Errorf("call without a session: %d %s", resp.StatusCode, body)
	}
	if resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"x"}}}`, headers: v}); resp.StatusCode != 200 || !strings.Contains(body, `"isError":true`) {
		t.Errorf("sampling without a session must fail clearly: %d %s", resp.StatusCode, body)
	}
	for _, m := range []string{"GET", "DELETE"} {
		if resp, _ := e.do(req{method: m, headers: map[string]string{"Accept": "text/event-stream"}}); resp.StatusCode != 405 {
			t.Errorf("%s: %d, want 405", m, resp.StatusCode)
		}
	}
	if resp, _ := e.do(req{body: `{"jsonrpc":"2.0","id":4,"method":"ping"}`, headers: map[string]string{"MCP-Protocol-Version": "1999-01-01"}}); resp.StatusCode != 400 {
		t.Errorf("unsupported version: %d, want 400", resp.StatusCode)
	}
}

// TestStatelessCallEndsWithItsRequest: a session revision served without
// a session has no stream to resume in, so a call whose client left is
// cancelled, not run to its end while it holds the client's slots.
func TestStatelessCallEndsWithItsRequest(t *testing.T) {
	for _, mode := range []streamable.ResponseMode{streamable.JSON, streamable.Auto} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			cancelled := make(chan struct{})
			a := app.New("stateless", "1")
			app.AddTool(a, app.Tool{Name: "wait"}, func(ctx context.Context, _ struct{}) (string, error) {
				<-ctx.Done()
				close(cancelled)
				return "", ctx.Err()
			})
			srv := app.NewServer(a)
			h := streamable.New(srv, streamable.WithStateless(true), streamable.WithResponseMode(mode))
			ts := httptest.NewServer(h)
			defer func() { srv.Close(); h.Shutdown(); ts.Close() }() // the server first: it ends a call that runs on
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			hr, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wait"}}`))
			hr.Header.Set("Content-Type", "application/json")
			hr.Header.Set("Accept", "application/json, text/event-stream")
			hr.Header.Set("MCP-Protocol-Version", "2025-06-18")
			if resp, err := http.DefaultClient.Do(hr); err == nil {
				resp.Body.Close()
			}
			select {
			case <-cancelled:
			case <-time.After(5 * time.Second):
				t.Fatal("the call still runs 5s after its client left")
			}
		})
	}
}

// TestForeignSession: a session another transport opened is unknown here.
func TestForeignSession(t *testing.T) {
	e := newEnv(t, nil)
	if _, err := core.Of(e.srv).NewSession("sse-session", nil, core.Transport("sse")); err != nil {
		t.Fatal(err)
	}
	if resp, _ := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, headers: map[string]string{"Mcp-Session-Id": "sse-session"}}); resp.StatusCode != 404 {
		t.Errorf("another transport's session: %d, want 404", resp.StatusCode)
	}
}

// TestAutoMode: by default a call is answered as JSON when it ends before
// sending anything else, and on a resumable event stream (priming event
// first) when it sends a message first or runs longer than a moment.
func TestAutoMode(t *testing.T) {
	a := app.New("auto", "1")
	app.AddTool(a, app.Tool{Name: "slow"}, func(context.Context, struct{}) (string, error) {
		time.Sleep(100 * time.Millisecond)
		return "done", nil
	})
	srv := app.NewServer(a)
	h := streamable.New(srv) // the default mode
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
	slow := &env{t: t, url: ts.URL, srv: srv}
	fixtures := newEnv(t, nil)

	for _, tc := range []struct {
		name        string
		e           *env
		body        string
		contentType string
		events      int    // of an event stream: the priming event and the messages
		last        string // what the answer holds
	}{
		{"quick call", fixtures, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, "application/json", 0, `{"jsonrpc":"2.0","id":2,"result":{}}`},
		{"progress first", fixtures, `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":7}}}`, "text/event-stream", 5, `"id":"p","result"`},
		{"slow call", slow, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","arguments":{}}}`, "text/event-stream", 2, `"id":3,"result"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sid := tc.e.initialize()
			tc.e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
			resp, body := tc.e.do(req{body: tc.body, headers: map[string]string{"Mcp-Session-Id": sid}})
			if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != tc.contentType {
				t.Fatalf("%d %q, want 200 %q: %q", resp.StatusCode, ct, tc.contentType, body)
			}
			if tc.events == 0 {
				if body != tc.last {
					t.Errorf("body %q, want %q", body, tc.last)
				}
				// The Date header is set by the handler (made once a second).
				if at, err := http.ParseTime(resp.Header.Get("Date")); err != nil || time.Since(at) > 2*time.Second || len(resp.Header.Values("Date")) != 1 {
					t.Errorf("Date %q (%v), want one of now", resp.Header.Values("Date"), err)
				}
				return
			}
			events := strings.Split(strings.TrimSpace(body), "\n\n")
			if len(events) != tc.events || !strings.HasPrefix(events[0], "id: ") || !strings.HasSuffix(events[0], "data:") {
				t.Fatalf("%d events, want %d starting with a priming event:\n%s", len(events), tc.events, body)
			}
			if !strings.Contains(events[len(events)-1], tc.last) {
				t.Errorf("last event %q lacks %q", events[len(events)-1], tc.last)
			}
		})
	}
}

// TestAutoModeEndsWithCredential: in auto mode a credential that expires
// while the call has sent nothing yet still ends the response once it
// streams (the regression: the expiry fired while the mode was being
// decided, and the stream then outlived it).
func TestAutoModeEndsWithCredential(t *testing.T) {
	for _, mode := range []streamable.ResponseMode{streamable.Auto, streamable.SSE} {
		t.Run(string(mode), func(t *testing.T) { endsWithCredential(t, mode) })
	}
}

func endsWithCredential(t *testing.T, mode streamable.ResponseMode) {
	a := app.New("late", "1")
	app.AddTool(a, app.Tool{Name: "late"}, func(ctx context.Context, _ struct{}) (string, error) {
		time.Sleep(50 * time.Millisecond) // silent past the credential's end
		_ = peer.Progress(ctx, 1, nil, "started")
		time.Sleep(300 * time.Millisecond)
		return "done", nil
	})
	srv := app.NewServer(a)
	h := streamable.New(srv, streamable.WithResponseMode(mode))
	expires := time.Time{}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(core.WithCaller(r.Context(), core.Caller{Key: "expiring", Expires: expires})))
	}))
	t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
	e := &env{t: t, url: ts.URL, srv: srv}
	sid := e.initialize()
	e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	expires = time.Now().Add(5 * time.Millisecond) // read by the next request only
	start := time.Now()
	resp, _ := e.do(req{body: `{"jsonrpc":"2.0","id":"p","method":"tools/call","params":{"name":"late","arguments":{},"_meta":{"progressToken":7}}}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	if d := time.Since(start); d > 200*time.Millisecond {
		t.Errorf("the response lasted %v, its credential 5ms (the call takes 350ms)", d.Round(time.Millisecond))
	}
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
}

// TestFirstGetsAtOnce: of GETs that open a session's stream at the same
// time, one gets it and the others 409, and once it closes the session
// can open its stream again (two first GETs left it refused for its life,
// or both attached, one of them silent).
func TestFirstGetsAtOnce(t *testing.T) {
	e := newEnv(t, nil, streamable.WithKeepAlive(time.Hour))
	open := func(ctx context.Context, sid string) int {
		hr, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.url, nil)
		hr.Header.Set("Accept", "text/event-stream")
		hr.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return 0
		}
		if resp.StatusCode != 200 {
			resp.Body.Close()
		}
		return resp.StatusCode
	}
	for round := range 20 {
		sid := e.initialize()
		e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
		ctx, cancel := context.WithCancel(context.Background())
		codes := make(chan int, 4)
		for range 4 {
			go func() { codes <- open(ctx, sid) }()
		}
		got := map[int]int{}
		for range 4 {
			got[<-codes]++
		}
		cancel()
		if got[200] != 1 || got[409] != 3 {
			t.Fatalf("round %d: four first GETs at once got %v, want one 200 and three 409", round, got)
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			ctx, cancel := context.WithCancel(context.Background())
			code := open(ctx, sid)
			cancel()
			if code == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: the stream closed, a GET still gets %d", round, code)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
