package mcphttp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
)

// A call that runs longer than the server's ReadTimeout (serve's is 60s)
// keeps its answer. Were the request's read deadline still armed while
// the handler runs, the read net/http makes in the background to notice a
// client leaving would fail at it and cancel the request's context,
// ending the call's stream without its answer; net/http clears it when
// that read starts, and nothing here may arm it again.
func TestLongCallOutlivesReadTimeout(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	a := app.New("slow", "1")
	app.AddTool(a, app.Tool{Name: "slow", Description: "Answers after a while."},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-time.After(3 * readTimeout):
				return "done", nil
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		})
	for _, mode := range []mcphttp.ResponseMode{mcphttp.ResponseAuto, mcphttp.ResponseSSE} {
		t.Run(string(mode), func(t *testing.T) {
			srv := app.NewServer(a)
			defer srv.Close()
			h, _ := mcphttp.Handler(srv, mcphttp.WithResponseMode(mode))
			hs := httptest.NewUnstartedServer(h)
			hs.Config.ReadTimeout = readTimeout
			hs.Start()
			defer hs.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "slow"})
			if err != nil {
				t.Fatalf("a call longer than the read timeout: %v", err)
			}
			if r.IsError != nil && *r.IsError {
				t.Fatalf("a call longer than the read timeout: %+v", r)
			}
		})
	}
}

// A GET stream outlives the server's ReadTimeout too: it has no body, so
// net/http's background read starts at once, and fails at the deadline.
func TestGetStreamOutlivesReadTimeout(t *testing.T) {
	const readTimeout = 300 * time.Millisecond
	srv := app.NewServer(app.New("quiet", "1"))
	defer srv.Close()
	h, _ := mcphttp.Handler(srv)
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ReadTimeout = readTimeout
	hs.Start()
	defer hs.Close()
	post := func(body, session string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	session := resp.Header.Get("Mcp-Session-Id")
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, session)
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", session)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	if stream.StatusCode != http.StatusOK {
		t.Fatalf("GET: %s", stream.Status)
	}
	time.Sleep(3 * readTimeout)
	srv.Broadcast(context.Background(), "notifications/tools/list_changed", nil)
	got := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stream.Body)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				got <- "the stream ended: " + err.Error()
				return
			}
			if strings.Contains(line, "list_changed") {
				got <- ""
				return
			}
		}
	}()
	select {
	case why := <-got:
		if why != "" {
			t.Fatalf("a notification after the read timeout: %s", why)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no notification on the GET stream")
	}
}
