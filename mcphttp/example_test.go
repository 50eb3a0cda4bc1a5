package mcphttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server/auth"
)

// Every HTTP transport behind bearer tokens, with serve's limits: the
// handler for a program's own http.Server.
func ExampleHandler() {
	a := app.New("hello", "1.0.0")
	az, err := auth.New(context.Background(), auth.Config{Mode: auth.ModeHS256, Secret: []byte(strings.Repeat("s", 32))})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := app.NewServer(a)
	defer srv.Close()
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithAuth(az))
	hs := httptest.NewServer(h) // or &http.Server{Addr: ..., Handler: h}
	defer hs.Close()
	defer shutdown(context.Background()) // before the http.Server's Shutdown

	resp, err := http.Post(hs.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode, resp.Header.Get("WWW-Authenticate") != "")
	// Output: 401 true
}
