package mcphttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server/auth"
)

// Handler mounts every transport and the probes, behind authentication
// when it is given, with serve's limits.
func TestHandlerRoutes(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	az, err := auth.New(context.Background(), auth.Config{Mode: auth.ModeHS256, Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := app.NewServer(app.New("routes", "1"))
	t.Cleanup(srv.Close)
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithAuth(az), mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0),
		mcphttp.WithTransport(websocket.Transport()))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	get := func(path string) int {
		t.Helper()
		resp, err := http.Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	post := func(path, body string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, hs.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, path := range []string{"/mcp", "/sse", "/mcp/ws", "/mcp/stream"} {
		if code := get(path); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d, want 401", path, code)
		}
	}
	if code := post("/messages?sessionId=x", `{}`); code != http.StatusUnauthorized {
		t.Errorf("POST /messages without a token: %d, want 401", code)
	}
	if code := get("/healthz"); code != http.StatusOK {
		t.Errorf("healthz: %d", code)
	}
	if code := get("/readyz"); code != http.StatusOK {
		t.Errorf("readyz: %d", code)
	}
	shutdown(context.Background())
	if code := get("/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("readyz while draining: %d, want 503", code)
	}
}

// The defaults limit the body as serve does.
func TestHandlerMaxBody(t *testing.T) {
	srv := app.NewServer(app.New("body", "1"))
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithMaxBody(64))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	body := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100) + `"}}`
	req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over HTTPMaxBody: %d, want 413", resp.StatusCode)
	}
}

// TestListenAndServeLoopbackOnly: without authentication it refuses to
// serve anything but loopback.
func TestListenAndServeLoopbackOnly(t *testing.T) {
	srv := app.NewServer(app.New("loopback", "1"))
	defer srv.Close()
	if err := mcphttp.ListenAndServe(context.Background(), "0.0.0.0:0", srv); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("ListenAndServe on 0.0.0.0: %v, want a refusal", err)
	}
}

// A typed nil Observer is none, as a nil *observe.Observer was before
// the option took an interface (it panicked in WatchStreams).
func TestTypedNilObserver(t *testing.T) {
	srv := app.NewServer(app.New("nil-observer", "1"))
	defer srv.Close()
	var obs *observe.Observer
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithObserver(obs))
	defer shutdown(context.Background())
	if h == nil {
		t.Fatal("no handler")
	}
}

// countingEvents is an EventStore that keeps every event, and counts what
// the handler asks of it.
type countingEvents struct {
	mu       sync.Mutex
	events   map[string][]string // by stream: the data of each event, the id its index
	sessions map[string]string   // stream -> session
	appends  map[string]int      // by session
	replays  int
	down     error // what Replay fails with, when set
}

func (c *countingEvents) Append(session, stream string, data []byte) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.appends[session]++
	c.sessions[stream] = session
	c.events[stream] = append(c.events[stream], string(data))
	return fmt.Sprintf("%s_%d", stream, len(c.events[stream])-1), nil
}

func (c *countingEvents) Replay(session, lastID string, fn func(id string, data []byte) error) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replays++
	if c.down != nil {
		return "", c.down
	}
	cut := strings.LastIndexByte(lastID, '_')
	stream := lastID[:max(cut, 0)]
	if cut < 0 || c.sessions[stream] != session {
		return "", mcphttp.ErrUnknownEvent
	}
	n, _ := strconv.Atoi(lastID[cut+1:])
	for i := n + 1; i < len(c.events[stream]); i++ {
		if err := fn(fmt.Sprintf("%s_%d", stream, i), []byte(c.events[stream][i])); err != nil {
			return "", err
		}
	}
	return stream, nil
}

func (c *countingEvents) Forget(string) {}

// WithEventStore puts the handler's stream events in the store given: a
// session's SSE answers are appended there, and a resumption replays them
// from there.
func TestWithEventStore(t *testing.T) {
	store := &countingEvents{events: map[string][]string{}, sessions: map[string]string{}, appends: map[string]int{}}
	srv := app.NewServer(app.New("events", "1"))
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithEventStore(store), mcphttp.WithResponseMode(mcphttp.ResponseSSE))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	do := func(method, session, lastID, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		if lastID != "" {
			req.Header.Set("Last-Event-ID", lastID)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	resp := do(http.MethodPost, "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	body, _ := io.ReadAll(resp.Body)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d %q", resp.StatusCode, body)
	}
	do(http.MethodPost, session, "", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp = do(http.MethodPost, session, "", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	body, _ = io.ReadAll(resp.Body)
	var ids []string
	for _, line := range strings.Split(string(body), "\n") {
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			ids = append(ids, id)
		}
	}
	store.mu.Lock()
	appended := store.appends[session]
	store.mu.Unlock()
	if appended < 2 || len(ids) != appended {
		t.Fatalf("the store holds %d events of the session, the stream had ids %v: want the priming event and the answer, each in the store", appended, ids)
	}
	// Resuming after the priming event replays the answer from the store.
	resp = do(http.MethodGet, session, ids[0], "")
	replayed := make([]byte, 0, 512)
	buf := make([]byte, 512)
	for !strings.Contains(string(replayed), `"id":2`) {
		n, err := resp.Body.Read(buf)
		replayed = append(replayed, buf[:n]...)
		if err != nil {
			break
		}
	}
	if !strings.Contains(string(replayed), `"result":{}`) {
		t.Errorf("the resumed stream did not replay the answer: %q", replayed)
	}
	store.mu.Lock()
	if store.replays != 1 {
		t.Errorf("the store was asked to replay %d times, want 1", store.replays)
	}
	store.down = errors.New("the store is down")
	store.mu.Unlock()
	// A store that fails before anything is replayed: 503, try again;
	// not a 200 with nothing in it.
	if resp = do(http.MethodGet, session, ids[0], ""); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("resuming while the store is down: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	store.mu.Lock()
	store.down = nil
	store.mu.Unlock()
	// An id the store does not know: 400, not the 404 that tells a
	// client its session is gone.
	if resp = do(http.MethodGet, session, "nosuchstream_3", ""); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("resuming after an unknown id: %d, want 400", resp.StatusCode)
	}
}
