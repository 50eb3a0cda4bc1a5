package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// misbehaving is a handler with the faults a server must survive.
type misbehaving struct {
	mcp.UnimplementedHandler // tests only
	started                  chan struct{}
	cancelled                chan struct{}
}

func (misbehaving) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return &mcp.InitializeResult{ServerInfo: mcp.Implementation{Name: "m", Version: "1"}}, nil
}

func (misbehaving) Ping(context.Context, *mcp.RequestParams) (*mcp.EmptyResult, error) {
	return &mcp.EmptyResult{}, nil
}

func (m *misbehaving) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	switch p.Name {
	case "panic":
		panic("boom")
	case "invalid":
		// A priority above 1: invalid under every revision.
		high := 5.0
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: &high}}}}, nil
	case "nil":
		return nil, nil
	case "secret":
		return nil, context.DeadlineExceeded
	case "coded":
		return nil, wire.NewError(-32042, "needs a browser")
	case "block":
		close(m.started)
		<-ctx.Done()
		close(m.cancelled)
		return nil, ctx.Err()
	case "ask":
		_, err := peer.ListRoots(ctx)
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: errText(err)}}}, nil
	}
	return nil, wire.NewError(wire.CodeInvalidParams, "unknown tool %q", p.Name)
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func newSession(t *testing.T, h mcp.Handler, opts ...core.Option) (*core.Session, *recorder) {
	t.Helper()
	srv := newServer(h, append([]core.Option{core.WithStrict(true)}, opts...)...)
	t.Cleanup(srv.Close)
	out := &recorder{}
	sess, err := srv.NewSession("", out)
	if err != nil {
		t.Fatal(err)
	}
	reply := sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"t","version":"1"}}}`), out)
	if !strings.Contains(string(reply), `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", reply)
	}
	return sess, out
}

func call(name string) []byte {
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `"}}`)
}

func TestHandlerFaults(t *testing.T) {
	sess, out := newSession(t, &misbehaving{})
	tests := []struct{ tool, want string }{
		{"panic", `"code":-32603,"message":"Internal error"`},
		{"invalid", `"code":-32603,"message":"Internal error: the server produced an invalid result"`},
		{"nil", `"code":-32603`},
		{"coded", `"code":-32042,"message":"needs a browser"`},
		{"nope", `"code":-32602,"message":"unknown tool \"nope\""`},
	}
	for _, tt := range tests {
		reply := string(sess.Handle(context.Background(), call(tt.tool), out))
		if !strings.Contains(reply, tt.want) {
			t.Errorf("%s: %s, want %s", tt.tool, reply, tt.want)
		}
	}
	// and the session still serves
	if reply := string(sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":9,"method":"ping"}`), out)); !strings.Contains(reply, `"result":{}`) {
		t.Errorf("ping after faults: %s", reply)
	}
}

// TestCancellation: notifications/cancelled cancels the handler's context
// and the request gets no answer.
func TestCancellation(t *testing.T) {
	h := &misbehaving{started: make(chan struct{}), cancelled: make(chan struct{})}
	sess, out := newSession(t, h)
	replies := make(chan []byte, 1)
	go func() { replies <- sess.Handle(context.Background(), call("block"), out) }()
	<-h.started
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`), out)
	select {
	case <-h.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("handler context not cancelled")
	}
	if r := <-replies; r != nil {
		t.Errorf("a cancelled request was answered: %s", r)
	}
}

// TestSessionEndCancelsCalls: the session's end cancels the calls in
// flight, and a call that reaches a session that has ended starts
// cancelled.
func TestSessionEndCancelsCalls(t *testing.T) {
	h := &misbehaving{started: make(chan struct{}), cancelled: make(chan struct{})}
	sess, out := newSession(t, h)
	go sess.Handle(context.Background(), call("block"), out)
	select {
	case <-h.started:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not start")
	}
	sess.Close()
	select {
	case <-h.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("a call in flight was not cancelled by the session's end")
	}
	late := &misbehaving{started: make(chan struct{}), cancelled: make(chan struct{})}
	sess2, out2 := newSession(t, late)
	sess2.Close()
	done := make(chan struct{})
	go func() { sess2.Handle(context.Background(), call("block"), out2); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a call on an ended session was not cancelled")
	}
}

// TestServerRequestTimeout: a client that never answers a server-to-client
// request makes the call fail after the timeout, with a cancellation sent.
func TestServerRequestTimeout(t *testing.T) {
	sess, out := newSession(t, &misbehaving{}, core.WithCallTimeout(50*time.Millisecond))
	reply := string(sess.Handle(context.Background(), call("ask"), out))
	if !strings.Contains(reply, "did not answer roots/list") {
		t.Errorf("reply %s", reply)
	}
	var sawRequest, sawCancel bool
	for _, m := range out.take() {
		sawRequest = sawRequest || strings.Contains(string(m), `"method":"roots/list"`)
		sawCancel = sawCancel || strings.Contains(string(m), `"method":"notifications/cancelled"`)
	}
	if !sawRequest || !sawCancel {
		t.Errorf("request sent %v, cancellation sent %v", sawRequest, sawCancel)
	}
}

// TestServerRequestAnswered: the client's answer, delivered as its own
// message, completes a server-to-client request; it is validated.
func TestServerRequestAnswered(t *testing.T) {
	sess, out := newSession(t, &misbehaving{})
	replies := make(chan string, 1)
	go func() { replies <- string(sess.Handle(context.Background(), call("ask"), out)) }()
	var id string
	for deadline := time.Now().Add(5 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, m := range out.take() {
			if s := string(m); strings.Contains(s, `"method":"roots/list"`) {
				id = s[strings.Index(s, `"id":`)+5 : strings.Index(s, `,"method"`)]
			}
		}
	}
	if id == "" {
		t.Fatal("no roots/list request")
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":`+id+`,"result":{"roots":[{"uri":"file:///tmp"}]}}`), out)
	if r := <-replies; !strings.Contains(r, `"text":"ok"`) {
		t.Errorf("reply %s", r)
	}
}

// TestIdleSessionsExpire: a session unused for the idle timeout is closed.
func TestIdleSessionsExpire(t *testing.T) {
	srv := newServer(&misbehaving{}, core.WithSessionIdleTimeout(50*time.Millisecond))
	defer srv.Close()
	sess, err := srv.NewSession("", nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sess.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("idle session not closed")
	}
	if _, ok := srv.Session(sess.ID()); ok || srv.SessionCount() != 0 {
		t.Error("expired session still listed")
	}
}

// TestMaxInflight: a request over the per-session cap is refused at once,
// and the session goes on.
func TestMaxInflight(t *testing.T) {
	h := &misbehaving{started: make(chan struct{}), cancelled: make(chan struct{})}
	sess, out := newSession(t, h, core.WithMaxInflight(1))
	done := make(chan []byte, 1)
	go func() { done <- sess.Handle(context.Background(), call("block"), out) }()
	<-h.started
	reply := string(sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"nope"}}`), out))
	if !strings.Contains(reply, `"code":-32000`) || !strings.Contains(reply, "in flight") {
		t.Errorf("over the cap: %s", reply)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`), out)
	<-done
	if reply := string(sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`), out)); !strings.Contains(reply, `"result":{}`) {
		t.Errorf("after the cap: %s", reply)
	}
}

// A body of millions of batch elements is one error, read no further:
// each element of a batch is answered, so without a bound one request of
// 4 MiB would make two million answers (and log lines).
func TestBatchBound(t *testing.T) {
	body := []byte("[" + strings.Repeat("0,", 2<<20) + "0]")
	for _, tt := range []struct {
		batches bool
		message string
	}{
		{true, "Invalid Request: a batch of more than 256 messages"},
		{false, "Invalid Request: batches are not accepted"},
	} {
		sess, _ := newSession(t, &misbehaving{}, core.WithBatches(tt.batches))
		reply := sess.Handle(context.Background(), body, nil)
		want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"` + tt.message + `"}}`
		if string(reply) != want {
			t.Errorf("batches %v: reply %.300s, want %s", tt.batches, reply, want)
		}
	}
}

// A stateless request is one message: a batch, even one too long to
// parse, is told so.
func TestStatelessBatch(t *testing.T) {
	srv := newServer(&misbehaving{})
	t.Cleanup(srv.Close)
	want := `{"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: a stateless request is one message, not a batch"}}`
	for _, body := range []string{"[" + strings.Repeat("0,", 2<<20) + "0]", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`} {
		reply, code := srv.ServeStateless(context.Background(), srv.Parse([]byte(body)), nil, nil)
		if string(reply) != want || code != wire.CodeInvalidRequest {
			t.Errorf("%.40s: %d %.300s, want %s", body, code, reply, want)
		}
	}
}

// askingHandler's tool asks the client for its roots with a _meta map the
// handler shares between its calls.
type askingHandler struct {
	misbehaving
	meta map[string]any
}

func (h *askingHandler) CallTool(ctx context.Context, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	params := &mcp.ListRootsRequestParams{Meta: h.meta}
	if _, err := peer.Ask(ctx, map[string]peer.Input{"r": {Method: mcp.MethodListRoots, Params: params}}); err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{}}, nil
}

// metaWriter is an observer that puts a trace context in the _meta of
// what the server asks the client, as package observe does.
type metaWriter struct{}

func (metaWriter) Serve(ctx context.Context, _ core.Served) (context.Context, any) { return ctx, nil }
func (metaWriter) Finish(any, core.Answer)                                         {}
func (metaWriter) SessionEnded(core.EndedSession)                                  {}
func (metaWriter) Ask(_ context.Context, _ core.Asked, meta map[string]any) func(int) {
	meta["traceparent"] = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	return func(int) {}
}

// The observer writes the trace context into a copy of the request's
// _meta, never into a map of the handler's: one the handler shares
// between concurrent calls would be written concurrently.
func TestAskLeavesTheCallersMetaAlone(t *testing.T) {
	h := &askingHandler{meta: map[string]any{"a": "b"}}
	sess, out := newSession(t, h, core.WithObserver(metaWriter{}))
	done := make(chan []byte, 1)
	go func() { done <- sess.Handle(context.Background(), call("ask"), out) }()
	var asked map[string]any
	for deadline := time.Now().Add(5 * time.Second); asked == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, m := range out.take() {
			var msg map[string]any
			if json.Unmarshal(m, &msg) == nil && msg["method"] == mcp.MethodListRoots {
				asked = msg
			}
		}
	}
	if asked == nil {
		t.Fatal("no roots/list request")
	}
	meta, _ := asked["params"].(map[string]any)["_meta"].(map[string]any)
	if meta["traceparent"] == nil || meta["a"] != "b" {
		t.Errorf("the request's _meta %v, want the handler's members and the trace context", meta)
	}
	sess.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"roots":[]}}`, asked["id"])), nil)
	if reply := <-done; !strings.Contains(string(reply), `"result"`) {
		t.Errorf("the call: %s", reply)
	}
	if len(h.meta) != 1 {
		t.Errorf("the handler's map is now %v: the observer wrote into it", h.meta)
	}
}
