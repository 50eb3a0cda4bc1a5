package mcphttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
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
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithAuth(az), mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
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
