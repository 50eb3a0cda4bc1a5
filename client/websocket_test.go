package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/client"
)

// A call that gives up does not end the connection: coder/websocket
// closes the socket when a write's context ends, and every other call
// on it would fail with the one that was cancelled.
func TestWebSocketCallGivenUpLeavesTheConnection(t *testing.T) {
	url := "ws" + strings.TrimPrefix(fixtures(t), "http") + "/mcp/ws"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.WebSocket{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	given, giveUp := context.WithCancel(ctx)
	giveUp()
	for range 50 {
		if _, err := s.Ping(given, nil); err == nil {
			t.Fatal("a ping with a cancelled context succeeded")
		}
	}
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Errorf("a ping after 50 given up: %v, want the connection still there", err)
	}
}

// A message waiting for the socket while another is written keeps its
// caller's deadline: only the write itself has the connection's bound.
// Here the server reads nothing, so the first message never leaves.
func TestWebSocketSendWaitsNoLongerThanItsCaller(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		<-done // reads nothing
		ws.CloseNow()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := (&client.WebSocket{URL: "ws" + strings.TrimPrefix(srv.URL, "http")}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	defer close(done)                                        // first: the server's close ends the stuck write
	go func() { _ = conn.Send(ctx, make([]byte, 64<<20)) }() // more than the socket buffers hold
	for deadline := time.Now().Add(5 * time.Second); !client.WebSocketSending(conn); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the large message never started")
		}
	}
	time.Sleep(50 * time.Millisecond) // into its write
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	start := time.Now()
	err = conn.Send(short, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("send behind a stuck one: %v, want its deadline", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("send with a 100ms deadline took %v", took)
	}
}
