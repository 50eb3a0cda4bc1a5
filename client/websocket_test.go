package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

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
