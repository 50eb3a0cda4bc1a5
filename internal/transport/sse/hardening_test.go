package sse_test

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/bigecho"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/heap"
	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/internal/transport/sse"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
)

// asUser is a stand-in for the auth middleware: ?as=NAME makes the
// request NAME's.
func asUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.URL.Query().Get("as"); u != "" {
			r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Subject: u}))
		}
		next.ServeHTTP(w, r)
	})
}

func newUserFixture(t *testing.T, h mcp.Handler, srvOpts []server.Option, opts ...sse.Option) *fixture {
	t.Helper()
	srv := server.New(h, append([]server.Option{server.WithStrict(true)}, srvOpts...)...)
	sh := sse.New(srv, opts...)
	mux := http.NewServeMux()
	mux.Handle("/sse", asUser(sh.Stream()))
	mux.Handle("/messages", asUser(sh.Messages()))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(func() { sh.Shutdown(); srv.Close() })
	return &fixture{srv: srv, h: sh, base: ts.URL}
}

// TestSessionsBoundToTheirUser: the session id travels in the POST URL,
// but only the user who opened the stream may post to it: another user's
// (or an anonymous) request, response or notification gets 404 and
// nothing of it reaches the session (the regression: any valid token
// could run requests in another user's session, answer its pending
// sampling request and cancel its calls).
func TestSessionsBoundToTheirUser(t *testing.T) {
	f := newUserFixture(t, conformance.New(conformance.WithStepDelay(0)), nil)
	alice := f.open(t, "/sse?as=alice")
	as := func(user string) string { return alice.endpoint + "&as=" + user }
	if st, _ := post(t, as("alice"), "application/json", initBody); st != http.StatusAccepted {
		t.Fatalf("alice's initialize: %d", st)
	}
	alice.message(t)
	post(t, as("alice"), "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for _, who := range []string{"bob", ""} {
		for _, body := range []string{
			`{"jsonrpc":"2.0","id":"bob","method":"ping"}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`,
		} {
			url := alice.endpoint
			if who != "" {
				url = as(who)
			}
			if st, b := post(t, url, "application/json", body); st != http.StatusNotFound {
				t.Errorf("%q posts %s to alice's session: %d %s, want 404", who, body, st, b)
			}
		}
	}
	// Alice's pending sampling request cannot be answered by bob.
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"}}}`
	if st, _ := post(t, as("alice"), "application/json", call); st != http.StatusAccepted {
		t.Fatalf("alice's call: %d", st)
	}
	req := alice.message(t)
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want alice's sampling request, got %v", req)
	}
	answer := func(text string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"role":"assistant","content":{"type":"text","text":%q},"model":"m"}}`, req["id"], text)
	}
	if st, _ := post(t, as("bob"), "application/json", answer("bob's words")); st != http.StatusNotFound {
		t.Errorf("bob answers alice's sampling request: %d, want 404", st)
	}
	if st, _ := post(t, as("alice"), "application/json", answer("Four.")); st != http.StatusAccepted {
		t.Fatalf("alice's answer: %d", st)
	}
	res := alice.message(t)
	if !strings.Contains(fmt.Sprint(res["result"]), "Four.") || res["id"] != 7.0 {
		t.Errorf("alice's call ended with %v, want her own answer", res)
	}
}

// TestUnreadStreamBounded: a client that opens a stream, never reads it
// and posts calls with large answers loses its stream and its session;
// the server holds a bounded number of bytes meanwhile (the regression:
// 200 answers of 3 MB on an unread stream held 1.1 GB).
func TestUnreadStreamBounded(t *testing.T) {
	f := newUserFixture(t, bench.New().Handler(), []server.Option{server.WithLimits(server.Limits{OutputPerStream: 4 << 20, Output: core.DefaultOutputTotal})}, sse.WithMaxBody(4<<20), sse.WithWriteTimeout(3*time.Second))
	heap0 := heap.InUse()
	// A raw connection with a small receive buffer that reads the headers
	// and the endpoint event only.
	addr := strings.TrimPrefix(f.base, "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /sse HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", addr)
	buf := make([]byte, 4096)
	var head string
	for !strings.Contains(head, "sessionId=") || !strings.Contains(head[strings.Index(head, "sessionId="):], "\n") {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading the endpoint event: %v (%q)", err, head)
		}
		head += string(buf[:n])
	}
	rest := head[strings.Index(head, "sessionId=")+len("sessionId="):]
	endpoint := f.base + "/messages?sessionId=" + rest[:strings.IndexAny(rest, "\r\n")]
	post(t, endpoint, "application/json", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	post(t, endpoint, "application/json", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	big := strings.Repeat("x", 3<<20)
	var peak uint64
	posted, refused := 0, 0
	for ; posted < 200; posted++ {
		st, _ := post(t, endpoint, "application/json", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, posted+1, big))
		if st == http.StatusNotFound {
			break // the session is gone with its stream
		}
		if st == http.StatusTooManyRequests {
			refused++ // answers wait unread: no more work is taken
		}
		if posted%10 == 0 {
			peak = max(peak, heap.InUse())
		}
	}
	peak = max(peak, heap.InUse())
	if posted == 200 {
		t.Errorf("the unread stream was kept through 200 answers of 3 MB")
	}
	if refused == 0 {
		t.Errorf("no call was refused while the stream's answers waited unread")
	}
	if grown := int64(peak) - int64(heap0); grown > 128<<20 {
		t.Errorf("heap grew by %d MiB for an unread stream", grown>>20)
	}
	if held := core.Of(f.srv).OutputHeld(); held > core.DefaultOutputPerStream+4<<20 {
		t.Errorf("the server holds %d bytes of unsent output", held)
	}
	t.Logf("calls posted before the session ended: %d (%d refused with 429); heap growth at peak: %d MiB", posted, refused, (int64(peak)-int64(heap0))>>20)
}

// TestSessionIDNotLogged: a session id is a bearer of access (it is in
// the POST URL): it is never logged above debug, not when the session
// expires either (the regression: "session expired" at info with the id).
func TestSessionIDNotLogged(t *testing.T) {
	var logs lockedLog
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	f := newUserFixture(t, conformance.New(), []server.Option{server.WithLogger(log), server.WithLimits(server.Limits{SessionIdle: 100 * time.Millisecond})})
	s := f.open(t, "/sse?as=alice")
	post(t, s.endpoint+"&as=bob", "application/json", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	s.waitEnd(t) // expired
	if strings.Contains(logs.String(), s.id) {
		t.Errorf("the session id was logged at info or above:\n%s", logs.String())
	}
}

type lockedLog = syncbuf.Buffer

// TestReadingClientKeepsItsStream: a client that reads gets every one of
// several large answers at once, more than one stream may have in
// progress: they wait for each other instead of closing the stream (found
// in review).
func TestReadingClientKeepsItsStream(t *testing.T) {
	f := newUserFixture(t, bigecho.New().Handler(), nil)
	s := f.open(t, "/sse")
	s.initialize(t)
	const calls = 5 // 5 x 3 MiB, over the 8 MiB one stream may have in progress
	// The client reads as it goes, as a real one does; a POST that finds
	// answers not read yet gets 429 with Retry-After, and is sent again.
	answers := make(chan map[string]any, calls)
	go func() {
		for range calls {
			answers <- s.message(t)
		}
	}()
	for i := range calls {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"big","arguments":{"mib":3}}}`, 10+i)
		st, _ := post(t, s.endpoint, "application/json", body)
		for tries := 0; st == http.StatusTooManyRequests && tries < 200; tries++ {
			time.Sleep(25 * time.Millisecond)
			st, _ = post(t, s.endpoint, "application/json", body)
		}
		if st != http.StatusAccepted {
			t.Fatalf("call %d: %d", i, st)
		}
	}
	for range calls {
		if m := <-answers; m["result"] == nil {
			t.Fatalf("want an answer, got %.200v", m)
		}
	}
	if st, _ := post(t, s.endpoint, "application/json", `{"jsonrpc":"2.0","id":99,"method":"ping"}`); st != http.StatusAccepted {
		t.Errorf("the session after the large answers: %d", st)
	}
}
