package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
)

// A listen stream hears of the resources the handler lets its caller
// subscribe to, and only those: the handler's Subscribe decides, as for
// resources/subscribe (the regression: any URI was accepted, so a user
// who knew the URI of another user's conversation heard of its changes).
func TestListenSubscribesThroughTheHandler(t *testing.T) {
	srv := server.New(conformance.New())
	defer srv.Close()
	ctx, cancel := context.WithCancel(server.WithCaller(context.Background(), server.Caller{Owner: "alice", Key: "principal:alice"}))
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["test://watched-resource","test://not-yours"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	out := &recorder{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeStateless(ctx, srv.Parse([]byte(body)), out, nil)
	}()
	defer func() { cancel(); <-done }()
	await := func(n int) []string {
		var got []string
		for deadline := time.Now().Add(5 * time.Second); len(got) < n && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, m := range out.take() {
				got = append(got, string(m))
			}
		}
		return got
	}
	ack := await(1)
	if len(ack) != 1 || !strings.Contains(ack[0], `"resourceSubscriptions":["test://watched-resource"]`) {
		t.Fatalf("acknowledgement %v, want only the resource the handler accepted", ack)
	}
	srv.ResourceUpdated(context.Background(), "test://not-yours")
	srv.ResourceUpdated(context.Background(), "test://watched-resource")
	got := await(1)
	if len(got) != 1 || !strings.Contains(got[0], `"uri":"test://watched-resource"`) {
		t.Errorf("notifications %v, want the watched resource's only", got)
	}
}
