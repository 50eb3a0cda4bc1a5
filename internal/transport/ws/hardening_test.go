package ws_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/heap"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/ws"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
)

// TestTokenExpiry: a socket is closed with 1008 when the token it was
// opened with expires, and nothing sent after that is served (the
// regression: calls were still answered on a socket after its token
// expired).
func TestTokenExpiry(t *testing.T) {
	srv := server.New(conformance.New(), server.WithStrict(true))
	h := ws.New(srv)
	expires := time.Now().Add(400 * time.Millisecond)
	withToken := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := &auth.Principal{Subject: "alice", ExpiresAt: expires}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp/ws", withToken)
	ts := newServer(t, mux)
	t.Cleanup(func() { _ = h.Shutdown(context.Background()); srv.Close() })
	cl := dial(t, "ws"+strings.TrimPrefix(ts.URL, "http")+"/mcp/ws", nil)
	initialize(t, cl, "2025-06-18")
	if resp, _ := cl.call(t, "1", "ping", "", nil); resp.msg["result"] == nil {
		t.Fatalf("ping before expiry: %s", resp.raw)
	}
	time.Sleep(time.Until(expires) + 50*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	_ = cl.c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`))
	cancel()
	for {
		select {
		case f, ok := <-cl.frames:
			if !ok {
				if code := websocket.CloseStatus(cl.err); code != ws.CloseTokenExpired {
					t.Fatalf("close code %d (%v), want %d", code, cl.err, ws.CloseTokenExpired)
				}
				return
			}
			t.Fatalf("served after the token expired: %s", f.raw)
		case <-time.After(wait):
			t.Fatal("the socket outlived its token")
		}
	}
}

// TestUnreadSocketBounded: a client that floods a socket with pings and
// never reads the answers is slowed down and dropped; the server's memory
// stays bounded and another client is served meanwhile (the regression:
// 200,000 unread pings took the server to 1 GB).
func TestUnreadSocketBounded(t *testing.T) {
	f := newFixture(t, nil) // the default write timeout: the server waits 10s on a stalled client

	heap0 := heap.InUse()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	flood, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{Subprotocols: []string{ws.Subprotocol}})
	if err != nil {
		t.Fatal(err)
	}
	defer flood.CloseNow()
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`
	if err := flood.Write(ctx, websocket.MessageText, []byte(init)); err != nil {
		t.Fatal(err)
	}
	ping := []byte(`{"jsonrpc":"2.0","id":"p","method":"ping","params":{"_meta":{"pad":"` + strings.Repeat("x", 1000) + `"}}}`)
	var peak uint64
	sent := 0
	for ; sent < 200000; sent++ {
		wctx, wcancel := context.WithTimeout(ctx, 2*time.Second)
		err := flood.Write(wctx, websocket.MessageText, ping)
		wcancel()
		if err != nil {
			break // the server stopped reading
		}
		if sent%5000 == 0 {
			peak = max(peak, heap.InUse())
		}
	}
	peak = max(peak, heap.InUse())
	// Someone else is served all along.
	cl := dial(t, f.url, nil)
	initialize(t, cl, "2025-11-25")
	if resp, _ := cl.call(t, "1", "ping", "", nil); resp.msg["result"] == nil {
		t.Fatalf("another client's ping: %s", resp.raw)
	}
	if sent == 200000 {
		t.Errorf("the server read 200,000 unanswered pings without pushing back")
	}
	if grown := int64(peak) - int64(heap0); grown > 96<<20 {
		t.Errorf("heap grew by %d MiB under an unread flood (%d pings sent)", grown>>20, sent)
	}
	t.Logf("pings sent before the server pushed back: %d; heap growth at peak: %d MiB", sent, (int64(peak)-int64(heap0))>>20)
}

// TestListenBeforeInitializeEndsWithSocket: a stateless listen stream on a
// socket that closes ends with it and gives its slot back (found in
// review: it outlived the socket and held the client's quota for good).
func TestListenBeforeInitializeEndsWithSocket(t *testing.T) {
	f := newFixture(t, []server.Option{server.WithLimits(server.Limits{SessionsPerClient: 2})})
	listen := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for i := range 4 {
		cl := dial(t, f.url, nil)
		cl.send(t, listen)
		if fr := cl.next(t); fr.method() != "notifications/subscriptions/acknowledged" {
			t.Fatalf("round %d: want the acknowledgement, got %s", i, fr.raw)
		}
		_ = cl.c.Close(websocket.StatusNormalClosure, "bye")
		if !eventually(2*time.Second, func() bool { return f.srv.SessionCount() == 0 && core.Of(f.srv).ListenCount() == 0 }) {
			t.Fatalf("round %d: the socket's session or listen stream outlived it", i)
		}
	}
}

// TestRefusedPastConcurrency: a request past the socket's concurrency cap
// is refused at once and the frames after it are still read, so the
// answer a call in flight waits for gets through (found in review: the
// reader blocked on a slot and the call hung until its timeout).
func TestRefusedPastConcurrency(t *testing.T) {
	cl, req := waitingCall(t)
	cl.send(t, `{"jsonrpc":"2.0","id":"extra","method":"ping"}`)
	if busy := cl.next(t); busy.id() != `"extra"` || !strings.Contains(busy.raw, "-32000") {
		t.Fatalf("the request past the cap: %s, want -32000", busy.raw)
	}
	cl.send(t, `{"jsonrpc":"2.0","id":`+req.id()+`,"result":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}`)
	if res := cl.next(t); res.id() != `"call"` || !strings.Contains(res.raw, "Four.") {
		t.Fatalf("the call: %s", res.raw)
	}
}

// TestBusyBatchStillDelivers: past the cap, a batch's requests are refused
// but the answers in it are delivered, and an invalid message still gets
// its error (found in review: a batch blocked the reader, and an invalid
// frame was answered with an empty one).
func TestBusyBatchStillDelivers(t *testing.T) {
	cl, req := waitingCall(t)
	cl.send(t, `{"id":1,"method":"ping"}`) // no "jsonrpc": invalid
	if bad := cl.next(t); !strings.Contains(bad.raw, "-32600") {
		t.Fatalf("an invalid message past the cap: %q, want -32600", bad.raw)
	}
	cl.send(t, `[{"jsonrpc":"2.0","id":"extra","method":"ping"},{"jsonrpc":"2.0","id":`+req.id()+`,"result":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}]`)
	var busy, res frame
	for range 2 {
		fr := cl.next(t)
		if fr.arr != nil {
			busy = fr
		} else {
			res = fr
		}
	}
	if !strings.Contains(busy.raw, `"extra"`) || !strings.Contains(busy.raw, "-32000") {
		t.Errorf("the batch's request: %s, want -32000 in an array", busy.raw)
	}
	if res.id() != `"call"` || !strings.Contains(res.raw, "Four.") {
		t.Errorf("the call: %s, want its result with the answer from the batch", res.raw)
	}
}

// waitingCall opens a socket that serves one request at a time and starts
// a call that waits for the client's sampling answer: the socket's only
// slot is taken. It returns the client and the sampling request.
func waitingCall(t *testing.T) (*client, frame) {
	t.Helper()
	f := newFixture(t, nil, ws.WithMaxConcurrent(1))
	cl := dial(t, f.url, nil)
	initialize(t, cl, "2025-06-18")
	cl.send(t, `{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"}}}`)
	req := cl.next(t)
	if req.method() != "sampling/createMessage" {
		t.Fatalf("want the sampling request, got %s", req.raw)
	}
	return cl, req
}
