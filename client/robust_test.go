package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/wire"
)

// scripted is a Streamable HTTP server that negotiates, then answers ping
// with fn.
func scripted(t *testing.T, fn func(w http.ResponseWriter, r *http.Request, id string)) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &msg)
		switch {
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, msg.ID)
		case msg.Method == "ping":
			fn(w, r, string(msg.ID))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A call fails, instead of waiting for ever, when its answer cannot come:
// a response stream that ends first, or an HTTP error whose JSON-RPC
// error has no id.
func TestCallsFailRatherThanHang(t *testing.T) {
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request, id string)
		check func(error) bool
	}{
		{"a stream that ends without the answer", func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fmt.Fprint(w, ": nothing\n\n")
		}, func(err error) bool { var ae *client.AnswerError; return errors.As(err, &ae) }},
		{"an HTTP error with an id-less JSON-RPC error", func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: No valid session ID provided"}}`)
		}, func(err error) bool { var we *wire.Error; return errors.As(err, &we) && we.Code == -32000 }},
		{"an HTTP error without a body", func(w http.ResponseWriter, _ *http.Request, _ string) {
			w.WriteHeader(http.StatusInternalServerError)
		}, func(err error) bool { var he *client.HTTPError; return errors.As(err, &he) && he.Status == 500 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: scripted(t, tc.serve), NoListen: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			start := time.Now()
			_, err = s.Ping(ctx, nil)
			if !tc.check(err) || time.Since(start) > 5*time.Second {
				t.Errorf("after %v: %v (%T)", time.Since(start).Round(time.Millisecond), err, err)
			}
		})
	}
}

// A response stream that the server keeps open after the answer is closed
// by the client once the answer is in: each call would otherwise hold a
// connection and a goroutine until the session ends.
func TestStreamClosedAfterItsAnswer(t *testing.T) {
	closed := make(chan bool, 1)
	url := scripted(t, func(w http.ResponseWriter, r *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		w.(http.Flusher).Flush()
		select { // and then nothing, for as long as the client stays
		case <-r.Context().Done():
			closed <- true
		case <-time.After(5 * time.Second):
			closed <- false
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if !<-closed {
		t.Error("the client kept the response stream open after its answer")
	}
}

// A notification handler may call the session: on list_changed it lists
// the tools again.
func TestNotificationHandlerMayCallTheSession(t *testing.T) {
	base := fixtures(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	relisted := make(chan int, 4)
	var s *client.Session
	c := client.New("t", "1", client.WithNotificationHandler(func(ctx context.Context, method string, _ wire.Encoder) {
		if method != mcp.MethodToolListChanged {
			return
		}
		n := 0
		for _, err := range s.Tools(ctx) {
			if err != nil {
				t.Error(err)
				return
			}
			n++
		}
		relisted <- n
	}))
	var err error
	s, err = c.Connect(ctx, &client.StreamableHTTP{URL: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	before := 0
	for range s.Tools(ctx) {
		before++
	}
	time.Sleep(100 * time.Millisecond) // the GET stream that carries list_changed is open
	if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolTriggerToolChange}); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-relisted:
		if n != before+1 {
			t.Errorf("relisted %d tools, had %d", n, before)
		}
	case <-ctx.Done():
		t.Fatal("the handler did not relist the tools")
	}
}

// A message of more than the SSE reader's buffer (a big tool result on one
// data line) arrives whole.
func TestLongEventLine(t *testing.T) {
	big := strings.Repeat("x", 300<<10)
	a := app.New("big", "1")
	app.AddTool(a, app.Tool{Name: "big"}, func(context.Context, struct{}) (string, error) { return big, nil })
	srv := app.NewServer(a)
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "big"})
	if err != nil || text(t, r) != big {
		t.Fatalf("%v", err)
	}
}

// Cancelling a call's context tells the server (notifications/cancelled):
// over a session a dropped response stream is no cancellation, so the
// tool learns of it only through the notification.
func TestCancelTellsTheServer(t *testing.T) {
	started, stopped := make(chan struct{}), make(chan struct{})
	a := app.New("cancel", "1")
	app.AddTool(a, app.Tool{Name: "wait"}, func(ctx context.Context, _ struct{}) (string, error) {
		close(started)
		<-ctx.Done()
		close(stopped)
		return "", ctx.Err()
	})
	srv := app.NewServer(a)
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	callCtx, stop := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(callCtx, &mcp.CallToolRequestParams{Name: "wait"})
		errc <- err
	}()
	<-started
	stop()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("the call: %v, want context.Canceled", err)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool was not cancelled: no notifications/cancelled reached the server")
	}
}

// Close deletes the session on the server (HTTP DELETE).
func TestCloseDeletesTheSession(t *testing.T) {
	a := app.New("close", "1")
	srv := app.NewServer(a)
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()
	s, err := client.New("t", "1").Connect(context.Background(), &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.SessionCount(); n != 1 {
		t.Fatalf("%d sessions after Connect", n)
	}
	s.Close()
	if n := srv.SessionCount(); n != 0 {
		t.Errorf("%d sessions after Close, want 0", n)
	}
	if !errors.Is(s.Err(), client.ErrClosed) {
		t.Errorf("Err after Close: %v", s.Err())
	}
}

// A server that ends the response stream and then, on every resumption,
// gives the same event id again and ends at once, with "retry: 1", makes
// no progress: the call fails after the few attempts that allows, at
// least 100 ms apart, rather than resuming a thousand times a second until
// its context ends.
func TestResumptionWithoutProgressEnds(t *testing.T) {
	var gets atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 1\nretry: 1\ndata: \n\n")
			return
		}
		_, id, method := posted(r)
		switch method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "s")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, id)
		case "ping":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 1\nretry: 1\ndata: \n\n")
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL, NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	_, err = s.Ping(ctx, nil)
	var ae *client.AnswerError
	if !errors.As(err, &ae) {
		t.Fatalf("after %v: %v, want an AnswerError", time.Since(start).Round(time.Millisecond), err)
	}
	if n := gets.Load(); n > 6 {
		t.Errorf("%d resumptions without progress", n)
	}
	if d := time.Since(start); d < 400*time.Millisecond || d > 5*time.Second {
		t.Errorf("gave up after %v: want the attempts at least 100 ms apart, and an end", d)
	}
}

// An event over the message bound on a call's stream fails the call with
// an error that says so, not with "could not be resumed".
func TestOversizedEventFailsTheCall(t *testing.T) {
	url := scripted(t, func(w http.ResponseWriter, _ *http.Request, id string) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"x\":\"%s\"}}\n\n", id, strings.Repeat("x", 2<<20))
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true, MaxMessage: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = s.Ping(ctx, nil)
	var ae *client.AnswerError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "more than 1048576 bytes") {
		t.Errorf("%v, want an AnswerError naming the bound", err)
	}
}
