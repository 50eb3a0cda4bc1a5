package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// sharedStore is a SessionStore two servers share, as replicas share
// Redis: a map, as a user would write one.
type sharedStore struct {
	mu     sync.Mutex
	states map[string]server.SessionState
}

func (s *sharedStore) Create(_ context.Context, st server.SessionState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.states[st.ID] = st
	return nil
}

func (s *sharedStore) Load(_ context.Context, id string) (server.SessionState, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[id]
	if !ok {
		return server.SessionState{}, server.ErrSessionNotFound
	}
	return st, nil
}

func (s *sharedStore) Update(ctx context.Context, st server.SessionState) error {
	return s.Create(ctx, st)
}

func (s *sharedStore) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.states, id)
	return nil
}

// only is the one session kept.
func (s *sharedStore) only() (string, server.SessionState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, st := range s.states {
		return id, st, len(s.states) == 1
	}
	return "", server.SessionState{}, false
}

func (s *sharedStore) get(id string) (server.SessionState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.states[id]
	return st, ok
}

// replica is one server behind the test's load balancer.
type replica struct {
	srv      *server.Server
	h        http.Handler
	shutdown func(context.Context)
}

func newReplica(t *testing.T, store server.SessionStore) *replica {
	f := conformance.New(conformance.WithStepDelay(0))
	srv := server.New(f, server.WithStrict(true), server.WithSessionStore(store))
	f.Attach(srv)
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
	store := &sharedStore{states: map[string]server.SessionState{}}
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
