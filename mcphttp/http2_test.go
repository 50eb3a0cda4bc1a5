package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/peer"
)

// Over HTTP/2 a write deadline resets its stream when it passes, whether
// anything is being written or not: a call that streams a notification
// and then works quietly for longer than the write timeout still gets
// its answer, and so does a GET stream quiet for as long.
func TestQuietStreamsLiveOnHTTP2(t *testing.T) {
	const timeout = 50 * time.Millisecond // a stream's deadline is at most twice it ahead
	a := app.New("h2", "1")
	type in struct{}
	app.AddTool(a, app.Tool{Name: "quiet"}, func(ctx context.Context, _ in) (string, error) {
		if err := peer.Progress(ctx, 1, nil, "started"); err != nil {
			return "", err
		}
		time.Sleep(10 * timeout)
		return "done", nil
	})
	stuck := make(chan error, 1)
	app.AddTool(a, app.Tool{Name: "loud"}, func(ctx context.Context, _ in) (string, error) {
		for range 10_000 { // 40 MB, far more than HTTP/2's flow-control windows hold
			if err := peer.Progress(ctx, 1, nil, strings.Repeat("x", 4096)); err != nil {
				stuck <- err
				return "", err
			}
		}
		stuck <- nil
		return "all sent", nil
	})
	srv := app.NewServer(a)
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithWriteTimeout(timeout))
	hs := httptest.NewUnstartedServer(h)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(hs.Close)
	client := hs.Client()

	post := func(session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		if resp.ProtoMajor != 2 {
			t.Fatalf("served over HTTP/%d, want 2", resp.ProtoMajor)
		}
		return resp
	}
	resp := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, session)
	}
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The GET stream, quiet from the start.
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	get, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { get.Body.Close() })
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d", get.StatusCode)
	}

	resp = post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quiet","arguments":{},"_meta":{"progressToken":"p"}}}`)
	body, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(body), `"notifications/progress"`) || !strings.Contains(string(body), `"text":"done"`) {
		t.Fatalf("a call quiet for 10x the write timeout after its first notification: %v, body %q; want the progress and the answer", err, body)
	}

	// The GET stream has been quiet for as long, and still carries what
	// the server sends.
	srv.Broadcast(context.Background(), "notifications/tools/list_changed", nil)
	got := make(chan string, 1)
	go func() {
		var seen []byte
		buf := make([]byte, 512)
		for !strings.Contains(string(seen), "list_changed") {
			n, err := get.Body.Read(buf)
			seen = append(seen, buf[:n]...)
			if err != nil {
				got <- string(seen) + " (" + err.Error() + ")"
				return
			}
		}
		got <- string(seen)
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, "list_changed") {
			t.Errorf("the quiet GET stream: %q, want the notification", s)
		}
	case <-time.After(5 * time.Second):
		t.Error("the quiet GET stream carried nothing in 5s")
	}

	// A client that does not read what a call streams still loses the
	// stream once a write has waited past the deadline (the call runs on,
	// its events kept for resumption), rather than holding the writer.
	resp = post(session, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"loud","arguments":{},"_meta":{"progressToken":"q"}}}`)
	select {
	case <-stuck:
	case <-time.After(20 * time.Second):
		t.Fatal("a call writing to a client that reads nothing is still blocked after 20s (write timeout 50ms)")
	}
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Errorf("a client that read nothing until the call had ended got all its stream (%d bytes): want the stream reset", n)
	}
}
