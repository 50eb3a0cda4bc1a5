package sse_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/sse"
	"github.com/mcpstack/mcpstack/server"
)

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"1"}}}`

// fixture is a server with the handler mounted at /sse and /messages.
type fixture struct {
	srv  *server.Server
	h    *sse.Handler
	base string
}

func newFixture(t *testing.T, srvOpts []server.Option, opts ...sse.Option) *fixture {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), append([]server.Option{server.WithStrict(true)}, srvOpts...)...)
	h := sse.New(srv, opts...)
	mux := http.NewServeMux()
	mux.Handle("/sse", h.Stream())
	mux.Handle("/messages", h.Messages())
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() {
		h.Shutdown()
		srv.Close()
	})
	return &fixture{srv: srv, h: h, base: ts.URL}
}

type event struct {
	name, data string
	comment    bool
}

// rawStream is a GET stream read event by event.
type rawStream struct {
	resp     *http.Response
	events   chan event
	cancel   context.CancelFunc
	raw      string // the data of the endpoint event
	endpoint string // the POST URL it resolves to
	id       string
}

// open GETs path and reads the endpoint event.
func (f *fixture) open(t *testing.T, path string) *rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, f.base+path, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		resp.Body.Close()
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	s := &rawStream{resp: resp, events: make(chan event, 64), cancel: cancel}
	t.Cleanup(func() {
		cancel()
		resp.Body.Close()
	})
	go s.read()
	ev := s.next(t)
	if ev.name != "endpoint" {
		t.Fatalf("first event %+v, want endpoint", ev)
	}
	u, err := url.Parse(f.base + path)
	if err != nil {
		t.Fatal(err)
	}
	ep, err := u.Parse(ev.data)
	if err != nil {
		t.Fatalf("endpoint %q: %v", ev.data, err)
	}
	s.raw, s.endpoint, s.id = ev.data, ep.String(), ep.Query().Get("sessionId")
	return s
}

func (s *rawStream) read() {
	defer close(s.events)
	sc := bufio.NewScanner(s.resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var ev event
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" || data != nil {
				ev.data = strings.Join(data, "\n")
				s.events <- ev
			}
			ev, data = event{}, nil
		case strings.HasPrefix(line, ":"):
			s.events <- event{comment: true, data: line}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			s.events <- event{name: "bad line", data: line}
		}
	}
}

// waitEnd reads until the stream ends; only comments may come before.
func (s *rawStream) waitEnd(t *testing.T) {
	t.Helper()
	timeout := time.After(3 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return
			}
			if !ev.comment {
				t.Errorf("unexpected event %+v before the end", ev)
			}
		case <-timeout:
			t.Fatal("the stream did not end within 3s")
		}
	}
}

// next returns the next event that is not a comment.
func (s *rawStream) next(t *testing.T) event {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatal("the stream ended")
			}
			if !ev.comment {
				return ev
			}
		case <-timeout:
			t.Fatal("no event within 5s")
		}
	}
}

// message returns the next event's JSON-RPC message.
func (s *rawStream) message(t *testing.T) map[string]any {
	t.Helper()
	ev := s.next(t)
	var m map[string]any
	if ev.name != "message" || json.Unmarshal([]byte(ev.data), &m) != nil {
		t.Fatalf("event %+v, want a message event with a JSON object", ev)
	}
	return m
}

func post(t *testing.T, url, contentType, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// initialize runs the lifecycle on a raw stream.
func (s *rawStream) initialize(t *testing.T) {
	t.Helper()
	if st, body := post(t, s.endpoint, "application/json", initBody); st != http.StatusAccepted || body != "" {
		t.Fatalf("POST initialize: %d %q, want 202 and no body", st, body)
	}
	m := s.message(t)
	if m["id"] != 1.0 || m["result"].(map[string]any)["protocolVersion"] != "2024-11-05" {
		t.Fatalf("initialize answer %v", m)
	}
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("POST initialized: %d", st)
	}
}

func TestStreamFraming(t *testing.T) {
	f := newFixture(t, nil, sse.WithKeepAlive(20*time.Millisecond))
	s := f.open(t, "/sse")
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := s.resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control %q", cc)
	}
	if _, ok := core.Of(f.srv).Session(s.id); !ok || len(s.id) < 32 {
		t.Fatalf("endpoint %s names no live session", s.endpoint)
	}
	if want := f.base + "/messages?sessionId=" + s.id; s.endpoint != want {
		t.Errorf("endpoint resolves to %s, want %s", s.endpoint, want)
	}
	s.initialize(t)

	// A request: 202, the answer on the stream.
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":"t","method":"tools/call","params":{"name":"test_simple_text"}}`); st != http.StatusAccepted {
		t.Fatalf("POST tools/call: %d", st)
	}
	m := s.message(t)
	content := m["result"].(map[string]any)["content"].([]any)
	if m["id"] != "t" || content[0].(map[string]any)["text"] != conformance.SimpleText {
		t.Errorf("tools/call answer %v", m)
	}
	// A batch: one event holding the array.
	if st, _ := post(t, s.endpoint, "application/json", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`); st != http.StatusAccepted {
		t.Fatalf("POST batch: %d", st)
	}
	if ev := s.next(t); ev.data != `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]` {
		t.Errorf("batch answer %q", ev.data)
	}
	// An invalid message inside a valid body is answered on the stream.
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":3,"method":"no/such"}`); st != http.StatusAccepted {
		t.Fatalf("POST unknown method: %d", st)
	}
	if m := s.message(t); m["id"] != 3.0 || m["error"].(map[string]any)["code"] != -32601.0 {
		t.Errorf("unknown method answer %v", m)
	}
	// Keepalive comments arrive while idle.
	deadline := time.After(2 * time.Second)
	for got := false; !got; {
		select {
		case ev := <-s.events:
			got = ev.comment && ev.data == ": keepalive"
			if !ev.comment {
				t.Fatalf("unexpected event %+v", ev)
			}
		case <-deadline:
			t.Fatal("no keepalive comment within 2s")
		}
	}
}

// Requests run concurrently: a call waiting for the client's sampling
// answer does not hold up the next one; the answer to the server's request
// is POSTed like any message.
func TestConcurrentRequests(t *testing.T) {
	f := newFixture(t, nil)
	s := f.open(t, "/sse")
	s.initialize(t)
	post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}`)
	req := s.message(t)
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %v", req)
	}
	post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":11,"method":"ping"}`)
	if m := s.message(t); m["id"] != 11.0 {
		t.Fatalf("want the ping's answer while test_sampling waits, got %v", m)
	}
	sid, _ := json.Marshal(req["id"])
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":`+string(sid)+`,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"hello back"}}}`); st != http.StatusAccepted {
		t.Fatalf("POST sampling result: %d", st)
	}
	m := s.message(t)
	text := m["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if m["id"] != 10.0 || text != "LLM response: hello back" {
		t.Errorf("test_sampling answer %v", m)
	}
}

func TestStatuses(t *testing.T) {
	f := newFixture(t, nil, sse.WithMaxBody(256))
	s := f.open(t, "/sse")
	s.initialize(t)
	other, err := core.Of(f.srv).NewSession("", nil) // a session of another transport
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tests := []struct {
		name                string
		method, url, ctype  string
		accept, body        string
		status, code        int // code: the JSON-RPC error code of the body (0: no body check)
		header, headerValue string
	}{
		{"stream: no Accept", "GET", "/sse", "", "", "", 406, -32600, "", ""},
		{"stream: Accept json only", "GET", "/sse", "", "application/json", "", 406, -32600, "", ""},
		{"stream: POST", "POST", "/sse", "application/json", "text/event-stream", "{}", 405, -32600, "Allow", "GET"},
		{"messages: GET", "GET", "/messages?sessionId=" + s.id, "", "", "", 405, -32600, "Allow", "POST"},
		{"messages: no sessionId", "POST", "/messages", "application/json", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 400, -32600, "", ""},
		{"messages: unknown session", "POST", "/messages?sessionId=nope", "application/json", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 404, -32600, "", ""},
		{"messages: another transport's session", "POST", "/messages?sessionId=" + other.ID(), "application/json", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 404, -32600, "", ""},
		{"messages: text/plain", "POST", "/messages?sessionId=" + s.id, "text/plain", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 415, -32600, "", ""},
		{"messages: too large", "POST", "/messages?sessionId=" + s.id, "application/json", "", `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("x", 300) + `"}}}`, 413, -32600, "", ""},
		{"messages: not JSON", "POST", "/messages?sessionId=" + s.id, "application/json", "", `{"jsonrpc":`, 400, -32700, "", ""},
		{"messages: empty batch", "POST", "/messages?sessionId=" + s.id, "application/json", "", `[]`, 400, -32600, "", ""},
		{"messages: notification", "POST", "/messages?sessionId=" + s.id, "application/json; charset=utf-8", "", `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`, 202, 0, "", ""},
		{"messages: request", "POST", "/messages?sessionId=" + s.id, "application/json", "", `{"jsonrpc":"2.0","id":"r","method":"ping"}`, 202, 0, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.base+tc.url, strings.NewReader(tc.body))
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, tc.status)
			}
			if tc.header != "" && resp.Header.Get(tc.header) != tc.headerValue {
				t.Errorf("%s: %q, want %q", tc.header, resp.Header.Get(tc.header), tc.headerValue)
			}
			if tc.code == 0 {
				if len(body) != 0 {
					t.Errorf("body %q, want none", body)
				}
				return
			}
			var e struct {
				ID    any `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tc.code || e.ID != nil || e.Error.Message == "" {
				t.Errorf("body %s, want a JSON-RPC error %d without id", body, tc.code)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
	// The ping POSTed last is answered on the stream.
	if m := s.message(t); m["id"] != "r" {
		t.Errorf("want the answer to the ping, got %v", m)
	}
	// The message was not served in the session of another transport.
	if other.Initialized() {
		t.Error("a POST reached another transport's session")
	}
}

// The stream is the session: when it ends, the session ends.
func TestStreamEndClosesSession(t *testing.T) {
	f := newFixture(t, nil)
	s := f.open(t, "/sse")
	s.initialize(t)
	s.cancel()
	if !eventually(2*time.Second, func() bool { _, ok := core.Of(f.srv).Session(s.id); return !ok }) {
		t.Fatal("the session outlived its stream")
	}
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping"}`); st != http.StatusNotFound {
		t.Errorf("POST after the stream ended: %d, want 404", st)
	}
}

// When the server ends the session, the stream ends.
func TestSessionEndEndsStream(t *testing.T) {
	f := newFixture(t, nil)
	s := f.open(t, "/sse")
	sess, _ := core.Of(f.srv).Session(s.id)
	sess.Close()
	s.waitEnd(t)
}

func TestSessionCap(t *testing.T) {
	f := newFixture(t, []server.Option{server.WithLimits(server.Limits{Sessions: 1})})
	f.open(t, "/sse")
	req, _ := http.NewRequest("GET", f.base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second stream at the cap: %s, Retry-After %q; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"))
	}
}

// Shutdown refuses new streams and ends each open one once its calls are
// done; the calls can still get the client's answers meanwhile.
func TestShutdownDrains(t *testing.T) {
	f := newFixture(t, nil)
	idle := f.open(t, "/sse")
	idle.initialize(t)
	busy := f.open(t, "/sse")
	busy.initialize(t)
	post(t, busy.endpoint, "application/json", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"hi"}}}`)
	req := busy.message(t)

	f.h.Shutdown()
	idle.waitEnd(t) // an idle stream ends at once
	get, _ := http.NewRequest("GET", f.base+"/sse", nil)
	get.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET during shutdown: %s, want 503", resp.Status)
	}
	time.Sleep(50 * time.Millisecond)
	if _, ok := core.Of(f.srv).Session(busy.id); !ok {
		t.Fatal("the busy session ended before its call did")
	}
	sid, _ := json.Marshal(req["id"])
	if st, _ := post(t, busy.endpoint, "application/json", `{"jsonrpc":"2.0","id":`+string(sid)+`,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"bye"}}}`); st != http.StatusAccepted {
		t.Fatalf("POST sampling result during the drain: %d", st)
	}
	if m := busy.message(t); m["id"] != 7.0 {
		t.Errorf("want the tool's answer, got %v", m)
	}
	if !eventually(2*time.Second, func() bool { _, ok := core.Of(f.srv).Session(busy.id); return !ok }) {
		t.Error("the drained session did not end")
	}
}

// The endpoint event is relative to the stream's URL: it resolves wherever
// the handler is mounted, also behind a prefix.
func TestEndpointMounts(t *testing.T) {
	for _, tc := range []struct{ stream, messages, endpoint, want string }{
		{"/sse", "/messages", "/messages", "messages"},
		{"/mcp/sse", "/mcp/messages", "/mcp/messages", "messages"},
		{"/mcp/sse", "/messages", "/messages", "../messages"},
		{"/a/b/sse", "/a/c/post", "/a/c/post", "../c/post"},
		{"/sse", "/rpc/messages", "rpc/messages", "rpc/messages"},
	} {
		t.Run(tc.stream+"->"+tc.messages, func(t *testing.T) {
			srv := server.New(conformance.New(), server.WithStrict(true))
			h := sse.New(srv, sse.WithEndpoint(tc.endpoint))
			mux := http.NewServeMux()
			mux.Handle(tc.stream, h.Stream())
			mux.Handle(tc.messages, h.Messages())
			ts := httptest.NewServer(mux)
			t.Cleanup(ts.Close)
			t.Cleanup(srv.Close)
			f := &fixture{srv: srv, h: h, base: ts.URL}
			s := f.open(t, tc.stream)
			if s.raw != tc.want+"?sessionId="+s.id {
				t.Errorf("endpoint event data %q, want %q", s.raw, tc.want+"?sessionId=<id>")
			}
			if want := ts.URL + tc.messages + "?sessionId=" + s.id; s.endpoint != want {
				t.Errorf("endpoint resolves to %s, want %s", s.endpoint, want)
			}
			s.initialize(t)
		})
	}
}

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}
