package core_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/taskstore"
)

// The tasks extension of 2026-07-28 (SEP-2663) on the stateless path,
// driven with the conformance fixtures: which calls become tasks, what
// tasks/get shows, tasks/update and tasks/cancel, the -32021 gates, the
// owner of a task, status notifications on a listen stream, a restart.

const withTasks = `{"extensions":{"io.modelcontextprotocol/tasks":{}},"elicitation":{}}`

// extClient sends stateless 2026-07-28 requests as one caller.
type extClient struct {
	t    *testing.T
	srv  *core.Server
	ctx  context.Context
	caps string // the clientCapabilities of every request
	id   int
}

func newExtServer(t *testing.T, opts ...server.Option) *core.Server {
	t.Helper()
	srv := core.Of(server.New(conformance.New(conformance.WithStepDelay(5*time.Millisecond)), append([]server.Option{server.WithTaskDelay(20 * time.Millisecond)}, opts...)...))
	t.Cleanup(srv.Close)
	return srv
}

// newSQLiteExtServer is newExtServer with its tasks in the SQLite file at
// path, which servers opened on the same path share.
func newSQLiteExtServer(t *testing.T, path string) *core.Server {
	t.Helper()
	store, err := taskstore.OpenSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return newExtServer(t, server.WithTaskStore(store))
}

func (c *extClient) as(owner string) *extClient {
	d := *c
	d.ctx = core.WithCaller(context.Background(), core.Caller{Owner: owner, Key: "principal:" + owner})
	return &d
}

// call sends method with params (a JSON object without _meta) and returns
// the answer: its result, or its error object.
func (c *extClient) call(method, params string) (result, rpcErr map[string]any) {
	c.t.Helper()
	c.id++
	meta := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}`, c.caps)
	if params == "" || params == "{}" {
		params = "{" + meta + "}"
	} else {
		params = "{" + meta + "," + strings.TrimPrefix(params, "{")
	}
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, c.id, method, params)
	reply, _ := c.srv.ServeStateless(c.ctx, c.srv.Parse([]byte(body)), nil, nil)
	var msg struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	if err := json.Unmarshal(reply, &msg); err != nil {
		c.t.Fatalf("%s: reply %q: %v", method, reply, err)
	}
	return msg.Result, msg.Error
}

// ok is call for a request that must succeed.
func (c *extClient) ok(method, params string) map[string]any {
	c.t.Helper()
	r, e := c.call(method, params)
	if e != nil {
		c.t.Fatalf("%s %s: error %v", method, params, e)
	}
	return r
}

// until polls tasks/get until the task's status is one of want.
func (c *extClient) until(id string, want ...string) map[string]any {
	c.t.Helper()
	var got map[string]any
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		got = c.ok("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
		for _, w := range want {
			if got["status"] == w {
				return got
			}
		}
	}
	c.t.Fatalf("task %s: status %v, want one of %v", id, got["status"], want)
	return nil
}

func newExtClient(t *testing.T, srv *core.Server, caps string) *extClient {
	return &extClient{t: t, srv: srv, ctx: context.Background(), caps: caps}
}

func firstText(t *testing.T, result any) string {
	t.Helper()
	r, _ := result.(map[string]any)
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result %v has no content", result)
	}
	first, _ := content[0].(map[string]any)
	s, _ := first["text"].(string)
	return s
}

func TestExtensionTaskLifecycle(t *testing.T) {
	c := newExtClient(t, newExtServer(t), withTasks)

	// A quick call is answered at once; a longer one becomes a task,
	// flat, in the extension's words, visible to tasks/get at once.
	if r := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0,"label":"now"}}`); r["resultType"] != "complete" || firstText(t, r) != "Computed now in 0s." {
		t.Errorf("a call that ends within the task delay: %v, want its result", r)
	}
	created := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.3,"label":"later"}}`)
	id, _ := created["taskId"].(string)
	for _, k := range []string{"task", "ttl", "pollInterval", "result", "error", "inputRequests", "requestState"} {
		if _, has := created[k]; has {
			t.Errorf("CreateTaskResult has %q: %v", k, created)
		}
	}
	if created["resultType"] != "task" || id == "" || created["status"] != "working" || created["ttlMs"] != float64(time.Hour.Milliseconds()) || created["pollIntervalMs"] != float64(1000) {
		t.Fatalf("CreateTaskResult %v", created)
	}
	if got := c.ok("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id)); got["taskId"] != id || got["resultType"] != "complete" {
		t.Errorf("tasks/get right after the task was returned: %v", got)
	}
	done := c.until(id, "completed", "failed", "cancelled")
	if done["status"] != "completed" || firstText(t, done["result"]) != "Computed later in 0.3s." || done["error"] != nil {
		t.Errorf("finished task %v, want completed with its result inlined", done)
	}
	if res, _ := done["result"].(map[string]any); res["_meta"] != nil {
		t.Errorf("inlined result carries _meta %v (no related-task _meta in the extension)", res["_meta"])
	}

	// A tool error is a completed task whose result says isError; a
	// JSON-RPC error (here a panic) a failed one with the error inlined.
	id = c.ok("tools/call", `{"name":"failing_job","arguments":{}}`)["taskId"].(string)
	if got := c.until(id, "completed", "failed"); got["status"] != "completed" || got["result"].(map[string]any)["isError"] != true {
		t.Errorf("failing_job: %v, want completed with isError", got)
	}
	id = c.ok("tools/call", `{"name":"protocol_error_job","arguments":{}}`)["taskId"].(string)
	got := c.until(id, "completed", "failed")
	if e, _ := got["error"].(map[string]any); got["status"] != "failed" || e["code"] != float64(-32603) || got["result"] != nil {
		t.Errorf("protocol_error_job: %v, want failed with error -32603 and no result", got)
	}

	// tasks/cancel is an empty acknowledgement, also of a task that ended;
	// an unknown task is -32602.
	id = c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":60}}`)["taskId"].(string)
	for range 2 {
		if ack := c.ok("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id)); len(ack) != 1 || ack["resultType"] != "complete" {
			t.Errorf("tasks/cancel: %v, want {resultType: complete} only", ack)
		}
	}
	if got := c.until(id, "cancelled", "completed", "failed"); got["status"] != "cancelled" {
		t.Errorf("cancelled task: %v", got)
	}
	for _, m := range []string{"tasks/get", "tasks/cancel"} {
		if _, e := c.call(m, `{"taskId":"task_nobody"}`); e == nil || e["code"] != float64(-32602) {
			t.Errorf("%s of an unknown task: %v, want -32602", m, e)
		}
	}
	// The methods of 2025-11-25 that the extension removed are unknown.
	for _, m := range []string{"tasks/result", "tasks/list"} {
		if _, e := c.call(m, `{"taskId":"x"}`); e == nil || e["code"] != float64(-32601) {
			t.Errorf("%s: %v, want -32601", m, e)
		}
	}
}

func TestExtensionTaskNeedsTheExtension(t *testing.T) {
	c := newExtClient(t, newExtServer(t), `{}`)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		_, e := c.call(m, `{"taskId":"t","inputResponses":{}}`)
		data, _ := e["data"].(map[string]any)
		if e == nil || e["code"] != float64(-32021) || !strings.Contains(fmt.Sprint(data["requiredCapabilities"]), "io.modelcontextprotocol/tasks") {
			t.Errorf("%s without the extension: %v, want -32021 naming it", m, e)
		}
	}
	if _, e := c.call("tools/call", `{"name":"failing_job","arguments":{}}`); e == nil || e["code"] != float64(-32021) {
		t.Errorf("a required task tool without the extension: %v, want -32021", e)
	}
	// A tool that may run as a task runs as a call; a legacy params.task
	// changes nothing.
	r := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.1,"label":"sync"},"task":{"ttl":1000}}`)
	if r["resultType"] != "complete" || r["taskId"] != nil || firstText(t, r) != "Computed sync in 0.1s." {
		t.Errorf("slow_compute without the extension: %v, want its result", r)
	}
	// Declared on one request only, the extension counts for that one.
	with := &extClient{t: t, srv: c.srv, ctx: c.ctx, caps: withTasks}
	if r := with.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.3}}`); r["resultType"] != "task" {
		t.Errorf("with the extension: %v, want a task", r)
	}
}

func TestExtensionTaskInput(t *testing.T) {
	c := newExtClient(t, newExtServer(t), withTasks)
	id := c.ok("tools/call", `{"name":"confirm_delete","arguments":{"filename":"a.txt"}}`)["taskId"].(string)
	waiting := c.until(id, "input_required")
	reqs, _ := waiting["inputRequests"].(map[string]any)
	confirm, _ := reqs["confirm"].(map[string]any)
	if len(reqs) != 1 || confirm["method"] != "elicitation/create" || !strings.Contains(fmt.Sprint(confirm["params"]), "Delete a.txt?") {
		t.Fatalf("inputRequests %v, want the confirmation", waiting["inputRequests"])
	}
	// An answer to a key nobody asked is ignored, one that is no answer
	// too (the key still waits); the right one resumes the task.
	for _, responses := range []string{`{"nobody":{"action":"accept"}}`, `{"confirm":{"no":"answer"}}`} {
		if ack := c.ok("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":%s}`, id, responses)); len(ack) != 1 || ack["resultType"] != "complete" {
			t.Errorf("tasks/update ack %v", ack)
		}
	}
	if got := c.ok("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id)); got["status"] != "input_required" {
		t.Errorf("after answers to nothing: %v, want still input_required", got)
	}
	c.ok("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}}`, id))
	if got := c.until(id, "completed", "failed"); firstText(t, got["result"]) != "Deleted a.txt." {
		t.Errorf("confirmed: %v", got)
	}

	// Two questions at once, answered one at a time.
	id = c.ok("tools/call", `{"name":"multi_input","arguments":{}}`)["taskId"].(string)
	c.until(id, "input_required")
	c.ok("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"first":{"action":"accept","content":{"name":"Ann"}}}}`, id))
	got := c.ok("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))
	if reqs, _ := got["inputRequests"].(map[string]any); got["status"] != "input_required" || len(reqs) != 1 || reqs["second"] == nil {
		t.Fatalf("after a partial answer: %v, want only second waiting", got)
	}
	c.ok("tasks/update", fmt.Sprintf(`{"taskId":%q,"inputResponses":{"second":{"action":"accept","content":{"name":"Bo"}}}}`, id))
	if got := c.until(id, "completed", "failed"); firstText(t, got["result"]) != "Got Ann and Bo." {
		t.Errorf("both answered: %v", got)
	}

	// Input first (an input-required result, no task), then the task.
	r := c.ok("tools/call", `{"name":"test_tool_with_task","arguments":{}}`)
	if r["resultType"] != "input_required" || r["taskId"] != nil {
		t.Fatalf("round 1: %v, want an input-required result", r)
	}
	r = c.ok("tools/call", fmt.Sprintf(`{"name":"test_tool_with_task","arguments":{},"requestState":%q,"inputResponses":{"user_name":{"action":"accept","content":{"name":"Alice"}}}}`, r["requestState"]))
	if r["resultType"] != "task" || r["requestState"] != nil {
		t.Fatalf("round 2: %v, want a task", r)
	}
	if got := c.until(r["taskId"].(string), "completed", "failed"); firstText(t, got["result"]) != "Hello, Alice! The task is done." {
		t.Errorf("task after input: %v", got)
	}
}

// A principal's task is its own: another user gets -32602 and cannot
// follow it on a listen stream; notifications/tasks/status reach the
// owner's stream with the task as tasks/get shows it.
func TestExtensionTaskOwnerAndNotifications(t *testing.T) {
	srv := newExtServer(t)
	alice, bob := newExtClient(t, srv, withTasks).as("alice"), newExtClient(t, srv, withTasks).as("bob")
	id := alice.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.5,"label":"mine"}}`)["taskId"].(string)
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		if _, e := bob.call(m, fmt.Sprintf(`{"taskId":%q,"inputResponses":{}}`, id)); e == nil || e["code"] != float64(-32602) {
			t.Errorf("bob's %s of alice's task: %v, want -32602", m, e)
		}
	}
	listen := func(c *extClient) (*recorder, func()) {
		out := &recorder{}
		ctx, cancel := context.WithCancel(c.ctx)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"tasksStatus":[%q]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}}}`, id, c.caps)
		ended := make(chan struct{})
		go func() { defer close(ended); srv.ServeStateless(ctx, srv.Parse([]byte(body)), out, nil) }()
		return out, func() { cancel(); <-ended }
	}
	mine, stopMine := listen(alice)
	defer stopMine()
	theirs, stopTheirs := listen(bob)
	defer stopTheirs()
	undeclared := newExtClient(t, srv, `{}`).as("alice") // without the extension, nothing to follow
	plain, stopPlain := listen(undeclared)
	defer stopPlain()
	var heard []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !strings.Contains(strings.Join(heard, ""), `"status":"completed"`); time.Sleep(10 * time.Millisecond) {
		for _, m := range mine.take() {
			heard = append(heard, string(m))
		}
	}
	all := strings.Join(heard, "\n")
	if !strings.Contains(heard[0], `"tasksStatus":["`+id+`"]`) || !strings.Contains(all, `"method":"notifications/tasks/status"`) || !strings.Contains(all, "Computed mine in 0.5s.") {
		t.Errorf("alice's stream: %s\nwant the acknowledgement and the completed task with its result", all)
	}
	for who, r := range map[string]*recorder{"bob's": theirs, "an undeclared": plain} {
		msgs := r.take()
		if len(msgs) == 0 {
			t.Errorf("%s stream got no acknowledgement", who)
		}
		for _, m := range msgs {
			if s := string(m); !strings.Contains(s, `"tasksStatus":[]`) {
				t.Errorf("%s stream heard %s, want only an acknowledgement that follows nothing", who, s)
			}
		}
	}
}

// A task whose store is durable outlives its server: after a restart on
// the same SQLite file, tasks/get shows it completed with its result.
func TestExtensionTaskSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	open := func() *core.Server { return newSQLiteExtServer(t, path) }
	first := open()
	c := newExtClient(t, first, withTasks).as("alice")
	id := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.1,"label":"kept"}}`)["taskId"].(string)
	c.until(id, "completed")
	first.Close()
	c = newExtClient(t, open(), withTasks).as("alice")
	if got := c.ok("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id)); got["status"] != "completed" || firstText(t, got["result"]) != "Computed kept in 0.1s." {
		t.Errorf("after the restart: %v", got)
	}
}

// A server that has the record of a task another server runs shows it,
// and refuses tasks/update rather than acknowledge answers it cannot give
// the task (the client routes by Mcp-Name, the task id).
func TestExtensionTaskOfAnotherServer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tasks.db")
	open := func() *core.Server { return newSQLiteExtServer(t, path) }
	a := newExtClient(t, open(), withTasks).as("alice")
	b := newExtClient(t, open(), withTasks).as("alice")
	id := a.ok("tools/call", `{"name":"confirm_delete","arguments":{"filename":"b.txt"}}`)["taskId"].(string)
	a.until(id, "input_required")
	// The other server reads the record, which the first saves just after
	// its own tasks/get shows the change: it shows it once saved.
	b.until(id, "input_required")
	update := fmt.Sprintf(`{"taskId":%q,"inputResponses":{"confirm":{"action":"accept","content":{"confirm":true}}}}`, id)
	if _, e := b.call("tasks/update", update); e == nil || e["code"] != float64(-32603) {
		t.Errorf("tasks/update on the other server: %v, want an error, not an acknowledgement that loses the answer", e)
	}
	a.ok("tasks/update", update)
	if got := b.until(id, "completed", "failed"); firstText(t, got["result"]) != "Deleted b.txt." {
		t.Errorf("through the other server: %v", got)
	}
}

// The two kinds of task are apart: a 2025-11-25 session of the same user
// neither gets nor lists a task of the extension, which the other kind's
// methods would mistake for one of their own (the regression: tasks/result
// took it for a stored task and asked a task store there was none of).
func TestExtensionTaskIsNotASessionTask(t *testing.T) {
	srv := newExtServer(t)
	c := newExtClient(t, srv, withTasks).as("alice")
	id := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":2}}`)["taskId"].(string)
	sess, err := srv.NewSession("", nil, core.OpenedBy(core.Caller{Owner: "alice", Key: "principal:alice"}))
	if err != nil {
		t.Fatal(err)
	}
	call := func(body string) map[string]any {
		var m map[string]any
		_ = json.Unmarshal(sess.Handle(context.Background(), []byte(body), nil), &m)
		return m
	}
	call(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	for i, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		got := call(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"taskId":%q}}`, i+2, m, id))
		if e, _ := got["error"].(map[string]any); e["code"] != float64(-32602) {
			t.Errorf("%s of the extension's task from a 2025-11-25 session: %v, want -32602", m, got)
		}
	}
	if got := call(`{"jsonrpc":"2.0","id":9,"method":"tasks/list","params":{}}`); strings.Contains(fmt.Sprint(got), id) {
		t.Errorf("tasks/list lists the extension's task: %v", got)
	}
	c.ok("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id))
}

// A task that runs on after its request was answered keeps the request's
// parsed message, not the bytes it came in (the regression: the message
// lived beside the body, and a task kept a large body for its life).
func TestTaskKeepsNoBody(t *testing.T) {
	srv := newExtServer(t)
	meta := fmt.Sprintf(`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":%s}`, withTasks)
	body := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{%s,"name":"slow_compute","arguments":{"seconds":5,"label":%q}}}`,
		meta, strings.Repeat("x", 1<<20)))
	kept := weak.Make(&body[0])
	reply, _ := srv.ServeStateless(core.WithCaller(context.Background(), core.Caller{Key: "addr:test"}), srv.Parse(body), nil, nil)
	if !strings.Contains(string(reply), `"resultType":"task"`) {
		t.Fatalf("reply %.200s, want a task", reply)
	}
	body = nil
	for range 3 {
		runtime.GC()
	}
	if kept.Value() != nil {
		t.Error("the task, still running, keeps the 1 MiB body its request came in")
	}
}

// flakyTasks is a task store that refuses every save while down.
type flakyTasks struct {
	server.TaskStore
	down atomic.Bool
}

func (f *flakyTasks) Save(ctx context.Context, r server.TaskRecord) error {
	if f.down.Load() {
		return errors.New("the store is down")
	}
	return f.TaskStore.Save(ctx, r)
}

// A task that finishes while its store is down is saved once the store is
// back: its record no longer stays "working" for ever (the heartbeat ends
// with the task), to be taken for failed by the other processes, its
// result lost with this one.
func TestFinishedTaskIsSavedAfterTheStoreIsBack(t *testing.T) {
	store := &flakyTasks{TaskStore: taskstore.Memory()}
	c := newExtClient(t, newExtServer(t, server.WithTaskStore(store)), withTasks).as("alice")
	id := c.ok("tools/call", `{"name":"slow_compute","arguments":{"seconds":0.2,"label":"kept"}}`)["taskId"].(string)
	store.down.Store(true)
	c.until(id, "completed")
	store.down.Store(false)
	var status string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if r, err := store.Load(context.Background(), id); err == nil {
			if status = r.Status; status == "completed" {
				return
			}
		}
	}
	t.Errorf("the stored record is %q, want completed", status)
}
