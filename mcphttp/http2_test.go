package mcphttp_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

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

// What a stream still holds when its handler returns goes out after it:
// over HTTP/2 that has the write timeout too, so a client that gives the
// server no flow-control window does not hold the stream, and the
// goroutine writing it, for ever.
func TestStreamEndHasADeadlineOnHTTP2(t *testing.T) {
	srv := app.NewServer(app.New("h2", "1"))
	t.Cleanup(srv.Close)
	// SSE answers: a quick call's whole stream is buffered until its end.
	h, _ := mcphttp.Handler(srv, mcphttp.WithWriteTimeout(50*time.Millisecond), mcphttp.WithResponseMode(mcphttp.ResponseSSE))
	hs := httptest.NewUnstartedServer(h)
	hs.EnableHTTP2 = true
	hs.StartTLS()
	t.Cleanup(hs.Close)

	cfg := hs.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	cfg.NextProtos = []string{"h2"}
	conn, err := tls.Dial("tcp", hs.Listener.Addr().String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, http2.ClientPreface); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0}); err != nil {
		t.Fatal(err)
	}
	// post sends a POST on stream id and returns the headers of its
	// answer, and whether the stream was reset within 5s; a DATA frame
	// fails the test, as the client gave no window for one.
	dec := hpack.NewDecoder(4096, nil)
	post := func(id uint32, session, body string) (headers map[string]string, reset bool) {
		t.Helper()
		var block bytes.Buffer
		enc := hpack.NewEncoder(&block)
		fields := [][2]string{{":method", "POST"}, {":scheme", "https"}, {":authority", hs.Listener.Addr().String()}, {":path", "/mcp"},
			{"content-type", "application/json"}, {"accept", "application/json, text/event-stream"}, {"mcp-protocol-version", "2025-11-25"}}
		if session != "" {
			fields = append(fields, [2]string{"mcp-session-id", session})
		}
		for _, f := range fields {
			_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
		}
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: block.Bytes(), EndHeaders: true}); err != nil {
			t.Fatal(err)
		}
		if err := fr.WriteData(id, true, []byte(body)); err != nil {
			t.Fatal(err)
		}
		headers = map[string]string{}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return headers, false
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() {
					_ = fr.WriteSettingsAck()
				}
			case *http2.HeadersFrame:
				fields, _ := dec.DecodeFull(f.HeaderBlockFragment())
				if f.StreamID == id {
					for _, hf := range fields {
						headers[hf.Name] = hf.Value
					}
				}
			case *http2.RSTStreamFrame:
				if f.StreamID == id {
					return headers, true
				}
			case *http2.DataFrame:
				if len(f.Data()) > 0 {
					t.Fatalf("the server sent %d bytes of data into a window of 0", len(f.Data()))
				}
			}
		}
	}
	h1, _ := post(1, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := h1["mcp-session-id"]
	if session == "" {
		t.Fatalf("initialize answered %v: no session", h1)
	}
	if h3, reset := post(3, session, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); h3["content-type"] != "text/event-stream" || !reset {
		t.Fatalf("a ping answered on an event stream (headers %v), reset: %v; want it reset within 5s (write timeout 50ms): the client took nothing", h3, reset)
	}
}
