package auth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
)

var appScopes = auth.ScopeMap{"admin": {"admin"}}

// whoamiApp has two tools that read the principal: whoami answers the
// caller's subject and scopes, admin needs the admin scope, checked by a
// middleware of the registration layer.
func whoamiApp() *app.App {
	needScopes := func(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
		if err := appScopes.Check(ctx, call.Name); err != nil {
			return nil, err
		}
		return next(ctx)
	}
	a := app.New("whoami", "1", app.WithMiddleware(needScopes))
	whoami := func(ctx context.Context, _ struct{}) (string, error) {
		if pr := auth.PrincipalFrom(ctx); pr != nil {
			return auth.OwnerFrom(ctx) + " " + strings.Join(pr.Scopes, " "), nil
		}
		return "no principal", nil
	}
	app.AddTool(a, app.Tool{Name: "whoami"}, whoami)
	app.AddTool(a, app.Tool{Name: "admin"}, whoami)
	return a
}

type mcpClient struct {
	t   *testing.T
	url string
}

func (c mcpClient) post(token, sid, body string) (*http.Response, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return c.do(req)
}

func (c mcpClient) do(req *http.Request) (*http.Response, map[string]any) {
	c.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var msg map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &msg); err != nil {
			c.t.Fatalf("%d %s: %v", resp.StatusCode, b, err)
		}
	}
	return resp, msg
}

func (c mcpClient) initialize(token string) string {
	c.t.Helper()
	resp, msg := c.post(token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		c.t.Fatalf("initialize: %d %v", resp.StatusCode, msg)
	}
	if resp, _ := c.post(token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != 202 {
		c.t.Fatalf("initialized: %d", resp.StatusCode)
	}
	return sid
}

func (c mcpClient) call(token, sid, tool string) (int, map[string]any) {
	c.t.Helper()
	resp, msg := c.post(token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{}}}`)
	return resp.StatusCode, msg
}

func text(t *testing.T, msg map[string]any) string {
	t.Helper()
	r, _ := msg["result"].(map[string]any)
	content, _ := r["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("no content in %v", msg)
	}
	return content[0].(map[string]any)["text"].(string)
}

// TestThroughServer goes through server.New, the Streamable HTTP
// transport and the middleware: the principal reaches the handler's
// methods, a per-tool scope failure is a JSON-RPC error (-32003) in a 200,
// and a session is usable only by the principal that opened it.
func TestThroughServer(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, err := auth.NewHS256(secret, auth.WithIssuer("mcpstack"))
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(whoamiApp().Handler())
	h := streamable.New(srv, streamable.WithResponseMode(streamable.JSON))
	mux := http.NewServeMux()
	mux.Handle("/mcp", auth.Middleware(v, auth.WithEndpointScopes("mcp"))(h))
	ts := httptest.NewServer(mux)
	t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
	c := mcpClient{t: t, url: ts.URL + "/mcp"}
	mint := func(sub string, scopes ...string) string {
		tok, err := authtoken.MintHS256(secret, authtoken.Mint{Subject: sub, Scopes: scopes, Issuer: "mcpstack", TTL: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	alice, aliceAdmin, bob := mint("alice", "mcp"), mint("alice", "mcp", "admin"), mint("bob", "mcp", "admin")

	sid := c.initialize(alice)
	if st, msg := c.call(alice, sid, "whoami"); st != 200 || text(t, msg) != "mcpstack#alice mcp" {
		t.Fatalf("whoami: %d %v", st, msg)
	}
	st, msg := c.call(alice, sid, "admin")
	e, _ := msg["error"].(map[string]any)
	if st != 200 || e == nil || e["code"] != float64(auth.CodeInsufficientScope) {
		t.Fatalf("admin without the scope: %d %v", st, msg)
	}
	if d, _ := e["data"].(map[string]any); d["error"] != "insufficient_scope" || d["scope"] != "admin" {
		t.Fatalf("admin without the scope: data %v", e["data"])
	}
	// Another token of the same user may use the session.
	if st, msg := c.call(aliceAdmin, sid, "admin"); st != 200 || text(t, msg) != "mcpstack#alice mcp admin" {
		t.Fatalf("admin with the scope: %d %v", st, msg)
	}
	// Another user may not, even with every scope: 404 as an unknown session.
	if st, msg := c.call(bob, sid, "whoami"); st != 404 || msg["error"] == nil {
		t.Fatalf("bob on alice's session: %d %v", st, msg)
	}
	// Bob's own session works.
	bsid := c.initialize(bob)
	if st, msg := c.call(bob, bsid, "whoami"); st != 200 || text(t, msg) != "mcpstack#bob mcp admin" {
		t.Fatalf("bob: %d %v", st, msg)
	}
	if st, _ := c.call("", sid, "whoami"); st != 401 {
		t.Fatalf("no token: %d", st)
	}
	// An initialize sent with another's session header opens a new session
	// of its sender: bob's is neither used nor revealed.
	resp, _ := c.post(alice, bsid, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if asid := resp.Header.Get("Mcp-Session-Id"); resp.StatusCode != 200 || asid == "" || asid == bsid {
		t.Fatalf("alice initializes with bob's session header: %d %q", resp.StatusCode, asid)
	} else if st, _ := c.call(bob, asid, "whoami"); st != 404 {
		t.Fatalf("bob on the session alice opened: %d", st)
	}
	resp, _ = c.post(bob, bsid, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	nsid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || nsid == "" || nsid == bsid {
		t.Fatalf("bob initializes again: %d %q", resp.StatusCode, nsid)
	}
	if st, _ := c.call(bob, nsid, "whoami"); st != 200 {
		t.Fatalf("bob's new session: %d", st)
	}
	if st, _ := c.call(alice, nsid, "whoami"); st != 404 {
		t.Fatalf("alice on bob's new session: %d", st)
	}
	// Bob cannot end alice's session; alice can.
	del := func(tok, sid string) int {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Mcp-Session-Id", sid)
		resp, _ := c.do(req)
		return resp.StatusCode
	}
	if st := del(bob, sid); st != 404 {
		t.Fatalf("bob deletes alice's session: %d", st)
	}
	if st := del(alice, sid); st != 204 {
		t.Fatalf("alice deletes her session: %d", st)
	}
	if st, _ := c.call(alice, sid, "whoami"); st != 404 {
		t.Fatalf("deleted session: %d", st)
	}
}

// TestFlushThroughBinding: a request without a session goes through the
// session-binding writer (it may be an initialize); a stream answered to it
// still reaches the client event by event (http.ResponseController.Flush).
func TestFlushThroughBinding(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, _ := auth.NewHS256(secret)
	release := make(chan struct{})
	stream := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		if err := http.NewResponseController(w).Flush(); err != nil {
			t.Errorf("flush: %v", err)
		}
		<-release
		_, _ = io.WriteString(w, "data: second\n\n")
	})
	ts := httptest.NewServer(auth.Middleware(v)(stream))
	t.Cleanup(ts.Close)
	tok, _ := authtoken.MintHS256(secret, authtoken.Mint{Subject: "alice", TTL: time.Hour})
	req, _ := http.NewRequest(http.MethodPost, ts.URL, nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len("data: first\n\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "data: first\n\n" {
		t.Fatalf("first event %q, %v", buf, err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != "data: second\n\n" {
		t.Fatalf("rest %q", rest)
	}
}

// TestStreamEndsWithToken: a GET stream held open on a token ends when the
// token expires (the regression: long-lived streams outlived their
// credentials).
func TestStreamEndsWithToken(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, _ := auth.NewHS256(secret, auth.WithLeeway(0))
	srv := server.New(whoamiApp().Handler())
	h := streamable.New(srv)
	ts := httptest.NewServer(auth.Middleware(v)(h))
	t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
	c := mcpClient{t: t, url: ts.URL}
	long, _ := authtoken.MintHS256(secret, authtoken.Mint{Subject: "alice", TTL: time.Hour})
	short, _ := authtoken.MintHS256(secret, authtoken.Mint{Subject: "alice", TTL: 2 * time.Second})
	sid := c.initialize(long)
	req, _ := http.NewRequest(http.MethodGet, ts.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+short)
	req.Header.Set("Mcp-Session-Id", sid)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET stream: %v %v", resp, err)
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, resp.Body); close(done) }()
	select {
	case <-done:
		if d := time.Since(start); d > 3500*time.Millisecond {
			t.Errorf("the stream ended %v after it opened, its token lived 2s", d)
		}
	case <-time.After(6 * time.Second):
		t.Fatal("the stream outlived its token")
	}
	resp.Body.Close()
}
