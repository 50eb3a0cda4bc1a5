package mcphttp_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
)

// A client that sends requests and never reads the answers loses its
// connection after the write timeout, instead of holding it, and the
// goroutine serving it, for ever: net/http sets no deadline on the writes
// after a handler returns.
func TestUnreadAnswersCloseTheConnection(t *testing.T) {
	srv := app.NewServer(app.New("deadline", "1"))
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithWriteTimeout(200*time.Millisecond))
	closed := make(chan struct{})
	hs := httptest.NewUnstartedServer(h)
	hs.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			close(closed)
		}
	}
	hs.Start()
	t.Cleanup(hs.Close)

	// A small receive window, so that the server's writes block soon.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	conn, err := d.DialContext(context.Background(), "tcp", hs.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() { // requests, pipelined, until the server stops taking them
		req := []byte(strings.Repeat("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 64))
		for {
			if _, err := conn.Write(req); err != nil {
				return
			}
		}
	}()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the server still holds a connection whose client has read nothing for 20s (write timeout 200ms)")
	}
}
