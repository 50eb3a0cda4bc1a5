package websocket_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
)

// WebSocket at /mcp/ws beside Streamable HTTP and HTTP+SSE, behind the
// handler's authentication and limits, as `mcpstack serve` serves it.
func ExampleTransport() {
	srv := app.NewServer(app.New("hello", "1.0.0"))
	defer srv.Close()
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithTransport(websocket.Transport()))
	hs := httptest.NewServer(h)
	defer hs.Close()
	defer shutdown(context.Background())

	ctx := context.Background()
	s, err := client.New("example", "1").Connect(ctx, &client.WebSocket{URL: "ws" + strings.TrimPrefix(hs.URL, "http") + websocket.Path})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.ServerInfo().Name)
	// Output: hello
}
