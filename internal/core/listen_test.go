package core_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
)

// A listen stream hears of the resources the handler lets its caller
// subscribe to, and only those: the handler's Subscribe decides, as for
// resources/subscribe (the regression: any URI was accepted, so a user
// who knew the URI of another user's conversation heard of its changes).
func TestListenSubscribesThroughTheHandler(t *testing.T) {
	srv := newServer(conformance.New())
	defer srv.Close()
	ctx, cancel := context.WithCancel(core.WithCaller(context.Background(), core.Caller{Owner: "alice", Key: "principal:alice"}))
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

// countingSubscribe counts the calls of its handler's Subscribe.
type countingSubscribe struct {
	*conformance.Fixtures
	calls atomic.Int64
}

func (h *countingSubscribe) Subscribe(ctx context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	h.calls.Add(1)
	return h.Fixtures.Subscribe(ctx, p)
}

// A listen filter's resourceSubscriptions cost one Subscribe per distinct
// URI, and more than the bound is refused before any (the regression:
// 20,000 copies of one URI ran Subscribe 20,000 times, seconds of CPU).
func TestListenSubscriptionsAreBounded(t *testing.T) {
	listen := func(uris []string) (string, int64) {
		h := &countingSubscribe{Fixtures: conformance.New()}
		srv := newServer(h)
		defer srv.Close()
		ctx, cancel := context.WithCancel(core.WithCaller(context.Background(), core.Caller{Owner: "alice", Key: "principal:alice"}))
		defer cancel()
		list, _ := json.Marshal(uris)
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":` + string(list) + `},` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		out := &recorder{}
		done := make(chan []byte, 1)
		go func() {
			res, _ := srv.ServeStateless(ctx, srv.Parse([]byte(body)), out, nil)
			done <- res
		}()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			select {
			case res := <-done:
				return string(res), h.calls.Load()
			default:
			}
			if got := out.take(); len(got) > 0 {
				cancel()
				<-done
				return string(got[0]), h.calls.Load()
			}
		}
		t.Fatal("no answer to subscriptions/listen")
		return "", 0
	}
	same := make([]string, 20000)
	for i := range same {
		same[i] = "test://watched-resource"
	}
	ack, calls := listen(same)
	if calls != 1 || !strings.Contains(ack, `"resourceSubscriptions":["test://watched-resource"]`) {
		t.Errorf("20,000 copies of one URI: %d Subscribe calls, acknowledgement %.200s; want 1 call and the URI once", calls, ack)
	}
	many := make([]string, 1025)
	for i := range many {
		many[i] = fmt.Sprintf("test://r/%d", i)
	}
	answer, calls := listen(many)
	if calls != 0 || !strings.Contains(answer, `"code":-32602`) || !strings.Contains(answer, "more than 1024 distinct resources") {
		t.Errorf("1,025 distinct URIs: %d Subscribe calls, answer %.300s; want none and -32602 naming the bound", calls, answer)
	}
}
