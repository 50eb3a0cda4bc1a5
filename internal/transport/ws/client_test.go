package ws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/ws"
	"github.com/mcpstack/mcpstack/server"
)

const wait = 5 * time.Second

// fixture is a server with the handler mounted at /mcp/ws of a loopback
// httptest server, stopped at the end of the test.
type fixture struct {
	srv *server.Server
	h   *ws.Handler
	ts  *httptest.Server
	url string // ws://127.0.0.1:port/mcp/ws
}

func newFixture(t *testing.T, srvOpts []server.Option, opts ...ws.Option) *fixture {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), append([]server.Option{server.WithStrict(true)}, srvOpts...)...)
	h := ws.New(srv, opts...)
	mux := http.NewServeMux()
	mux.Handle("/mcp/ws", h)
	ts := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(ts.Close)           // last
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		srv.Close()
	})
	return &fixture{srv: srv, h: h, ts: ts, url: "ws" + strings.TrimPrefix(ts.URL, "http") + "/mcp/ws"}
}

// frame is one message the client received.
type frame struct {
	typ websocket.MessageType
	raw string
	msg map[string]any // nil for a batch
	arr []any          // a batch answer
}

func (f frame) id() string {
	if f.msg == nil || f.msg["id"] == nil {
		return ""
	}
	b, _ := json.Marshal(f.msg["id"])
	return string(b)
}

func (f frame) method() string { s, _ := f.msg["method"].(string); return s }

// client is a WebSocket MCP client built on github.com/coder/websocket:
// it reads frames into a channel, so that a test sees them in order.
type client struct {
	c      *websocket.Conn
	frames chan frame
	err    error // set before frames is closed: why the socket ended
}

func dial(t *testing.T, url string, opts *websocket.DialOptions) *client {
	t.Helper()
	if opts == nil {
		opts = &websocket.DialOptions{Subprotocols: []string{ws.Subprotocol}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (HTTP %d)", url, err, status)
	}
	if c.Subprotocol() != ws.Subprotocol {
		t.Errorf("negotiated subprotocol %q, want %q", c.Subprotocol(), ws.Subprotocol)
	}
	c.SetReadLimit(16 << 20)
	cl := &client{c: c, frames: make(chan frame, 256)}
	go cl.read()
	t.Cleanup(func() { _ = c.CloseNow() })
	return cl
}

func (cl *client) read() {
	defer close(cl.frames)
	for {
		typ, b, err := cl.c.Read(context.Background())
		if err != nil {
			cl.err = err
			return
		}
		f := frame{typ: typ, raw: string(b)}
		if strings.HasPrefix(strings.TrimSpace(f.raw), "[") {
			_ = json.Unmarshal(b, &f.arr)
		} else {
			_ = json.Unmarshal(b, &f.msg)
		}
		cl.frames <- f
	}
}

func (cl *client) send(t *testing.T, msg string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := cl.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write %s: %v", msg, err)
	}
}

func (cl *client) next(t *testing.T) frame {
	t.Helper()
	select {
	case f, ok := <-cl.frames:
		if !ok {
			t.Fatalf("the socket closed: %v", cl.err)
		}
		return f
	case <-time.After(wait):
		t.Fatal("no frame within 5s")
	}
	panic("unreachable")
}

// closed waits for the socket to end and returns the close code the server
// sent (-1: none).
func (cl *client) closed(t *testing.T) websocket.StatusCode {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case f, ok := <-cl.frames:
			if !ok {
				return websocket.CloseStatus(cl.err)
			}
			t.Logf("frame before the close: %s", f.raw)
		case <-timeout:
			t.Fatal("the socket did not close within 5s")
		}
	}
}

// call sends a request and reads until its response; the frames before it
// (notifications, server requests) are returned too. Server requests are
// answered with answer(request) when answer is not nil.
func (cl *client) call(t *testing.T, id, method, params string, answer func(frame) string) (frame, []frame) {
	t.Helper()
	msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q`, id, method)
	if params != "" {
		msg += `,"params":` + params
	}
	cl.send(t, msg+"}")
	var before []frame
	for {
		f := cl.next(t)
		if f.typ != websocket.MessageText {
			t.Fatalf("frame of type %v, want text", f.typ)
		}
		if f.msg != nil && f.method() == "" && f.id() == id {
			return f, before
		}
		before = append(before, f)
		if f.method() != "" && f.id() != "" && answer != nil {
			cl.send(t, answer(f))
		}
	}
}

// result returns the result of a response, failing on an error.
func result(t *testing.T, f frame) map[string]any {
	t.Helper()
	r, ok := f.msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %s", f.raw)
	}
	return r
}

// toolText returns the single text block of a tools/call result.
func toolText(t *testing.T, f frame) string {
	t.Helper()
	r := result(t, f)
	content, _ := r["content"].([]any)
	if len(content) != 1 || r["isError"] == true {
		t.Fatalf("tool result %s, want one content block, no error", f.raw)
	}
	block, _ := content[0].(map[string]any)
	if block["type"] != "text" {
		t.Fatalf("tool content %v, want text", block)
	}
	return block["text"].(string)
}

func initialize(t *testing.T, cl *client, rev string) map[string]any {
	t.Helper()
	resp, before := cl.call(t, "0", "initialize",
		fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{"sampling":{}},"clientInfo":{"name":"ws-test","version":"1"}}`, rev), nil)
	if len(before) != 0 {
		t.Errorf("frames before the initialize answer: %v", before)
	}
	cl.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return result(t, resp)
}

// dialStatus attempts a handshake and returns the HTTP status and body.
func dialStatus(t *testing.T, url string, opts *websocket.DialOptions) (int, string, *websocket.Conn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, opts)
	if err == nil {
		t.Cleanup(func() { _ = c.CloseNow() })
		return resp.StatusCode, "", c
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	var body strings.Builder
	if resp.Body != nil {
		b := make([]byte, 1024)
		n, _ := resp.Body.Read(b)
		body.Write(b[:n])
	}
	return resp.StatusCode, body.String(), nil
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	ts := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(ts.Close)
	return ts
}

var errTimeout = errors.New("timed out")

// within runs f and waits up to d for it.
func within(d time.Duration, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return errTimeout
	}
}
