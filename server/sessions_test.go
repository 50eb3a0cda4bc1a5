package server_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// only is the one session the store (the example's mapStore) keeps.
func (m *mapStore) only() (string, server.SessionState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, st := range m.states {
		return id, st, len(m.states) == 1
	}
	return "", server.SessionState{}, false
}

func (m *mapStore) get(id string) (server.SessionState, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	st, ok := m.states[id]
	return st, ok
}

// replica is one server behind the test's load balancer.
type replica struct {
	srv      *server.Server
	h        http.Handler
	shutdown func(context.Context)
}

func newReplica(t *testing.T, store server.SessionStore, opts ...server.Option) *replica {
	f := conformance.New(conformance.WithStepDelay(0))
	srv := server.New(f, append([]server.Option{server.WithStrict(true), server.WithSessionStore(store)}, opts...)...)
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	r := &replica{srv: srv, h: h, shutdown: shutdown}
	t.Cleanup(r.stop)
	return r
}

func (r *replica) stop() {
	r.shutdown(context.Background())
	r.srv.Close()
}

// A session opened on one replica is served by another once the first is
// gone: the state (revision, capabilities, log level, subscriptions) is
// in the shared store, so the client notices nothing, and the session
// still ends for everyone when the client ends it.
func TestSessionOutlivesItsReplica(t *testing.T) {
	store := &mapStore{states: map[string]server.SessionState{}}
	a, b := newReplica(t, store), newReplica(t, store)
	var target atomic.Pointer[replica]
	target.Store(a)
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { target.Load().h.ServeHTTP(w, r) }))
	defer lb.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	updated := make(chan string, 1)
	c := client.New("lb-test", "1.0.0", client.WithProtocolVersion("2025-11-25"),
		client.WithNotificationHandler(func(_ context.Context, method string, params wire.Encoder) {
			if p, ok := params.(*mcp.ResourceUpdatedNotificationParams); ok && method == mcp.MethodResourceUpdated {
				select {
				case updated <- p.URI:
				default:
				}
			}
		}))
	sess, err := c.Connect(ctx, &client.StreamableHTTP{URL: lb.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	const uri = "test://static-text"
	if _, err := sess.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelWarning}); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	id, st, ok := store.only()
	if !ok || st.Revision != "2025-11-25" || !st.Initialized || st.LogLevel != "warning" || len(st.Subscriptions) != 1 || st.Subscriptions[0] != uri {
		t.Fatalf("stored state %+v (kept %v)", st, ok)
	}

	a.stop() // replica a dies; the load balancer sends everything to b
	target.Store(b)
	if _, err := sess.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list on the other replica: %v", err)
	}
	if _, err := sess.CallTool(ctx, &mcp.CallToolRequestParams{Name: "test_simple_text"}); err != nil {
		t.Fatalf("tools/call on the other replica: %v", err)
	}
	// The subscription came with the state; the notification goes out
	// once the client's GET stream has reconnected, to b.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		b.srv.ResourceUpdated(ctx, uri)
		select {
		case got := <-updated:
			if got != uri {
				t.Errorf("resources/updated for %q", got)
			}
			break wait
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("no resources/updated from the replica that took the session over")
		}
	}

	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := store.get(id); ok {
		t.Error("the session's state outlived the client's DELETE")
	}
}

// lb is a load balancer in front of replicas: it sends every request to
// the one its target names.
type lb struct {
	*httptest.Server
	target atomic.Pointer[replica]
}

func newLB(t *testing.T, first *replica) *lb {
	l := &lb{}
	l.target.Store(first)
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { l.target.Load().h.ServeHTTP(w, r) }))
	t.Cleanup(func() {
		l.CloseClientConnections() // the clients' GET streams too
		l.Close()
	})
	return l
}

func connect(t *testing.T, ctx context.Context, url string) *client.Session {
	t.Helper()
	sess, err := client.New("lb-test", "1.0.0", client.WithProtocolVersion("2025-11-25")).Connect(ctx, &client.StreamableHTTP{URL: url + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// Two replicas hold copies of one session; the client ends it through
// one, and the other's copy ends at its next change of the state (the
// store no longer keeps it) instead of putting the state back.
func TestSessionEndedElsewhereEndsHere(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := twoCopies(t, ctx)
	store, a, b, l, sess, id := c.store, c.a, c.b, c.lb, c.sess, c.id
	l.target.Store(a)
	req, _ := http.NewRequest(http.MethodDelete, l.URL+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE through a: %v %v", resp, err)
	}
	resp.Body.Close()
	l.target.Store(b)
	if _, err := sess.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelError}); err != nil {
		t.Logf("setLevel on b's stale copy: %v", err) // answered or not: what matters is below
	}
	if _, ok := store.get(id); ok {
		t.Error("b's copy put the deleted session's state back")
	}
	if _, err := sess.ListTools(ctx, nil); err == nil {
		t.Error("b still serves the session its client ended")
	}
}

// A replica's copy that idles out does not drop the state another
// replica is serving: that one keeps the stored Expires moving.
func TestIdleCopyKeepsTheStateAnotherServes(t *testing.T) {
	store := &mapStore{states: map[string]server.SessionState{}}
	limits := server.WithLimits(server.Limits{SessionIdle: 300 * time.Millisecond})
	a, b := newReplica(t, store, limits), newReplica(t, store, limits)
	l := newLB(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess := connect(t, ctx, l.URL)
	id, _, _ := store.only()
	l.target.Store(b)
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := sess.ListTools(ctx, nil); err != nil { // a's copy idles out meanwhile
			t.Fatalf("b, while a's copy idles out: %v", err)
		}
	}
	if st, ok := store.get(id); !ok || time.Until(st.Expires) <= 0 {
		t.Errorf("the state of a session b serves: kept %v, expires in %v", ok, time.Until(st.Expires))
	}
}

// A replica with no room for a stored session says so (503, Retry-After),
// not that the session is gone: the client must not start over.
func TestRestoreWithoutRoomIsBusy(t *testing.T) {
	store := &mapStore{states: map[string]server.SessionState{}}
	a, b := newReplica(t, store), newReplica(t, store, server.WithLimits(server.Limits{Sessions: 1}))
	l := newLB(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	connect(t, ctx, l.URL) // b's one session
	held, _, _ := store.only()
	l.target.Store(a)
	connect(t, ctx, l.URL)
	var id string // a's
	store.mu.Lock()
	for sid := range store.states {
		if sid != held {
			id = sid
		}
	}
	store.mu.Unlock()
	req, _ := http.NewRequest(http.MethodPost, l.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	l.target.Store(b)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a stored session b has no room for: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

// Two replicas hold copies of one session, and the client changes it
// through each in turn while neither hears of the other's change (the
// store relays nothing): every change is kept. Each copy's write is
// refused at the version it read, and made again on the state the store
// keeps, so that a subscription taken, or dropped, at one replica is not
// undone by the other's stale copy.
func TestCopiesKeepEachOthersChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := twoCopies(t, ctx)
	store, a, b, l, sess, id := c.store, c.a, c.b, c.lb, c.sess, c.id
	const text, binary, one, two = "test://static-text", "test://static-binary", "test://template/1/data", "test://template/2/data"
	subscribe := func(uri string) func() error {
		return func() error { _, err := sess.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri}); return err }
	}
	unsubscribe := func(uri string) func() error {
		return func() error { _, err := sess.Unsubscribe(ctx, &mcp.UnsubscribeRequestParams{URI: uri}); return err }
	}
	setLevel := func(l mcp.LoggingLevel) func() error {
		return func() error { _, err := sess.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: l}); return err }
	}
	steps := []struct {
		at     *replica
		change func() error
		want   []string // the subscriptions kept after it
		level  string
	}{
		{a, subscribe(text), []string{text}, ""},
		{b, subscribe(binary), []string{binary, text}, ""},
		{a, setLevel(mcp.LoggingLevelError), []string{binary, text}, "error"},
		{b, setLevel(mcp.LoggingLevelDebug), []string{binary, text}, "debug"},
		{b, subscribe(one), []string{binary, text, one}, "debug"}, // b serves debug, not a's error it took up
		{a, subscribe(two), []string{binary, text, one, two}, "debug"},
		{b, unsubscribe(two), []string{binary, text, one}, "debug"}, // one b had not seen
		{a, setLevel(mcp.LoggingLevelWarning), []string{binary, text, one}, "warning"},
		{b, setLevel(mcp.LoggingLevelDebug), []string{binary, text, one}, "debug"}, // the level b last knew
		{a, unsubscribe(text), []string{binary, one}, "debug"},
		{b, subscribe(two), []string{binary, one, two}, "debug"},
	}
	for i, step := range steps {
		l.target.Store(step.at)
		if err := step.change(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		st, ok := store.get(id)
		if !ok || !slices.Equal(st.Subscriptions, step.want) || st.LogLevel != step.level {
			t.Fatalf("step %d: kept %v, subscriptions %q, level %q; want %q, %q", i, ok, st.Subscriptions, st.LogLevel, step.want, step.level)
		}
	}
}

// copies is one session with a copy at each of two replicas, a and b,
// behind lb, which sends to b.
type copies struct {
	store *mapStore
	a, b  *replica
	lb    *lb
	sess  *client.Session
	id    string
}

// twoCopies opens a session at a and makes b restore its copy.
func twoCopies(t *testing.T, ctx context.Context) copies {
	t.Helper()
	c := copies{store: &mapStore{states: map[string]server.SessionState{}}}
	c.a, c.b = newReplica(t, c.store), newReplica(t, c.store)
	c.lb = newLB(t, c.a)
	c.sess = connect(t, ctx, c.lb.URL)
	c.id, _, _ = c.store.only()
	c.lb.target.Store(c.b)
	if _, err := c.sess.ListTools(ctx, nil); err != nil { // b restores its copy
		t.Fatal(err)
	}
	return c
}

// downStore is a mapStore whose updates fail while it is down.
type downStore struct {
	*mapStore
	down    atomic.Bool
	mu      sync.Mutex
	refused []time.Time // when it refused an update
}

func (d *downStore) Update(ctx context.Context, s server.SessionState) error {
	if d.down.Load() {
		d.mu.Lock()
		d.refused = append(d.refused, time.Now())
		d.mu.Unlock()
		return errors.New("store down")
	}
	return d.mapStore.Update(ctx, s)
}

// After a failed save, one request in a second tries again, not every
// request: each would wait on the store, 5 s when it hangs.
func TestStoreDownIsTriedOnceASecond(t *testing.T) {
	store := &downStore{mapStore: &mapStore{states: map[string]server.SessionState{}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, sess := servedBy(t, ctx, store, server.WithLimits(server.Limits{SessionIdle: 2 * time.Second})) // saved every 500ms in use
	store.down.Store(true)
	if _, err := sess.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelError}); err != nil { // its save fails
		t.Fatal(err)
	}
	pings := 0
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, err := sess.Ping(ctx, nil); err != nil {
			t.Fatal(err)
		}
		pings++
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	if len(store.refused) < 2 {
		t.Fatalf("%d saves tried in 1.5 s with the store down, want the failed one and one a second later", len(store.refused))
	}
	for i := 1; i < len(store.refused); i++ {
		if gap := store.refused[i].Sub(store.refused[i-1]); gap < 900*time.Millisecond {
			t.Errorf("%d saves tried in 1.5 s of %d pings with the store down, %v apart; want one a second", len(store.refused), pings, gap)
			break
		}
	}
}

// A change whose save failed is saved once more when the server closes
// (a rolling deploy), not lost with the process: the replica that takes
// the session over serves it from the store.
func TestUnsavedChangeIsSavedAtClose(t *testing.T) {
	store := &downStore{mapStore: &mapStore{states: map[string]server.SessionState{}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, sess := servedBy(t, ctx, store)
	id, _, _ := store.only()
	store.down.Store(true)
	const uri = "test://static-text"
	if _, err := sess.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri}); err != nil {
		t.Fatal(err)
	}
	if st, _ := store.get(id); len(st.Subscriptions) != 0 {
		t.Fatalf("the store was down, and kept %q", st.Subscriptions)
	}
	store.down.Store(false)
	r.stop()
	if st, ok := store.get(id); !ok || !slices.Equal(st.Subscriptions, []string{uri}) {
		t.Errorf("after Close, the store keeps %v, %q; want the subscription", ok, st.Subscriptions)
	}
}

// servedBy opens a session at one replica on store, behind a balancer.
func servedBy(t *testing.T, ctx context.Context, store server.SessionStore, opts ...server.Option) (*replica, *client.Session) {
	t.Helper()
	r := newReplica(t, store, opts...)
	return r, connect(t, ctx, newLB(t, r).URL)
}
