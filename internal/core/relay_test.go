package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/taskstore"
)

// hub relays between the servers of one test, in the process: each
// endpoint is one server's relay (the Publish and Subscribe that
// server.WithSessionStore finds on a store).
type hub struct {
	mu     sync.Mutex
	states map[string]server.SessionState
	subs   map[*hubStore]func(string, []byte)
}

func newHub() *hub {
	return &hub{states: map[string]server.SessionState{}, subs: map[*hubStore]func(string, []byte){}}
}

// hubStore is one server's view of the hub: a shared SessionStore that
// relays.
type hubStore struct{ h *hub }

func (h *hub) store() *hubStore { return &hubStore{h: h} }

func (s *hubStore) Create(_ context.Context, st server.SessionState) error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if _, ok := s.h.states[st.ID]; ok {
		return errors.New("exists")
	}
	s.h.states[st.ID] = st
	return nil
}

func (s *hubStore) Load(_ context.Context, id string) (server.SessionState, error) {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	st, ok := s.h.states[id]
	if !ok {
		return st, server.ErrSessionNotFound
	}
	return st, nil
}

func (s *hubStore) Update(_ context.Context, st server.SessionState) error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if _, ok := s.h.states[st.ID]; !ok {
		return server.ErrSessionNotFound
	}
	s.h.states[st.ID] = st
	return nil
}

func (s *hubStore) Delete(_ context.Context, id string) error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	delete(s.h.states, id)
	return nil
}

func (s *hubStore) Publish(_ context.Context, session string, msg []byte) error {
	s.h.mu.Lock()
	var to []func(string, []byte)
	for other, deliver := range s.h.subs {
		if other != s {
			to = append(to, deliver)
		}
	}
	s.h.mu.Unlock()
	for _, deliver := range to {
		go deliver(session, append([]byte(nil), msg...))
	}
	return nil
}

func (s *hubStore) Subscribe(deliver func(string, []byte)) func() {
	s.h.mu.Lock()
	s.h.subs[s] = deliver
	s.h.mu.Unlock()
	return func() {
		s.h.mu.Lock()
		delete(s.h.subs, s)
		s.h.mu.Unlock()
	}
}

// A task of the 2026-07-28 extension waits for input at the process that
// runs it; the answers, sent with tasks/update to another process, reach
// it there (through the relay), and the task completes.
func TestExtensionTaskAnsweredThroughAnotherProcess(t *testing.T) {
	h, tasks := newHub(), taskstore.Memory()
	runner := newExtClient(t, newExtServer(t, server.WithTaskStore(tasks), server.WithSessionStore(h.store())), withTasks).as("alice")
	other := newExtClient(t, newExtServer(t, server.WithTaskStore(tasks), server.WithSessionStore(h.store())), withTasks).as("alice")
	id := runner.ok("tools/call", `{"name":"multi_input","arguments":{}}`)["taskId"].(string)
	runner.until(id, "input_required")
	other.ok("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"first":{"action":"accept","content":{"name":"Ann"}},"second":{"action":"accept","content":{"name":"Bo"}}}}`, id))
	if got := runner.until(id, "completed", "failed"); firstText(t, got["result"]) != "Got Ann and Bo." {
		t.Errorf("answered through the other process: %v", got)
	}
	// And tasks/cancel at the other process cancels a task the runner runs.
	id = runner.ok("tools/call", `{"name":"multi_input","arguments":{}}`)["taskId"].(string)
	runner.until(id, "input_required")
	other.ok("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id))
	if got := runner.until(id, "cancelled"); got["status"] != "cancelled" {
		t.Errorf("cancelled through the other process: %v", got)
	}
}

// A task of a session without a principal runs on when the session's
// copy in one process idles out while another process serves it (the
// store says the session lives): only the session's end everywhere ends
// its tasks.
func TestTaskOutlivesTheSessionsIdleCopy(t *testing.T) {
	h := newHub()
	tasks, err := taskstore.OpenSQLite(context.Background(), t.TempDir()+"/tasks.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tasks.Close() })
	const idle = 200 * time.Millisecond
	open := func() *core.Server {
		return newExtServer(t, server.WithTaskStore(tasks), server.WithSessionStore(h.store()), server.WithLimits(server.Limits{SessionIdle: idle}))
	}
	a, b := open(), open()
	sess, err := a.NewSession("", nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(s *core.Session, body string) map[string]any {
		t.Helper()
		var m map[string]any
		if err := json.Unmarshal(s.Handle(context.Background(), []byte(body), nil), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	call(sess, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	created := call(sess, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.8},"task":{}}}`)
	task, _ := created["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call with a task: %v", created)
	}

	// The client moves to b, which keeps the session alive; a's copy idles out.
	onB, ok := b.SessionFor(sess.ID(), "", "")
	if !ok {
		t.Fatal("b does not serve the session")
	}
	var status any
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
		got := call(onB, fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":%q}}`, id))
		status = got["result"].(map[string]any)["status"]
		if status != "working" {
			break
		}
	}
	if a.SessionCount() != 0 {
		t.Fatalf("a still holds the session after %v idle", idle)
	}
	if status != "completed" {
		t.Errorf("the task, after its session's copy on a idled out while b served it: %v, want completed", status)
	}
}

// A session that expires, its client gone, takes its tasks with it: the
// store forgets an expired state, and a session whose state is gone has
// ended everywhere.
func TestTasksEndWithTheirExpiredSession(t *testing.T) {
	a := newExtServer(t, server.WithLimits(server.Limits{SessionIdle: 100 * time.Millisecond}))
	sess, err := a.NewSession("", nil)
	if err != nil {
		t.Fatal(err)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":30},"task":{}}}`), nil)
	if n := core.TasksHeld(a); n != 1 {
		t.Fatalf("%d tasks held, want the one started", n)
	}
	for deadline := time.Now().Add(5 * time.Second); core.TasksHeld(a) != 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the session expired (idle 100ms, %d sessions) and its task is still held after 5s", a.SessionCount())
		}
	}
}
