package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/wire"
)

// A SessionState survives JSON, as a store outside the process keeps it:
// ids of both kinds, raw capabilities, times.
func TestSessionStateJSON(t *testing.T) {
	st := core.SessionState{ID: "s1", Transport: "streamable", Owner: "alice", Client: "principal:alice", Revision: "2025-11-25",
		Initialized: true, ClientCapabilities: json.RawMessage(`{"sampling":{}}`), ClientInfo: json.RawMessage(`{"name":"c","version":"1"}`),
		LogLevel: "warning", Subscriptions: []string{"a://1", "b://2"}, Pending: []wire.ID{wire.IntID(3), wire.StringID("x")},
		NextID: 3, Opened: time.Unix(1700000000, 0).UTC(), Expires: time.Unix(1700001800, 0).UTC()}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got core.SessionState
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, st) {
		t.Errorf("after JSON:\n got %+v\nwant %+v\n(%s)", got, st, b)
	}
}

// The default store: Create refuses an id it keeps, Update one it does
// not (the session ended elsewhere), Load forgets an expired state, Delete
// of nothing is no error.
func TestMemorySessions(t *testing.T) {
	ctx := context.Background()
	m := core.MemorySessions()
	live := core.SessionState{ID: "live", Expires: time.Now().Add(time.Hour)}
	if err := m.Create(ctx, live); err != nil {
		t.Fatal(err)
	}
	if err := m.Create(ctx, live); err == nil {
		t.Error("a second Create of one id succeeded")
	}
	if err := m.Update(ctx, core.SessionState{ID: "gone"}); !errors.Is(err, core.ErrSessionNotFound) {
		t.Errorf("Update of a state not kept: %v, want ErrSessionNotFound", err)
	}
	// Update replaces the state at the version it was made from only.
	live.LogLevel = "debug"
	if err := m.Update(ctx, live); err != nil {
		t.Fatal(err)
	}
	live.LogLevel = "error" // made from version 0, the state is at 1
	if err := m.Update(ctx, live); !errors.Is(err, core.ErrSessionChanged) {
		t.Errorf("Update from a version not kept: %v, want ErrSessionChanged", err)
	}
	if got, _ := m.Load(ctx, "live"); got.LogLevel != "debug" || got.Version != 1 {
		t.Errorf("after a refused Update: %+v", got)
	}
	if err := m.Create(ctx, core.SessionState{ID: "old", Expires: time.Now().Add(-time.Second)}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(ctx, "old"); !errors.Is(err, core.ErrSessionNotFound) {
		t.Errorf("Load of an expired state: %v, want ErrSessionNotFound", err)
	}
	if got, err := m.Load(ctx, "live"); err != nil || got.ID != "live" {
		t.Errorf("Load of a live state: %+v, %v", got, err)
	}
	if err := m.Delete(ctx, "nothing"); err != nil {
		t.Errorf("Delete of a state not kept: %v", err)
	}
}

// downSessions is a session store that is down: every call fails.
type downSessions struct{}

func (downSessions) Create(context.Context, core.SessionState) error { return errors.New("down") }
func (downSessions) Load(context.Context, string) (core.SessionState, error) {
	return core.SessionState{}, errors.New("down")
}
func (downSessions) Update(context.Context, core.SessionState) error { return errors.New("down") }
func (downSessions) Delete(context.Context, string) error            { return errors.New("down") }

// A session id is a bearer secret: the warnings of a store that is down
// name the session by its digest, never the id, which a client sends
// before anything checks it (the README: the id itself at debug only).
func TestStoreWarningsNameNoSessionID(t *testing.T) {
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	srv := newServer(conformance.New(), core.WithLogger(log), core.WithSessionStore(downSessions{}))
	defer srv.Close()
	const id = "the-secret-session-id-a-client-sent"
	if sess, _, ok := srv.SessionOf(context.Background(), core.Route{Transport: "streamable", SessionID: id}); ok || sess != nil {
		t.Fatal("a session served from a store that is down")
	}
	if !strings.Contains(logs.String(), "session state not loaded") {
		t.Fatalf("no warning: %s", logs.String())
	}
	if strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), sessionid.Digest(id)) {
		t.Errorf("the warning names the id, or not its digest: %s", logs.String())
	}
}

// What a copy writes is the state kept with the client's changes through
// the copy made on it, in their order, a save that failed first: an
// unsubscribe of a URI the copy never held drops it, a level set here
// wins, and past the delta's bound the copy's own subscriptions are
// written whole.
func TestStateWritten(t *testing.T) {
	kept := core.SessionState{ID: "s", LogLevel: "warning", Subscriptions: []string{"a", "b"}, NextID: 7, Version: 3}
	mine := core.SessionState{ID: "s", Revision: "2025-11-25", Subscriptions: []string{"c"}, NextID: 4, Pending: nil}
	many := make([]core.DeltaOp, 0, 3000)
	for i := range 3000 {
		many = append(many, core.DeltaOp{Drop: fmt.Sprintf("u%d", i)})
	}
	tests := []struct {
		name          string
		failed, later []core.DeltaOp
		subs          []string
		level         string
	}{
		{"nothing", nil, nil, []string{"a", "b"}, "warning"},
		{"subscribe", nil, []core.DeltaOp{{Subscribe: "c"}}, []string{"a", "b", "c"}, "warning"},
		{"drop one never held", nil, []core.DeltaOp{{Drop: "a"}}, []string{"b"}, "warning"},
		{"level", []core.DeltaOp{{Level: "debug"}}, nil, []string{"a", "b"}, "debug"},
		{"later wins", []core.DeltaOp{{Subscribe: "c"}, {Level: "debug"}}, []core.DeltaOp{{Drop: "c"}, {Level: "error"}}, []string{"a", "b"}, "error"},
		{"past the bound: mine whole", many, []core.DeltaOp{{Subscribe: "c"}}, []string{"c"}, "warning"},
	}
	for _, tt := range tests {
		st := core.StateWritten(kept, mine, tt.failed, tt.later)
		if !slices.Equal(st.Subscriptions, tt.subs) || st.LogLevel != tt.level {
			t.Errorf("%s: subscriptions %q, level %q; want %q, %q", tt.name, st.Subscriptions, st.LogLevel, tt.subs, tt.level)
		}
		if st.Version != 3 || st.NextID != 7 || st.Revision != "2025-11-25" {
			t.Errorf("%s: version %d, next id %d, revision %q; want the kept version and id, the revision negotiated here", tt.name, st.Version, st.NextID, st.Revision)
		}
	}
}
