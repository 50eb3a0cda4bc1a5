package mcphttp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// A body that comes slowly, over longer than the write timeout, still
// gets its answer: the deadline that ran from the request's start is
// moved once the body has been read (a 413, or the 202 of the HTTP+SSE
// transport, would otherwise be cut, and the client would see the
// connection close).
func TestSlowBodyGetsItsAnswer(t *testing.T) {
	const timeout = 100 * time.Millisecond
	srv := app.NewServer(app.New("deadline", "1"))
	t.Cleanup(srv.Close)
	h, _ := mcphttp.Handler(srv, mcphttp.WithWriteTimeout(timeout), mcphttp.WithMaxBody(256<<10))
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)

	// An HTTP+SSE session, for its /messages endpoint.
	req, _ := http.NewRequest(http.MethodGet, hs.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stream.Body.Close() })
	events := bufio.NewReader(stream.Body)
	var endpoint string
	for endpoint == "" {
		line, err := events.ReadString('\n')
		if err != nil {
			t.Fatalf("no endpoint event: %v", err)
		}
		if data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = data
		}
	}
	messages, err := stream.Request.URL.Parse(endpoint) // relative to /sse
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path, body string
		status           int
	}{
		{"a small message to HTTP+SSE", messages.RequestURI(), `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"pad":"` + strings.Repeat("x", 2<<10) + `"}}}`, http.StatusAccepted},
		{"over the bound", "/mcp", strings.Repeat(" ", 300<<10), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", hs.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "POST " + tt.path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
				"MCP-Protocol-Version: 2025-11-25\r\nContent-Length: " + strconv.Itoa(len(tt.body)) + "\r\n\r\n"
			if _, err := conn.Write([]byte(head)); err != nil {
				t.Fatal(err)
			}
			// The body in four parts, over 4x the write timeout.
			for i, part := 0, len(tt.body)/4; i < 4; i++ {
				end := (i + 1) * part
				if i == 3 {
					end = len(tt.body)
				}
				time.Sleep(timeout)
				if _, err := conn.Write([]byte(tt.body[i*part : end])); err != nil {
					break // the server may stop reading past the bound
				}
			}
			_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no answer after a body that took 4x the write timeout: %v", err)
			}
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || err != nil {
				t.Errorf("%d %q (%v), want %d", resp.StatusCode, body, err, tt.status)
			}
		})
	}
}
