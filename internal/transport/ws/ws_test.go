package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"

	"github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/ws"
	"github.com/mcpstack/mcpstack/server"
)

// TestScenario drives the conformance fixtures over one socket per
// revision with a github.com/coder/websocket client, and checks the content
// of every answer and the order of the frames.
func TestScenario(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			cl := dial(t, f.url, nil)
			init := initialize(t, cl, rev)
			info, _ := init["serverInfo"].(map[string]any)
			if init["protocolVersion"] != rev || info["name"] != "mcpstack-conformance" || init["instructions"] != conformance.Instructions {
				t.Fatalf("initialize result %v", init)
			}
			t.Run("tools", func(t *testing.T) { checkTools(t, cl) })
			t.Run("resources", func(t *testing.T) { checkResources(t, cl) })
			t.Run("prompts", func(t *testing.T) { checkPrompts(t, cl) })
			t.Run("progress", func(t *testing.T) { checkProgress(t, cl) })
			t.Run("logging", func(t *testing.T) { checkLogging(t, cl) })
			t.Run("sampling", func(t *testing.T) { checkSampling(t, cl) })
			t.Run("cancellation", func(t *testing.T) { checkCancellation(t, cl) })
			t.Run("batch", func(t *testing.T) { checkBatch(t, cl) })
			t.Run("batch with initialize", func(t *testing.T) { checkBatchWithInitialize(t, cl) })
			t.Run("errors", func(t *testing.T) { checkErrors(t, cl) })
			t.Run("client close", func(t *testing.T) {
				if err := cl.c.Close(websocket.StatusNormalClosure, "done"); err != nil {
					t.Errorf("close: %v", err)
				}
				if !eventually(2*time.Second, func() bool { return f.srv.SessionCount() == 0 }) {
					t.Error("the session outlived its socket")
				}
			})
		})
	}
}

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

func checkTools(t *testing.T, cl *client) {
	resp, _ := cl.call(t, `"list"`, "tools/list", "", nil)
	var names []string
	for _, tool := range result(t, resp)["tools"].([]any) {
		names = append(names, tool.(map[string]any)["name"].(string))
	}
	for _, want := range []string{conformance.ToolSimpleText, conformance.ToolWithProgress, conformance.ToolWithLogging, conformance.ToolSampling} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (has %v)", want, names)
		}
	}
	resp, _ = cl.call(t, `"simple"`, "tools/call", `{"name":"test_simple_text"}`, nil)
	if got := toolText(t, resp); got != conformance.SimpleText {
		t.Errorf("test_simple_text = %q, want %q", got, conformance.SimpleText)
	}
}

func checkResources(t *testing.T, cl *client) {
	resp, _ := cl.call(t, `"rl"`, "resources/list", "", nil)
	found := false
	for _, r := range result(t, resp)["resources"].([]any) {
		m := r.(map[string]any)
		if m["uri"] == conformance.URIStaticText {
			found = m["name"] == "static-text" && m["mimeType"] == "text/plain"
		}
	}
	if !found {
		t.Errorf("resources/list lacks %s: %s", conformance.URIStaticText, resp.raw)
	}
	resp, _ = cl.call(t, `"rr"`, "resources/read", `{"uri":"test://static-text"}`, nil)
	contents := result(t, resp)["contents"].([]any)
	if len(contents) != 1 {
		t.Fatalf("resources/read: %s", resp.raw)
	}
	c := contents[0].(map[string]any)
	if c["uri"] != conformance.URIStaticText || c["text"] != conformance.StaticText || c["mimeType"] != "text/plain" {
		t.Errorf("resources/read = %v, want text %q", c, conformance.StaticText)
	}
}

func checkPrompts(t *testing.T, cl *client) {
	resp, _ := cl.call(t, `"pg"`, "prompts/get", `{"name":"test_prompt_with_arguments","arguments":{"arg1":"alpha","arg2":"beta"}}`, nil)
	msgs := result(t, resp)["messages"].([]any)
	if len(msgs) != 1 {
		t.Fatalf("prompts/get: %s", resp.raw)
	}
	m := msgs[0].(map[string]any)
	content := m["content"].(map[string]any)
	if want := "Prompt with arguments: arg1='alpha', arg2='beta'"; m["role"] != "user" || content["type"] != "text" || content["text"] != want {
		t.Errorf("prompts/get message %v, want user text %q", m, want)
	}
}

// Progress notifications come on the socket before the response.
func checkProgress(t *testing.T, cl *client) {
	resp, before := cl.call(t, "7", "tools/call", `{"name":"test_tool_with_progress","_meta":{"progressToken":"tok-1"}}`, nil)
	if got := toolText(t, resp); got != conformance.ProgressDoneText {
		t.Errorf("test_tool_with_progress = %q", got)
	}
	var values []float64
	for _, f := range before {
		p := f.msg["params"].(map[string]any)
		if f.method() != "notifications/progress" || p["progressToken"] != "tok-1" || p["total"] != float64(conformance.ProgressTotal) {
			t.Errorf("frame before the response: %s, want progress of tok-1 out of %d", f.raw, conformance.ProgressTotal)
			continue
		}
		values = append(values, p["progress"].(float64))
	}
	if !slices.Equal(values, conformance.ProgressSteps) {
		t.Errorf("progress values %v, want %v", values, conformance.ProgressSteps)
	}
}

func checkLogging(t *testing.T, cl *client) {
	resp, _ := cl.call(t, `"lvl"`, "logging/setLevel", `{"level":"info"}`, nil)
	if r := result(t, resp); len(r) != 0 {
		t.Errorf("logging/setLevel result %v, want {}", r)
	}
	resp, before := cl.call(t, `"log"`, "tools/call", `{"name":"test_tool_with_logging"}`, nil)
	if got := toolText(t, resp); got != conformance.LoggingDoneText {
		t.Errorf("test_tool_with_logging = %q", got)
	}
	var data []string
	for _, f := range before {
		p := f.msg["params"].(map[string]any)
		if f.method() != "notifications/message" || p["level"] != "info" || p["logger"] != conformance.LoggerName {
			t.Errorf("frame before the response: %s, want an info message of %s", f.raw, conformance.LoggerName)
			continue
		}
		s, _ := p["data"].(string)
		data = append(data, s)
	}
	if !slices.Equal(data, conformance.LogMessages) {
		t.Errorf("log data %q, want %q", data, conformance.LogMessages)
	}
}

// The server's sampling request comes on the socket; while the call waits
// for the answer, other requests are served.
func checkSampling(t *testing.T, cl *client) {
	cl.send(t, `{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"What is 2+2?"}}}`)
	req := cl.next(t)
	p, _ := req.msg["params"].(map[string]any)
	if req.method() != "sampling/createMessage" || req.id() == "" || p["maxTokens"] != float64(conformance.SamplingMaxTokens) {
		t.Fatalf("want sampling/createMessage with maxTokens %d, got %s", conformance.SamplingMaxTokens, req.raw)
	}
	msgs := p["messages"].([]any)
	m := msgs[0].(map[string]any)
	if len(msgs) != 1 || m["role"] != "user" || m["content"].(map[string]any)["text"] != "What is 2+2?" {
		t.Errorf("sampling messages %v", msgs)
	}
	if resp, _ := cl.call(t, `"p"`, "ping", "", nil); len(result(t, resp)) != 0 {
		t.Errorf("ping during sampling: %s", resp.raw)
	}
	cl.send(t, `{"jsonrpc":"2.0","id":`+req.id()+`,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"Four."}}}`)
	resp := cl.next(t)
	if resp.id() != `"s"` || toolText(t, resp) != "LLM response: Four." {
		t.Errorf("test_sampling answer %s, want %q", resp.raw, "LLM response: Four.")
	}
}

// notifications/cancelled stops the call: the server cancels its own
// sampling request and does not answer the cancelled one.
func checkCancellation(t *testing.T, cl *client) {
	cl.send(t, `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"never answered"}}}`)
	req := cl.next(t)
	if req.method() != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %s", req.raw)
	}
	cl.send(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c","reason":"user abort"}}`)
	f := cl.next(t)
	p, _ := f.msg["params"].(map[string]any)
	if f.method() != "notifications/cancelled" || fmt.Sprint(p["requestId"]) != strings.Trim(req.id(), `"`) {
		t.Fatalf("want notifications/cancelled of request %s, got %s", req.id(), f.raw)
	}
	time.Sleep(50 * time.Millisecond)
	resp, before := cl.call(t, `"after"`, "ping", "", nil)
	if len(before) != 0 {
		t.Errorf("frames after the cancellation: %v (the cancelled request must not be answered)", before)
	}
	result(t, resp)
}

func checkBatch(t *testing.T, cl *client) {
	cl.send(t, `[{"jsonrpc":"2.0","id":"b1","method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":"b2","method":"tools/call","params":{"name":"test_simple_text"}}]`)
	f := cl.next(t)
	if len(f.arr) != 2 {
		t.Fatalf("batch answer %s, want an array of 2 responses in one frame", f.raw)
	}
	first, _ := json.Marshal(f.arr[0])
	second := f.arr[1].(map[string]any)
	text := second["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if string(first) != `{"id":"b1","jsonrpc":"2.0","result":{}}` || second["id"] != "b2" || text != conformance.SimpleText {
		t.Errorf("batch answer %s", f.raw)
	}
}

// A batch with an initialize in it is served as calls are, not in order
// on the socket's reading: its call's request to the client is answered.
func checkBatchWithInitialize(t *testing.T, cl *client) {
	cl.send(t, `[{"jsonrpc":"2.0","id":"i2","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}},`+
		`{"jsonrpc":"2.0","id":"bs","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"batched"}}}]`)
	req := cl.next(t)
	if req.method() != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %s", req.raw)
	}
	cl.send(t, `{"jsonrpc":"2.0","id":`+req.id()+`,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"Yes."}}}`)
	f := cl.next(t)
	if len(f.arr) != 2 || !strings.Contains(f.raw, "LLM response: Yes.") {
		t.Errorf("batch answer %s, want the refused initialize and the call's result", f.raw)
	}
}

// A frame that is not JSON, or an invalid message, gets its JSON-RPC
// error; the session goes on.
func checkErrors(t *testing.T, cl *client) {
	for _, tc := range []struct {
		send string
		id   any
		code float64
	}{
		{`{"jsonrpc":"2.0",`, nil, -32700},
		{`[]`, nil, -32600},
		{`{"jsonrpc":"2.0","id":"e1","method":"no/such"}`, "e1", -32601},
		{`{"jsonrpc":"2.0","id":"e2","method":"tools/call","params":{}}`, "e2", -32602},
	} {
		cl.send(t, tc.send)
		f := cl.next(t)
		e, _ := f.msg["error"].(map[string]any)
		if f.msg["id"] != tc.id || e["code"] != tc.code {
			t.Errorf("%s: answer %s, want error %v with id %v", tc.send, f.raw, tc.code, tc.id)
		}
	}
	resp, _ := cl.call(t, `"alive"`, "ping", "", nil)
	result(t, resp)
}

// The handshake: statuses before the upgrade, by table.
func TestHandshake(t *testing.T) {
	f := newFixture(t, nil)
	custom := newFixture(t, nil, ws.WithOriginPatterns("app.example.com", "https://*.example.org"))
	mcp := []string{ws.Subprotocol}
	origin := func(o string) http.Header { return http.Header{"Origin": {o}} }
	host := strings.TrimPrefix(f.ts.URL, "http://")
	for _, tc := range []struct {
		name   string
		url    string
		opts   *websocket.DialOptions
		status int
		code   float64 // JSON-RPC error code of the body (0: not checked)
	}{
		{"no subprotocol", f.url, &websocket.DialOptions{}, 400, -32600},
		{"other subprotocol", f.url, &websocket.DialOptions{Subprotocols: []string{"graphql-ws"}}, 400, -32600},
		{"mcp among others", f.url, &websocket.DialOptions{Subprotocols: []string{"graphql-ws", "mcp"}}, 101, 0},
		{"no Origin", f.url, &websocket.DialOptions{Subprotocols: mcp}, 101, 0},
		{"same-host Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://" + host)}, 101, 0},
		{"localhost Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://localhost:5173")}, 101, 0},
		{"127.0.0.1 Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://127.0.0.1")}, 101, 0},
		{"[::1] Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://[::1]:8080")}, 101, 0},
		{"foreign Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("https://evil.example")}, 403, -32600},
		{"look-alike Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://localhost.evil.example")}, 403, -32600},
		{"null Origin", f.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("null")}, 403, -32600},
		{"foreign Origin without subprotocol", f.url, &websocket.DialOptions{HTTPHeader: origin("https://evil.example")}, 403, -32600},
		{"configured Origin", custom.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("https://app.example.com")}, 101, 0},
		{"configured scheme pattern", custom.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("https://x.example.org")}, 101, 0},
		{"configured scheme pattern, other scheme", custom.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://x.example.org")}, 403, -32600},
		{"defaults replaced", custom.url, &websocket.DialOptions{Subprotocols: mcp, HTTPHeader: origin("http://localhost:5173")}, 403, -32600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body, c := dialStatus(t, tc.url, tc.opts)
			if status != tc.status {
				t.Fatalf("status %d (%s), want %d", status, body, tc.status)
			}
			if c != nil && c.Subprotocol() != ws.Subprotocol {
				t.Errorf("subprotocol %q", c.Subprotocol())
			}
			if tc.code != 0 {
				var e map[string]any
				if err := json.Unmarshal([]byte(body), &e); err != nil || e["id"] != nil || e["error"].(map[string]any)["code"] != tc.code {
					t.Errorf("body %q, want a JSON-RPC error %v without id", body, tc.code)
				}
			}
		})
	}

	// Plain HTTP requests are refused before any upgrade.
	for _, tc := range []struct {
		name, method string
		header       http.Header
		status       int
		hdr, value   string
	}{
		{"POST", "POST", nil, 405, "Allow", "GET"},
		{"GET without upgrade", "GET", nil, 426, "Upgrade", "websocket"},
		{"upgrade to something else", "GET", http.Header{"Connection": {"Upgrade"}, "Upgrade": {"h2c"}}, 426, "Upgrade", "websocket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, f.ts.URL+"/mcp/ws", nil)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.status || resp.Header.Get(tc.hdr) != tc.value {
				t.Errorf("%s, %s: %q; want %d and %q", resp.Status, tc.hdr, resp.Header.Get(tc.hdr), tc.status, tc.value)
			}
		})
	}
}

// Authentication happens at the upgrade: middleware in front of the handler
// refuses before any socket exists.
func TestAuthAtUpgrade(t *testing.T) {
	srv := server.New(conformance.New(), server.WithStrict(true))
	h := ws.New(srv)
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer secret" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
	f := &fixture{srv: srv, h: h}
	mux := http.NewServeMux()
	mux.Handle("/mcp/ws", auth)
	f.ts = newServer(t, mux)
	url := "ws" + strings.TrimPrefix(f.ts.URL, "http") + "/mcp/ws"
	t.Cleanup(func() { _ = h.Shutdown(context.Background()); srv.Close() })
	if status, _, _ := dialStatus(t, url, &websocket.DialOptions{Subprotocols: []string{"mcp"}}); status != http.StatusUnauthorized {
		t.Errorf("without token: %d, want 401", status)
	}
	cl := dial(t, url, &websocket.DialOptions{Subprotocols: []string{"mcp"}, HTTPHeader: http.Header{"Authorization": {"Bearer secret"}}})
	initialize(t, cl, "2025-06-18")
}

// Close codes: each way a socket can end, and the code the client sees.
func TestCloseCodes(t *testing.T) {
	type setup struct {
		f  *fixture
		cl *client
	}
	for _, tc := range []struct {
		name string
		opts []ws.Option
		srv  []server.Option
		do   func(t *testing.T, s setup)
		want websocket.StatusCode // 0: any
	}{
		{"binary frame", nil, nil, func(t *testing.T, s setup) {
			_ = s.cl.c.Write(context.Background(), websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		}, websocket.StatusUnsupportedData},
		{"frame over the limit", []ws.Option{ws.WithReadLimit(1024)}, nil, func(t *testing.T, s setup) {
			_ = s.cl.c.Write(context.Background(), websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"pad":"`+strings.Repeat("x", 2048)+`"}}}`))
		}, websocket.StatusMessageTooBig},
		{"frame at the limit", []ws.Option{ws.WithReadLimit(1024)}, nil, func(t *testing.T, s setup) {
			head, tail := `{"jsonrpc":"2.0","id":"max","method":"ping","params":{"_meta":{"pad":"`, `"}}}`
			s.cl.send(t, head+strings.Repeat("x", 1024-len(head)-len(tail))+tail)
			if resp := s.cl.next(t); resp.id() != `"max"` {
				t.Errorf("answer to a frame of exactly the limit: %s", resp.raw)
			}
			_ = s.cl.c.Close(websocket.StatusNormalClosure, "") // the client ends it: its reader may see the close or just the end
		}, 0},
		{"invalid UTF-8", nil, nil, func(t *testing.T, s setup) {
			_ = s.cl.c.Write(context.Background(), websocket.MessageText, []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}"))
		}, websocket.StatusInvalidFramePayloadData},
		{"session ended by the server", nil, nil, func(t *testing.T, s setup) {
			for _, sess := range core.Of(s.f.srv).Sessions() {
				sess.Close()
			}
		}, websocket.StatusNormalClosure},
		{"session idle timeout", nil, []server.Option{server.WithLimits(server.Limits{SessionIdle: 100 * time.Millisecond})}, func(t *testing.T, s setup) {}, websocket.StatusNormalClosure},
		{"server shutdown", nil, nil, func(t *testing.T, s setup) {
			if err := s.f.h.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		}, websocket.StatusGoingAway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.srv, tc.opts...)
			cl := dial(t, f.url, nil)
			initialize(t, cl, "2025-06-18")
			tc.do(t, setup{f, cl})
			if got := cl.closed(t); tc.want != 0 && got != tc.want {
				t.Errorf("close code %v (%v), want %v", got, cl.err, tc.want)
			}
			if !eventually(2*time.Second, func() bool { return f.srv.SessionCount() == 0 }) {
				t.Error("the session outlived the socket")
			}
		})
	}
}

// A client that does not answer pings is closed with 1011; one that does
// stays.
func TestKeepAlive(t *testing.T) {
	f := newFixture(t, nil, ws.WithKeepAlive(20*time.Millisecond, 60*time.Millisecond))
	// Reading answers pings: this client stays.
	alive := dial(t, f.url, nil)
	initialize(t, alive, "2025-06-18")

	// Without a reader nobody answers the pings.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	mute, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer mute.CloseNow()
	time.Sleep(300 * time.Millisecond)
	_, _, err = mute.Read(ctx) // answers the pings late, then reads the close
	if got := websocket.CloseStatus(err); got != websocket.StatusInternalError {
		t.Errorf("silent client: %v, want close 1011", err)
	}
	var reason websocket.CloseError
	if errors.As(err, &reason) && reason.Reason != "keepalive ping timeout" {
		t.Errorf("close reason %q", reason.Reason)
	}
	resp, _ := alive.call(t, `"still"`, "ping", "", nil)
	result(t, resp)
	if !eventually(2*time.Second, func() bool { return f.srv.SessionCount() == 1 }) {
		t.Errorf("%d sessions, want the answering client's only", f.srv.SessionCount())
	}
}

// Shutdown waits for the calls in flight (still reading the client's
// answers), refuses new sockets, then closes with 1001.
func TestShutdownDrains(t *testing.T) {
	f := newFixture(t, nil)
	idle := dial(t, f.url, nil)
	initialize(t, idle, "2025-06-18")
	busy := dial(t, f.url, nil)
	initialize(t, busy, "2025-06-18")
	busy.send(t, `{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"drain"}}}`)
	req := busy.next(t)

	done := make(chan error, 1)
	go func() { done <- f.h.Shutdown(context.Background()) }()
	if got := idle.closed(t); got != websocket.StatusGoingAway {
		t.Errorf("idle socket: close %v, want 1001", got)
	}
	if status, body, _ := dialStatus(t, f.url, &websocket.DialOptions{Subprotocols: []string{"mcp"}}); status != http.StatusServiceUnavailable {
		t.Errorf("upgrade during shutdown: %d %s, want 503", status, body)
	}
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) with a call in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	busy.send(t, `{"jsonrpc":"2.0","id":`+req.id()+`,"result":{"role":"assistant","model":"m","content":{"type":"text","text":"late"}}}`)
	if resp := busy.next(t); toolText(t, resp) != "LLM response: late" {
		t.Errorf("answer during the drain: %s", resp.raw)
	}
	if got := busy.closed(t); got != websocket.StatusGoingAway {
		t.Errorf("busy socket: close %v, want 1001", got)
	}
	if err := within(wait, func() error { return <-done }); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}

// When the drain times out, the sockets are closed with 1001 anyway and
// the calls cancelled.
func TestShutdownForced(t *testing.T) {
	f := newFixture(t, nil)
	cl := dial(t, f.url, nil)
	initialize(t, cl, "2025-06-18")
	cl.send(t, `{"jsonrpc":"2.0","id":"f","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"never"}}}`)
	if req := cl.next(t); req.method() != "sampling/createMessage" {
		t.Fatalf("want sampling/createMessage, got %s", req.raw)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := f.h.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("forced Shutdown took %v", d)
	}
	if got := cl.closed(t); got != websocket.StatusGoingAway {
		t.Errorf("close %v, want 1001", got)
	}
	if n := f.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

func TestSessionCap(t *testing.T) {
	f := newFixture(t, []server.Option{server.WithLimits(server.Limits{Sessions: 1})})
	dial(t, f.url, nil)
	status, body, _ := dialStatus(t, f.url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions") {
		t.Errorf("second socket at the cap: %d %s, want 503", status, body)
	}
}

// Server-to-client messages not tied to a request (broadcast list changes)
// go on the socket too.
func TestBroadcast(t *testing.T) {
	f := newFixture(t, nil)
	cl := dial(t, f.url, nil)
	initialize(t, cl, "2025-06-18")
	resp, _ := cl.call(t, "1", "ping", "", nil) // initialized is served by now
	result(t, resp)
	f.srv.Broadcast(context.Background(), "notifications/tools/list_changed", nil)
	if n := cl.next(t); n.method() != "notifications/tools/list_changed" || n.msg["id"] != nil {
		t.Errorf("broadcast: %s", n.raw)
	}
}

// A peer that never answers the close frame is cut off after the close
// timeout, so that Shutdown does not hang on it.
func TestCloseTimeout(t *testing.T) {
	f := newFixture(t, nil, ws.WithCloseTimeout(100*time.Millisecond), ws.WithKeepAlive(0, 0))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	mute, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer mute.CloseNow()
	if !eventually(time.Second, func() bool { return f.srv.SessionCount() == 1 }) {
		t.Fatal("no session")
	}
	start := time.Now()
	if err := f.h.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Shutdown took %v with a peer that does not read; the close timeout is 100ms", d)
	}
	if n := f.srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions left", n)
	}
}

// A client held back by its rate limit is not taken for dead: while its
// next message waits for the limiter, the socket is not read and its pongs
// are not seen, but it has just shown it is there.
func TestRateLimitedClientIsNotTakenForDead(t *testing.T) {
	f := newFixture(t, nil, ws.WithRateLimit(3, time.Minute), ws.WithKeepAlive(50*time.Millisecond, 50*time.Millisecond))
	cl := dial(t, f.url, nil)
	initialize(t, cl, "2025-06-18") // initialize and initialized: two of the three
	cl.send(t, `{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
	cl.send(t, `{"jsonrpc":"2.0","id":"p2","method":"ping"}`) // waits for the limiter
	time.Sleep(500 * time.Millisecond)
	for open := true; open; {
		select {
		case _, ok := <-cl.frames:
			if !ok {
				t.Fatalf("the socket of a client waiting for its rate limit closed: %v", cl.err)
			}
		default:
			open = false
		}
	}
	if f.srv.SessionCount() != 1 {
		t.Errorf("%d sessions, want the rate-limited client's still there", f.srv.SessionCount())
	}
}
