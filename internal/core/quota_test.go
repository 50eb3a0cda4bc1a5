package core_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
)

// blocker answers tools/call when released.
type blocker struct {
	mcp.UnimplementedHandler // tests only
	release                  chan struct{}
}

func (*blocker) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return &mcp.InitializeResult{ServerInfo: mcp.Implementation{Name: "b", Version: "1"}}, nil
}

func (b *blocker) CallTool(ctx context.Context, _ *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: "done"}}}, nil
}

// TestClientSessionQuota: one client cannot take every session from the
// others, and a listen stream counts as a session (the regression: one
// token opened 10,000 sessions and everyone else got 503; listen streams
// were not counted at all).
func TestClientSessionQuota(t *testing.T) {
	srv := newServer(conformance.New(), core.WithMaxSessions(100), core.WithMaxClientSessions(3))
	defer srv.Close()
	alice := core.Caller{Owner: "alice", Key: "principal:alice"}
	bob := core.Caller{Owner: "bob", Key: "principal:bob"}
	var mine []*core.Session
	for range 3 {
		s, err := srv.NewSession("", nil, core.OpenedBy(alice))
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, s)
	}
	if _, err := srv.NewSession("", nil, core.OpenedBy(alice)); !errors.Is(err, core.ErrQuota) {
		t.Fatalf("alice's 4th session: %v, want ErrQuota", err)
	}
	if _, err := srv.NewSession("", nil, core.OpenedBy(bob)); err != nil {
		t.Fatalf("bob's session while alice is at her quota: %v", err)
	}
	// listen opens a listen stream: refused at once, or held open (its
	// acknowledgement came) until stop.
	listen := func(c core.Caller) (reply []byte, code int, stop func()) {
		ctx, cancel := context.WithCancel(core.WithCaller(context.Background(), c))
		body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		type answer struct {
			reply []byte
			code  int
		}
		done := make(chan answer, 1)
		out := &recorder{}
		go func() {
			r, c := srv.ServeStateless(ctx, srv.Parse([]byte(body)), out, nil)
			done <- answer{r, c}
		}()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			select {
			case a := <-done:
				cancel()
				return a.reply, a.code, func() {}
			default:
			}
			if len(out.take()) > 0 { // acknowledged: held open
				return nil, 0, func() { cancel(); <-done }
			}
		}
		t.Fatal("listen neither answered nor acknowledged")
		return nil, 0, nil
	}
	if reply, code, _ := listen(alice); code != -32000 || !strings.Contains(string(reply), "sessions open") {
		t.Errorf("alice's listen stream over her quota: %d %s, want -32000", code, reply)
	}
	mine[0].Close()
	_, code, stop := listen(alice)
	if code != 0 {
		t.Fatalf("alice's listen stream under her quota: %d", code)
	}
	if _, err := srv.NewSession("", nil, core.OpenedBy(alice)); !errors.Is(err, core.ErrQuota) {
		t.Errorf("alice's session while her listen stream holds the last slot: %v, want ErrQuota", err)
	}
	stop()
	if _, err := srv.NewSession("", nil, core.OpenedBy(alice)); err != nil {
		t.Errorf("alice's session after her listen stream ended: %v", err)
	}
}

// TestClientInflightQuota: the requests one client has in flight over all
// its sessions are capped; another client is still served.
func TestClientInflightQuota(t *testing.T) {
	b := &blocker{release: make(chan struct{})}
	srv := newServer(b, core.WithMaxClientInflight(2), core.WithValidation(false))
	defer srv.Close()
	alice := core.Caller{Owner: "alice", Key: "principal:alice"}
	ctx := core.WithCaller(context.Background(), alice)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`
	open := func(c core.Caller) *core.Session {
		s, err := srv.NewSession("", nil, core.OpenedBy(c))
		if err != nil {
			t.Fatal(err)
		}
		s.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		return s
	}
	s1, s2 := open(alice), open(alice)
	answers := make(chan string, 3)
	for _, s := range []*core.Session{s1, s2} {
		go func() { answers <- string(s.Handle(ctx, []byte(call), nil)) }()
	}
	time.Sleep(50 * time.Millisecond)
	if got := string(open(alice).Handle(ctx, []byte(call), nil)); !strings.Contains(got, "-32000") {
		t.Errorf("alice's third call in flight: %s, want -32000", got)
	}
	bobs := open(core.Caller{Owner: "bob", Key: "principal:bob"})
	go func() { answers <- string(bobs.Handle(ctx, []byte(call), nil)) }()
	close(b.release)
	for range 3 {
		if got := <-answers; !strings.Contains(got, "done") {
			t.Errorf("a call under the quota: %s", got)
		}
	}
}

// A client's quota entry goes once it holds nothing, also when its last
// session ended while a call of it was still in flight (the entry stayed
// for the server's life: a new address each time grew the map for ever).
func TestClientEntryGoesWithItsLastCall(t *testing.T) {
	b := &blocker{release: make(chan struct{})}
	srv := newServer(b, core.WithMaxClientInflight(8), core.WithValidation(false))
	defer srv.Close()
	alice := core.Caller{Owner: "alice", Key: "principal:alice"}
	ctx := core.WithCaller(context.Background(), alice)
	s, err := srv.NewSession("", nil, core.OpenedBy(alice))
	if err != nil {
		t.Fatal(err)
	}
	s.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	answered := make(chan struct{})
	go func() {
		s.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`), nil)
		close(answered)
	}()
	time.Sleep(50 * time.Millisecond) // in flight
	s.Close()
	close(b.release)
	<-answered
	for deadline := time.Now().Add(5 * time.Second); core.ClientsHeld(srv) > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := core.ClientsHeld(srv); n != 0 {
		t.Errorf("the client holds no session and no call: %d quota entries kept, want 0", n)
	}
}

// stuck is an Outbox whose client never reads: Send blocks until release.
type stuck struct{ release chan struct{} }

func (s stuck) Send([]byte) error { <-s.release; return nil }

// TestBroadcastPastAStalledStream: a session whose stream is stalled
// delays nobody else's notifications, and holds one goroutine and a
// bounded queue whatever the number of broadcasts (found in review: a
// goroutine per session per broadcast, and a serial fan-out before that).
func TestBroadcastPastAStalledStream(t *testing.T) {
	srv := newServer(conformance.New())
	defer srv.Close()
	init := func(s *core.Session) {
		s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	}
	st := stuck{release: make(chan struct{})}
	defer close(st.release)
	stalled, _ := srv.NewSession("", st)
	init(stalled)
	out := &recorder{}
	healthy, _ := srv.NewSession("", out)
	init(healthy)
	before := runtime.NumGoroutine()
	for range 200 { // equal notifications: coalesced while one waits
		srv.Broadcast(context.Background(), mcp.MethodToolListChanged, nil)
	}
	for i := range 20 { // different ones: each arrives
		srv.Broadcast(context.Background(), mcp.MethodResourceUpdated, &mcp.ResourceUpdatedNotificationParams{URI: fmt.Sprintf("test://r%d", i)})
	}
	var listChanged, updated int
	for deadline := time.Now().Add(5 * time.Second); updated < 20 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, m := range out.take() {
			if strings.Contains(string(m), "list_changed") {
				listChanged++
			} else {
				updated++
			}
		}
	}
	if listChanged == 0 || updated != 20 {
		t.Errorf("the healthy session got %d list_changed (want at least 1) and %d of 20 updates", listChanged, updated)
	}
	if n := runtime.NumGoroutine() - before; n > 10 {
		t.Errorf("%d more goroutines after 200 broadcasts past a stalled stream", n)
	}
}

// TestQuotaChecksDoNotAllocate: counting a client's calls in flight costs
// a session's call no allocation (issue 22: quotas that cost little): a
// call with the quota on allocates what it allocates with it off. (A
// request without a session, whose client may hold nothing after it,
// makes the one function that gives its call back.)
func TestQuotaChecksDoNotAllocate(t *testing.T) {
	allocs := func(t *testing.T, quota int) float64 {
		srv := core.New(bench.New().Handler(), core.WithMaxClientInflight(quota), core.WithMaxClientSessions(0))
		defer srv.Close()
		sess, err := srv.NewSession("", nil, core.OpenedBy(core.Caller{Key: "addr:127.0.0.1"}))
		if err != nil {
			t.Fatal(err)
		}
		ctx := core.WithCaller(context.Background(), core.Caller{Key: "addr:127.0.0.1"})
		sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`), nil)
		sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		return testing.AllocsPerRun(200, func() {
			if reply := sess.Handle(ctx, body, nil); !strings.Contains(string(reply), `"hi"`) {
				t.Fatalf("answer %s", reply)
			}
		})
	}
	off, on := allocs(t, 0), allocs(t, 8)
	if on > off {
		t.Errorf("a call allocates %.0f times with the client's quota of calls in flight, %.0f without", on, off)
	}
}

// slowDelete is a session store whose Delete waits until release, after
// saying it started, and then fails with fail when set.
type slowDelete struct {
	core.SessionStore
	deleting, release chan struct{}
	fail              error
}

func (s slowDelete) Delete(ctx context.Context, id string) error {
	close(s.deleting)
	<-s.release
	if s.fail != nil {
		return s.fail
	}
	return s.SessionStore.Delete(ctx, id)
}

// A session the client ended is not brought back from its stored state
// by a request that comes while that state is being deleted: it would
// have been served until its idle timeout.
func TestEndedSessionIsNotRestored(t *testing.T) {
	for _, fail := range []error{nil, errors.New("the store is down")} {
		t.Run(fmt.Sprint("delete fails: ", fail != nil), func(t *testing.T) {
			st := slowDelete{SessionStore: core.MemorySessions(), deleting: make(chan struct{}), release: make(chan struct{}), fail: fail}
			srv := newServer(conformance.New(), core.WithSessionStore(st))
			defer srv.Close()
			sess, err := srv.NewSession("", nil)
			if err != nil {
				t.Fatal(err)
			}
			sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
			ended := make(chan struct{})
			go func() { sess.Close(); close(ended) }()
			<-st.deleting
			if _, ok := srv.SessionFor(sess.ID(), "", ""); ok {
				t.Error("a session ended by its client was restored while its state was being deleted")
			}
			close(st.release)
			<-ended
			if _, ok := srv.SessionFor(sess.ID(), "", ""); ok {
				t.Error("a session ended by its client was restored after the delete of its state")
			}
			if got := string(sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), nil)); !strings.Contains(got, "ended") {
				t.Errorf("a request of an ended session: %s, want it refused", got)
			}
		})
	}
}
