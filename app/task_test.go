package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
)

// taskStream is a session's stream: what the server sends unasked.
type taskStream struct {
	mu   sync.Mutex
	msgs []map[string]any
}

func (o *taskStream) Send(b []byte) error {
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	o.mu.Lock()
	o.msgs = append(o.msgs, m)
	o.mu.Unlock()
	return nil
}

// await returns the first message that match accepts, waiting up to 5 s.
func (o *taskStream) await(t *testing.T, what string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		o.mu.Lock()
		for _, m := range o.msgs {
			if match(m) {
				o.mu.Unlock()
				return m
			}
		}
		o.mu.Unlock()
	}
	t.Fatalf("no %s on the session's stream", what)
	return nil
}

type taskSession struct {
	t    *testing.T
	sess *core.Session
	out  *taskStream
	n    int
}

func (s *taskSession) call(method, params string) map[string]any {
	s.t.Helper()
	s.n++
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, s.n, method, params)
	var m map[string]any
	if err := json.Unmarshal(s.sess.Handle(context.Background(), []byte(body), nil), &m); err != nil {
		s.t.Fatalf("%s: %v", method, err)
	}
	return m
}

// askName is a tool that asks the client for a name (elicitation) and
// answers it as its structured result.
func askName(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	r, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{Message: "Name?", RequestedSchema: mcp.ElicitRequestFormParamsRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": map[string]any{"type": "string"}}}})
	if err != nil {
		return nil, err
	}
	return app.Structured(map[string]any{"name": r.Content["name"]})
}

func errCode(m map[string]any) any {
	e, _ := m["error"].(map[string]any)
	return e["code"]
}

// A 2025-11-25 task end to end: a task-augmented tools/call is answered
// with its task at once, followed with tasks/get and status
// notifications, its result fetched with tasks/result (the related-task
// _meta added), its input asked while it runs (input_required); cancel,
// list, taskSupport and per-user isolation, all in strict mode.
func TestTasks(t *testing.T) {
	release := make(chan struct{})
	a := app.New("tasks", "1")
	app.AddTool(a, app.Tool{Name: "slow", TaskSupport: "optional"}, func(ctx context.Context, _ struct{}) (string, error) {
		select {
		case <-release:
			return "done", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	app.AddTool(a, app.Tool{Name: "hang", TaskSupport: "optional"}, func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	})
	app.AddTool(a, app.Tool{Name: "batch", TaskSupport: "required"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	app.AddTool(a, app.Tool{Name: "quick"}, func(context.Context, struct{}) (string, error) { return "quick", nil })
	a.AddRawTool(app.Tool{Name: "ask", TaskSupport: "optional"}, askName)
	srv := app.NewServer(a, server.WithStrict(true))
	defer srv.Close()
	open := func(owner string) *taskSession {
		out := &taskStream{}
		sess, err := core.Of(srv).NewSession("", out, core.OpenedBy(core.Caller{Owner: owner, Key: "principal:" + owner}))
		if err != nil {
			t.Fatal(err)
		}
		s := &taskSession{t: t, sess: sess, out: out}
		init := result(t, s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`))
		if caps := init["capabilities"].(map[string]any); caps["tasks"] == nil {
			t.Fatalf("no tasks capability: %v", caps)
		}
		sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		return s
	}
	alice, bob := open("alice"), open("bob")

	created := result(t, alice.call("tools/call", `{"name":"slow","task":{"ttl":60000}}`))
	task := created["task"].(map[string]any)
	id := task["taskId"].(string)
	if task["status"] != "working" || task["ttl"] != 60000.0 {
		t.Fatalf("created %v", created)
	}
	if got := result(t, alice.call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))); got["status"] != "working" {
		t.Errorf("tasks/get %v", got)
	}
	// Another user's task is unknown to them.
	if c := errCode(bob.call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))); c != -32602.0 {
		t.Errorf("bob's tasks/get of alice's task: %v, want -32602", c)
	}
	if list := result(t, bob.call("tasks/list", `{}`))["tasks"].([]any); len(list) != 0 {
		t.Errorf("bob's tasks/list: %v", list)
	}
	close(release)
	payload := result(t, alice.call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id)))
	content := payload["content"].([]any)[0].(map[string]any)
	related := payload["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"].(map[string]any)
	if content["text"] != "done" || related["taskId"] != id {
		t.Errorf("tasks/result %v", payload)
	}
	alice.out.await(t, "a completed status", func(m map[string]any) bool {
		p, _ := m["params"].(map[string]any)
		return m["method"] == "notifications/tasks/status" && p["taskId"] == id && p["status"] == "completed"
	})
	if list := result(t, alice.call("tasks/list", `{}`))["tasks"].([]any); len(list) != 1 || list[0].(map[string]any)["status"] != "completed" {
		t.Errorf("tasks/list %v", list)
	}
	if c := errCode(alice.call("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id))); c != -32602.0 {
		t.Errorf("cancelling a finished task: %v, want -32602", c)
	}

	// Cancelled while it runs: its result is an error.
	running := result(t, alice.call("tools/call", `{"name":"hang","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	if got := result(t, alice.call("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, running))); got["status"] != "cancelled" {
		t.Errorf("tasks/cancel %v", got)
	}
	if c := errCode(alice.call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, running))); c == nil {
		t.Error("tasks/result of a cancelled task answered a result")
	}

	// taskSupport: required needs task, none refuses it.
	if c := errCode(alice.call("tools/call", `{"name":"batch"}`)); c != -32601.0 {
		t.Errorf("a required task tool called plainly: %v, want -32601", c)
	}
	if c := errCode(alice.call("tools/call", `{"name":"quick","task":{}}`)); c != -32601.0 {
		t.Errorf("a tool without task support called as a task: %v, want -32601", c)
	}
	if got := result(t, alice.call("tools/call", `{"name":"slow"}`)); !strings.Contains(fmt.Sprint(got["content"]), "done") {
		t.Errorf("an optional task tool called plainly: %v", got)
	}

	// Input while it runs: input_required, the question on the stream.
	asking := result(t, alice.call("tools/call", `{"name":"ask","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	q := alice.out.await(t, "the task's elicitation", func(m map[string]any) bool { return m["method"] == "elicitation/create" })
	if got := result(t, alice.call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, asking))); got["status"] != "input_required" {
		t.Errorf("while asking: %v", got)
	}
	answer, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q["id"], "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}})
	alice.sess.Handle(context.Background(), answer, nil)
	if got := result(t, alice.call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, asking))); fmt.Sprint(got["structuredContent"]) != "map[name:Ada]" {
		t.Errorf("the asking task's result %v", got)
	}

	// A TTL too large for a Duration in nanoseconds is the longest kept,
	// not one that wrapped round to the past.
	huge := result(t, alice.call("tools/call", `{"name":"hang","task":{"ttl":10000000000000}}`))["task"].(map[string]any)
	if huge["ttl"] != float64(time.Hour.Milliseconds()) || huge["status"] != "working" {
		t.Errorf("a task asked to live 10^13 ms: %v, want status working and the hour the server keeps at most", huge)
	}
	// A tasks/result the client cancels is not answered (spec: SHOULD NOT).
	waiting := result(t, alice.call("tools/call", `{"name":"hang","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	answered := make(chan []byte, 1)
	go func() {
		answered <- alice.sess.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":%q}}`, waiting)), nil)
	}()
	time.Sleep(50 * time.Millisecond) // the request is in flight
	alice.sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r"}}`), nil)
	select {
	case reply := <-answered:
		if len(reply) > 0 {
			t.Errorf("a cancelled tasks/result was answered: %s", reply)
		}
	case <-time.After(5 * time.Second):
		t.Error("a cancelled tasks/result still waits")
	}
}

// Where no tool runs as a task the server declares no tasks capability,
// and a task-augmented call is served as a plain one, as the spec asks.
func TestTaskParamWithoutTasks(t *testing.T) {
	a := app.New("plain", "1")
	app.AddTool(a, app.Tool{Name: "quick"}, func(context.Context, struct{}) (string, error) { return "quick", nil })
	c := connect(t, a, "2025-11-25")
	if got := text(t, c.call("tools/call", `{"name":"quick","task":{"ttl":1000}}`)); got != "quick" {
		t.Errorf("a task param without tasks: %q", got)
	}
}

// tasks/list pages: every task of the user once, in pages of the core's
// size with a cursor to the next; a cursor it did not issue is -32602.
func TestTaskListPages(t *testing.T) {
	a := app.New("tasks", "1")
	app.AddTool(a, app.Tool{Name: "quick", TaskSupport: "optional"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	srv := app.NewServer(a, server.WithStrict(true))
	defer srv.Close()
	sess, err := core.Of(srv).NewSession("", &taskStream{}, core.OpenedBy(core.Caller{Owner: "alice", Key: "principal:alice"}))
	if err != nil {
		t.Fatal(err)
	}
	s := &taskSession{t: t, sess: sess}
	result(t, s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`))
	const n = 60 // more than a page, fewer than a user keeps
	created := map[string]bool{}
	for range n {
		id := result(t, s.call("tools/call", `{"name":"quick","task":{}}`))["task"].(map[string]any)["taskId"].(string)
		result(t, s.call("tasks/result", fmt.Sprintf(`{"taskId":%q}`, id))) // ended before the next starts
		created[id] = true
	}
	seen, pages := map[string]bool{}, 0
	for cursor := ""; ; pages++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		page := result(t, s.call("tasks/list", params))
		for _, v := range page["tasks"].([]any) {
			id := v.(map[string]any)["taskId"].(string)
			if seen[id] || !created[id] {
				t.Fatalf("page %d lists %s again or one never created", pages, id)
			}
			seen[id] = true
		}
		next, _ := page["nextCursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != n || pages != 1 {
		t.Errorf("listed %d tasks over %d pages, want %d over 2", len(seen), pages+1, n)
	}
	bad := s.call("tasks/list", `{"cursor":"bm90LWEtY3Vyc29y"}`)
	e, _ := bad["error"].(map[string]any)
	if data, _ := e["data"].(map[string]any); e["code"] != -32602.0 || data["field"] != "/params/cursor" {
		t.Errorf("a foreign cursor: %v, want -32602 at /params/cursor", bad)
	}
}

// A task's request to a client that neither listens nor asks for the
// task's result fails after the answer timeout, not the task's TTL (an
// hour): the wait for a stream to send it on counts.
func TestTaskRequestWithNowhereToGoTimesOut(t *testing.T) {
	failed := make(chan error, 1)
	a := app.New("tasks", "1")
	a.AddRawTool(app.Tool{Name: "ask", TaskSupport: "required"}, func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		_, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{Message: "Name?", RequestedSchema: mcp.ElicitRequestFormParamsRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": map[string]any{"type": "string"}}}})
		failed <- err
		return nil, err
	})
	srv := app.NewServer(a, server.WithLimits(server.Limits{AnswerTimeout: 200 * time.Millisecond}))
	defer srv.Close()
	sess, err := core.Of(srv).NewSession("", nil) // no stream, and no tasks/result comes
	if err != nil {
		t.Fatal(err)
	}
	s := &taskSession{t: t, sess: sess}
	result(t, s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`))
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	result(t, s.call("tools/call", `{"name":"ask","task":{}}`))
	select {
	case err := <-failed:
		if err == nil || !strings.Contains(err.Error(), "within") {
			t.Errorf("the task's request: %v, want a timeout", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the task's request still waits 5s past an answer timeout of 200ms")
	}
}

// A task's own request to the client goes on the response of the
// tasks/result the client opened for it (2025-11-25: the client calls
// tasks/result when it sees input_required), with the related-task _meta;
// here the session has no stream of its own, so there is no other way.
func TestTaskInputOnTasksResult(t *testing.T) {
	a := app.New("tasks", "1")
	a.AddRawTool(app.Tool{Name: "ask", TaskSupport: "required"}, askName)
	srv := app.NewServer(a, server.WithStrict(true))
	defer srv.Close()
	sess, err := core.Of(srv).NewSession("", nil) // no stream: the task must wait for tasks/result
	if err != nil {
		t.Fatal(err)
	}
	s := &taskSession{t: t, sess: sess}
	result(t, s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`))
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	id := result(t, s.call("tools/call", `{"name":"ask","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		got := result(t, s.call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id)))
		if got["status"] == "input_required" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %v, want input_required", got)
		}
	}
	stream := &taskStream{}
	answer := make(chan []byte, 1)
	go func() {
		answer <- sess.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":%q}}`, id)), stream)
	}()
	ask := stream.await(t, "elicitation/create", func(m map[string]any) bool { return m["method"] == "elicitation/create" })
	if meta, _ := ask["params"].(map[string]any)["_meta"].(map[string]any); fmt.Sprint(meta["io.modelcontextprotocol/related-task"]) != fmt.Sprintf("map[taskId:%s]", id) {
		t.Errorf("the task's request %v lacks the related-task _meta", ask)
	}
	reply := fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"action":"accept","content":{"name":"Ada"}}}`, ask["id"])
	sess.Handle(context.Background(), []byte(reply), nil)
	var res map[string]any
	if err := json.Unmarshal(<-answer, &res); err != nil {
		t.Fatal(err)
	}
	if sc := result(t, res)["structuredContent"]; fmt.Sprint(sc) != "map[name:Ada]" {
		t.Errorf("tasks/result %v, want the answer the client gave on its stream", res)
	}
}

// A task's request to the client goes only on a tasks/result response of
// the session the task came from: the client answers on the session it
// was asked on, and another session (of the same user, who may read the
// task) knows nothing of the request's id, so an answer there would be
// lost and the task would wait for it until its deadline.
func TestTaskInputStaysInItsSession(t *testing.T) {
	a := app.New("tasks", "1")
	a.AddRawTool(app.Tool{Name: "ask", TaskSupport: "required"}, askName)
	srv := app.NewServer(a)
	defer srv.Close()
	open := func() *taskSession {
		sess, err := core.Of(srv).NewSession("", nil, core.OpenedBy(core.Caller{Owner: "alice", Key: "principal:alice"}))
		if err != nil {
			t.Fatal(err)
		}
		s := &taskSession{t: t, sess: sess}
		result(t, s.call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}`))
		sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		return s
	}
	first, second := open(), open()
	id := result(t, first.call("tools/call", `{"name":"ask","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	payload := func(s *taskSession, stream *taskStream) <-chan []byte {
		answer := make(chan []byte, 1)
		go func() {
			answer <- s.sess.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":"r","method":"tasks/result","params":{"taskId":%q}}`, id)), stream)
		}()
		return answer
	}
	// The task asks, and waits for a stream to ask on.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if got := result(t, first.call("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))); got["status"] == "input_required" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the task did not ask in 5s")
		}
	}
	// The same user's other session may wait for the result, but the
	// question does not go there...
	elsewhere := &taskStream{}
	secondAnswer := payload(second, elsewhere)
	time.Sleep(200 * time.Millisecond)
	elsewhere.mu.Lock()
	if len(elsewhere.msgs) > 0 {
		t.Errorf("the other session's tasks/result carried %v: a request its session cannot take the answer to", elsewhere.msgs)
	}
	elsewhere.mu.Unlock()
	// ...it goes where the task came from.
	home := &taskStream{}
	firstAnswer := payload(first, home)
	ask := home.await(t, "elicitation/create", func(m map[string]any) bool { return m["method"] == "elicitation/create" })
	first.sess.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"action":"accept","content":{"name":"Ada"}}}`, ask["id"])), nil)
	for name, answer := range map[string]<-chan []byte{"the task's session": firstAnswer, "the other session": secondAnswer} {
		select {
		case b := <-answer:
			var res map[string]any
			if err := json.Unmarshal(b, &res); err != nil {
				t.Fatal(err)
			}
			if sc := result(t, res)["structuredContent"]; fmt.Sprint(sc) != "map[name:Ada]" {
				t.Errorf("tasks/result on %s: %v, want the task's result", name, res)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("tasks/result on %s: no answer in 5s", name)
		}
	}

	// When the task's session ends, the other session's tasks/result is
	// answered at once: the question has nowhere to go.
	id = result(t, first.call("tools/call", `{"name":"ask","task":{}}`))["task"].(map[string]any)["taskId"].(string)
	secondAnswer = payload(second, &taskStream{})
	time.Sleep(100 * time.Millisecond)
	first.sess.Close()
	select {
	case b := <-secondAnswer:
		if strings.Contains(string(b), "Ada") {
			t.Errorf("tasks/result after the task's session ended: %s", b)
		}
	case <-time.After(5 * time.Second):
		t.Error("tasks/result on the other session: no answer in 5s after the task's session ended")
	}
}
