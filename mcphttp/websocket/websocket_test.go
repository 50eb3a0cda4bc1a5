package websocket_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	cws "github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
	"github.com/mcpstack/mcpstack/server"
)

type echoIn struct {
	Text string `json:"text"`
}

// serve starts mcphttp.Handler with opts on 127.0.0.1 and returns its
// WebSocket URL and its shutdown.
func serve(t *testing.T, opts ...mcphttp.Option) (string, func(context.Context)) {
	t.Helper()
	a := app.New("ws", "1")
	app.AddTool(a, app.Tool{Name: "echo"}, func(_ context.Context, in echoIn) (string, error) { return in.Text, nil })
	srv := app.NewServer(a, server.WithLimits(server.Limits{SessionsPerClient: -1, InflightPerClient: -1}))
	h, shutdown := mcphttp.Handler(srv, append([]mcphttp.Option{mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0)}, opts...)...)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { shutdown(context.Background()); hs.Close(); srv.Close() })
	return "ws" + strings.TrimPrefix(hs.URL, "http") + websocket.Path, shutdown
}

// WebSocket is served where it is added, and nowhere else: a handler
// without it answers its path 404, as any path it does not serve.
func TestServedWhereAdded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	without, _ := serve(t)
	resp, err := http.Get("http" + strings.TrimPrefix(without, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET %s without the transport: %d, want 404", websocket.Path, resp.StatusCode)
	}

	with, _ := serve(t, mcphttp.WithTransport(websocket.Transport()))
	s, err := client.New("t", "1").Connect(ctx, &client.WebSocket{URL: with})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "echo", Arguments: map[string]any{"text": "over a socket"}})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "over a socket" {
		t.Errorf("echo over WebSocket: %#v", res.Content)
	}
}

// The socket is held to the handler's limits: a message over WithMaxBody
// closes it with 1009, and shutdown closes the others with 1001.
func TestHeldToTheHandlersLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url, shutdown := serve(t, mcphttp.WithTransport(websocket.Transport()), mcphttp.WithMaxBody(1024))
	dial := func() *cws.Conn {
		t.Helper()
		c, _, err := cws.Dial(ctx, url, &cws.DialOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		return c
	}
	closed := func(c *cws.Conn) cws.StatusCode {
		t.Helper()
		for {
			if _, _, err := c.Read(ctx); err != nil {
				return cws.CloseStatus(err)
			}
		}
	}

	big := dial()
	if err := big.Write(ctx, cws.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"`+strings.Repeat("x", 2048)+`"}}}`)); err != nil {
		t.Fatal(err)
	}
	if got := closed(big); got != cws.StatusMessageTooBig {
		t.Errorf("a message over WithMaxBody: close %v, want 1009", got)
	}

	idle := dial()
	done := make(chan struct{})
	go func() { defer close(done); shutdown(ctx) }()
	if got := closed(idle); got != cws.StatusGoingAway {
		t.Errorf("a socket at shutdown: close %v, want 1001", got)
	}
	<-done
}

// A Transport at a path Handler serves already, or twice, is a
// programming error that would replace a route quietly: Handler panics.
func TestTakenPathPanics(t *testing.T) {
	srv := app.NewServer(app.New("ws", "1"))
	t.Cleanup(srv.Close)
	for _, opts := range [][]mcphttp.Option{
		{mcphttp.WithTransport(at("/mcp"))},
		{mcphttp.WithTransport(websocket.Transport()), mcphttp.WithTransport(websocket.Transport())},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Handler with a Transport at a taken path did not panic")
				}
			}()
			mcphttp.Handler(srv, opts...)
		}()
	}
}

// at is WebSocket at another path.
type at string

func (p at) Path() string { return string(p) }

func (at) Serve(srv *server.Server, l mcphttp.Limits) (http.Handler, func(context.Context) error) {
	return websocket.Transport().Serve(srv, l)
}
