package streamable_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/bigecho"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/heap"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
)

// newEchoEnv serves bigEcho: echo answers as large as the question, big
// as large as asked.
func newEchoEnv(t *testing.T, sopts []server.Option, opts ...streamable.Option) *env {
	t.Helper()
	srv := server.New(bigecho.New().Handler(), append([]server.Option{server.WithValidation(false)}, sopts...)...)
	h := streamable.New(srv, append([]streamable.Option{streamable.WithMaxBody(32 << 20)}, opts...)...)
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Shutdown()
		ts.Close()
		srv.Close()
	})
	return &env{t: t, url: ts.URL, srv: srv}
}

func echoCall(id int, text string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)
}

// TestStoredEventsBoundedInBytes: answers kept for resumption are bounded
// in bytes per session, not only in number (the regression: 300 answers
// of 4 MB in one session took the server to 2.3 GB and kept it there).
func TestStoredEventsBoundedInBytes(t *testing.T) {
	e := newEchoEnv(t, nil)
	sid := e.initialize()
	heap0 := heap.InUse()
	big := strings.Repeat("x", 4<<20)
	for i := range 24 {
		resp, body := e.do(req{body: echoCall(i+1, big), headers: map[string]string{"Mcp-Session-Id": sid}})
		if resp.StatusCode != 200 || !strings.Contains(body, `"result"`) {
			t.Fatalf("call %d: %d %.200s", i, resp.StatusCode, body)
		}
	}
	if grown := int64(heap.InUse()) - int64(heap0); grown > 40<<20 {
		t.Errorf("24 answers of 4 MB kept %d MiB in the server", grown>>20)
	}
}

// TestEventStoreSweeps: expired events of a session nobody uses go when
// another session is used, and the store stays within its total.
func TestEventStoreSweeps(t *testing.T) {
	m := streamable.NewMemoryEventStore(1024, 50*time.Millisecond, streamable.WithEventBytes(1<<20, 3<<20))
	first, _ := m.Append("idle", "a", make([]byte, 1000))
	m.Append("idle", "a", make([]byte, 1000))
	time.Sleep(80 * time.Millisecond)
	m.Append("busy", "b", make([]byte, 10))
	if b := m.Bytes(); b != 10 {
		t.Errorf("the store keeps %d bytes after the idle session's events expired, want 10", b)
	}
	if _, err := m.Replay("idle", first, func(string, []byte) error { return nil }); !errors.Is(err, streamable.ErrEventsGone) {
		t.Errorf("resuming the idle session: %v, want ErrEventsGone", err)
	}
	for i := range 10 { // four sessions of 1 MiB against a total of 3 MiB
		m.Append(fmt.Sprint("s", i%4), "x", make([]byte, 400<<10))
	}
	if b := m.Bytes(); b > 3<<20 {
		t.Errorf("the store keeps %d bytes, over its total of 3 MiB", b)
	}
}

// stall opens a session and posts a call whose 16 MB answer the client
// never reads: the server's write blocks.
func stall(t *testing.T, e *env, host string) (sid string, conn net.Conn) {
	t.Helper()
	sid = e.initialize()
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"mib":16}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
		host, sid, len(body), body)
	// Wait until the server writes the answer and holds it.
	for deadline := time.Now().Add(10 * time.Second); core.Of(e.srv).OutputHeld() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the server never started writing the answer")
		}
	}
	return sid, conn
}

// TestStalledStreamStallsOnlyItself: a client that never reads its SSE
// answer delays neither the expiry of idle sessions nor a DELETE of its
// own session (the regression: the expiry loop and the DELETE hung on the
// blocked write for minutes).
func TestStalledStreamStallsOnlyItself(t *testing.T) {
	t.Run("expiry", func(t *testing.T) {
		e := newEchoEnv(t, []server.Option{server.WithLimits(server.Limits{SessionIdle: time.Second})})
		stalled, _ := stall(t, e, strings.TrimPrefix(e.url, "http://"))
		gone := func(sid string) bool {
			for deadline := time.Now().Add(4 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
				if _, ok := core.Of(e.srv).Session(sid); !ok {
					return true
				}
			}
			return false
		}
		if !gone(stalled) {
			t.Fatal("the stalled session outlived its idle timeout by 3s or more")
		}
		// The expiry of the stalled session is done: the next one expires
		// on time too.
		if idle := e.initialize(); !gone(idle) {
			t.Errorf("an idle session outlived its 1s idle timeout by 3s or more behind a stalled stream")
		}
	})
	t.Run("delete", func(t *testing.T) {
		e := newEchoEnv(t, nil)
		sid, _ := stall(t, e, strings.TrimPrefix(e.url, "http://"))
		done := make(chan int, 1)
		go func() {
			hr, _ := http.NewRequest(http.MethodDelete, e.url, nil)
			hr.Header.Set("Mcp-Session-Id", sid)
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				done <- 0
				return
			}
			resp.Body.Close()
			done <- resp.StatusCode
		}()
		select {
		case st := <-done:
			if st != http.StatusNoContent {
				t.Errorf("DELETE: %d, want 204", st)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("DELETE of a session with a stalled stream hung")
		}
	})
}

// TestStalledJSONAnswerTimesOut: a JSON answer larger than net/http's
// buffers, to a client that does not read it, counts against the output
// budget while it waits, and its write ends at the write timeout: the
// handler returns and the bytes are given back (the regression: the
// handler blocked in Write for as long as the client kept the connection
// open, holding the 16 MB answer, outside the budget).
func TestStalledJSONAnswerTimesOut(t *testing.T) {
	e := newEchoEnv(t, nil, streamable.WithResponseMode(streamable.JSON), streamable.WithWriteTimeout(300*time.Millisecond))
	stall(t, e, strings.TrimPrefix(e.url, "http://"))
	for deadline := time.Now().Add(3 * time.Second); core.Of(e.srv).OutputHeld() != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled answer still holds %d bytes 3s after its 300ms write timeout", core.Of(e.srv).OutputHeld())
		}
	}
	// The connection serves no one else meanwhile; a new one is served.
	sid := e.initialize()
	resp, body := e.do(req{body: echoCall(2, "after"), headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != 200 || !strings.Contains(body, `"after"`) {
		t.Fatalf("a call after the stall: %d %.200s", resp.StatusCode, body)
	}
}

// TestClientQuotaOverHTTP: a client over its share of the sessions gets
// 429 with Retry-After; the server's own cap stays 503.
func TestClientQuotaOverHTTP(t *testing.T) {
	e := newEchoEnv(t, []server.Option{server.WithLimits(server.Limits{Sessions: 100, SessionsPerClient: 2})})
	e.initialize()
	e.initialize()
	resp, body := e.do(req{body: initBody})
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "-32000") {
		t.Errorf("third session of one client: %d %q %s, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
}

// TestLargeJSONAnswerOverBudget: a JSON answer the server's output
// budget has no room for is refused before its headers, 503 with
// Retry-After, not cut off after a Content-Length it promised.
func TestLargeJSONAnswerOverBudget(t *testing.T) {
	e := newEchoEnv(t, []server.Option{server.WithLimits(server.Limits{Output: 1 << 20})}, streamable.WithResponseMode(streamable.JSON))
	sid := e.initialize()
	resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"mib":2}}}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(body, "-32000") {
		t.Fatalf("an answer over the budget: %d, Retry-After %q, %.200s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	resp, body = e.do(req{body: echoCall(2, "small"), headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != 200 || !strings.Contains(body, `"small"`) {
		t.Fatalf("a small answer after it: %d %.200s", resp.StatusCode, body)
	}
}

// TestSlowReaderGetsLargeJSONAnswer: a client that reads a large JSON
// answer steadily gets all of it, though that takes over twice the write
// timeout: the timeout is for a client that stops taking it. (The kernel
// wakes a blocked write once half the send buffer drained, up to 2 MB
// here: the client reads at up to 10 MB/s, so that this takes a fraction
// of the timeout, and 24 MB take at least 2.3 s, over twice it.)
func TestSlowReaderGetsLargeJSONAnswer(t *testing.T) {
	const timeout = time.Second
	e := newEchoEnv(t, nil, streamable.WithResponseMode(streamable.JSON), streamable.WithWriteTimeout(timeout))
	sid := e.initialize()
	host := strings.TrimPrefix(e.url, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(64 << 10)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{"mib":24}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\nContent-Length: %d\r\n\r\n%s",
		host, sid, len(body), body)
	resp, err := http.ReadResponse(bufio.NewReaderSize(conn, 4096), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start, got := time.Now(), 0
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		got += n
		if err != nil {
			if err != io.EOF {
				t.Fatalf("after %d of %d bytes in %v: %v", got, resp.ContentLength, time.Since(start), err)
			}
			break
		}
		time.Sleep(3 * time.Millisecond) // 32 KB per 3 ms at most: the answer takes over two timeouts
	}
	if took := time.Since(start); got != int(resp.ContentLength) || took < 2*timeout {
		t.Fatalf("read %d of %d bytes in %v; want all of it, over more than %v", got, resp.ContentLength, took, 2*timeout)
	}
}

// TestKeepAliveAfterWriteDeadline: a response whose writes had deadlines
// (an event stream, a large JSON answer) leaves none behind on its
// connection: the next request on it, after the deadline would have
// passed, is answered (the regression: its answer failed to write, and
// the client saw EOF for a call that ran).
func TestKeepAliveAfterWriteDeadline(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode streamable.ResponseMode
		text string
	}{
		{"event stream", streamable.SSE, "short"},
		{"large JSON answer", streamable.JSON, strings.Repeat("x", 64<<10)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEchoEnv(t, nil, streamable.WithResponseMode(tt.mode), streamable.WithWriteTimeout(100*time.Millisecond))
			sid := e.initialize()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			defer client.CloseIdleConnections()
			reused := false
			call := func(id int) {
				hr, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(echoCall(id, tt.text)))
				hr.Header.Set("Content-Type", "application/json")
				hr.Header.Set("Accept", "application/json, text/event-stream")
				hr.Header.Set("Mcp-Session-Id", sid)
				hr.Header.Set("Mcp-Protocol-Version", "2025-11-25")
				hr = hr.WithContext(httptrace.WithClientTrace(hr.Context(), &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = i.Reused }}))
				resp, err := client.Do(hr)
				if err != nil {
					t.Fatalf("call %d: %v", id, err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil || !strings.Contains(string(body), `"result"`) {
					t.Fatalf("call %d: %d %v %.200s", id, resp.StatusCode, err, body)
				}
			}
			call(1)
			time.Sleep(500 * time.Millisecond) // past any deadline the first response set
			call(2)
			if !reused {
				t.Fatal("the second call took a new connection: the test proves nothing")
			}
		})
	}
}

// TestBatchOfMillionsIsOneError: a body of two million batch elements is
// one 400 with -32600, in milliseconds. Each element used to be answered:
// one such request held 1.5 GB of answers for five seconds, then 503.
func TestBatchOfMillionsIsOneError(t *testing.T) {
	e := newEchoEnv(t, nil, streamable.WithMaxBody(5<<20))
	sid := e.initialize()
	start := time.Now()
	resp, body := e.do(req{body: "[" + strings.Repeat("0,", 2<<20) + "0]", headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, `"code":-32600`) || !strings.Contains(body, "a batch of more than 256 messages") {
		t.Errorf("%d %.200s, want 400 with -32600 naming the bound", resp.StatusCode, body)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}
