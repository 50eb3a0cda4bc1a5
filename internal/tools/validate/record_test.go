package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// scriptedClient drives one session of the conformance fixtures through
// Session.Handle, as a client that declares every capability of its
// revision and answers the server's sampling, elicitation and roots
// requests.
type scriptedClient struct {
	t    testing.TB
	sess *core.Session
	rev  string
	next int
	wg   sync.WaitGroup
}

// Send receives what the server sends about a call (core.Outbox): its
// requests are answered from another goroutine, as a client would.
func (c *scriptedClient) Send(msg []byte) error {
	var m map[string]any
	if err := json.Unmarshal(msg, &m); err != nil {
		c.t.Errorf("server sent bad JSON: %s", msg)
		return nil
	}
	method, _ := m["method"].(string)
	id, isRequest := m["id"]
	if !isRequest || method == "" {
		return nil
	}
	var result any
	switch method {
	case "sampling/createMessage":
		result = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "4"}, "model": "test-model", "stopReason": "endTurn"}
	case "elicitation/create":
		result = map[string]any{"action": "decline"}
	case "roots/list":
		result = map[string]any{"roots": []any{map[string]any{"uri": "file:///tmp/project", "name": "project"}}}
	case "ping":
		result = map[string]any{}
	default:
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.sess.Handle(context.Background(), mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "Method not found"}}), nil)
		}()
		return nil
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.sess.Handle(context.Background(), mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "result": result}), nil)
	}()
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// call sends a request and returns the result (nil for an error response).
func (c *scriptedClient) call(method string, params map[string]any) map[string]any {
	c.next++
	msg := map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method}
	if params != nil {
		msg["params"] = params
	}
	reply := c.sess.Handle(context.Background(), mustJSON(msg), c)
	var r map[string]any
	if err := json.Unmarshal(reply, &r); err != nil {
		c.t.Fatalf("%s: reply %q: %v", method, reply, err)
	}
	res, _ := r["result"].(map[string]any)
	return res
}

func (c *scriptedClient) notify(method string, params map[string]any) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.sess.Handle(context.Background(), mustJSON(msg), c)
}

// clientCapabilities declares every capability the revision defines.
func clientCapabilities(rev string) map[string]any {
	caps := map[string]any{"roots": map[string]any{"listChanged": true}, "sampling": map[string]any{}}
	if r := lookupRevision(rev); r != nil && r.caps[fromClient]["elicitation"] {
		caps["elicitation"] = map[string]any{}
	}
	return caps
}

// runSession plays a whole session: every tool, prompt and resource of the
// fixtures, progress, logging, completion, subscriptions, ping,
// cancellation.
func runSession(t testing.TB, srv *server.Server, rev, id string) {
	sess, err := core.Of(srv).NewSession(id, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &scriptedClient{t: t, sess: sess, rev: rev}
	init := c.call("initialize", map[string]any{"protocolVersion": rev, "capabilities": clientCapabilities(rev), "clientInfo": map[string]any{"name": "scripted", "version": "1"}})
	if init["protocolVersion"] != rev {
		t.Fatalf("initialize %s: %v", rev, init)
	}
	c.notify("notifications/initialized", nil)
	c.call("ping", nil)
	c.call("logging/setLevel", map[string]any{"level": "debug"})
	tools := c.call("tools/list", nil)
	list, _ := tools["tools"].([]any)
	for i, x := range list {
		tool, _ := x.(map[string]any)
		name, _ := tool["name"].(string)
		params := map[string]any{"name": name, "arguments": argumentsFor(tool["inputSchema"])}
		params["_meta"] = map[string]any{"progressToken": fmt.Sprintf("tok-%d", i)}
		c.call("tools/call", params)
	}
	prompts := c.call("prompts/list", nil)
	plist, _ := prompts["prompts"].([]any)
	for _, x := range plist {
		p, _ := x.(map[string]any)
		args := map[string]any{}
		pargs, _ := p["arguments"].([]any)
		for _, a := range pargs {
			am, _ := a.(map[string]any)
			n, _ := am["name"].(string)
			args[n] = argumentValue(n)
		}
		c.call("prompts/get", map[string]any{"name": p["name"], "arguments": args})
		if len(pargs) > 0 && c.rev >= "2025-03-26" {
			am, _ := pargs[0].(map[string]any)
			c.call("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": p["name"]}, "argument": map[string]any{"name": am["name"], "value": "v"}})
		}
	}
	resources := c.call("resources/list", nil)
	rlist, _ := resources["resources"].([]any)
	for _, x := range rlist {
		r, _ := x.(map[string]any)
		c.call("resources/read", map[string]any{"uri": r["uri"]})
	}
	c.call("resources/templates/list", nil)
	c.call("resources/subscribe", map[string]any{"uri": conformance.URIWatched})
	c.call("resources/unsubscribe", map[string]any{"uri": conformance.URIWatched})
	c.notify("notifications/roots/list_changed", nil)
	c.call("ping", nil)
	c.wg.Wait()
}

// argumentsFor fills the required string, number and boolean properties of
// a tool's input schema.
func argumentsFor(schema any) map[string]any {
	s, _ := schema.(map[string]any)
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	args := map[string]any{}
	for _, r := range req {
		name, _ := r.(string)
		p, _ := props[name].(map[string]any)
		switch p["type"] {
		case "number", "integer":
			args[name] = 1
		case "boolean":
			args[name] = true
		default:
			args[name] = "x"
		}
	}
	return args
}

// statelessClient plays the requests of a revision without initialize
// (2026-07-28): each carries its revision and capabilities in _meta, and
// an input-required result is answered by retrying with inputResponses.
type statelessClient struct {
	t    testing.TB
	srv  *server.Server
	meta map[string]any
	next int
}

func (c *statelessClient) Send([]byte) error { return nil } // progress and logs: recorded by the tap

func (c *statelessClient) call(method string, params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	meta := map[string]any{}
	for k, v := range c.meta {
		meta[k] = v
	}
	for round := 0; ; round++ {
		c.next++
		meta["progressToken"] = fmt.Sprintf("p-%d", c.next)
		params["_meta"] = meta
		body := mustJSON(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
		reply, _ := core.Of(c.srv).ServeStateless(context.Background(), core.Of(c.srv).Parse(body), c, nil)
		var r map[string]any
		if err := json.Unmarshal(reply, &r); err != nil {
			c.t.Fatalf("%s: reply %q: %v", method, reply, err)
		}
		res, _ := r["result"].(map[string]any)
		if res["resultType"] != "input_required" || round == 4 {
			return res
		}
		reqs, _ := res["inputRequests"].(map[string]any)
		answers := map[string]any{}
		for k, x := range reqs {
			ir, _ := x.(map[string]any)
			switch ir["method"] {
			case "sampling/createMessage":
				answers[k] = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "4"}, "model": "test-model"}
			case "roots/list":
				answers[k] = map[string]any{"roots": []any{map[string]any{"uri": "file:///tmp/project"}}}
			default:
				answers[k] = map[string]any{"action": "decline"}
			}
		}
		params["inputResponses"] = answers
		if st, ok := res["requestState"]; ok {
			params["requestState"] = st
		} else {
			delete(params, "requestState")
		}
	}
}

// runStateless plays the stateless counterpart of runSession.
func runStateless(t testing.TB, srv *server.Server, rev string) {
	c := &statelessClient{t: t, srv: srv, meta: map[string]any{
		wire.MetaProtocolVersion:             rev,
		wire.MetaClientCapabilities:          clientCapabilities(rev),
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "scripted", "version": "1"},
		"io.modelcontextprotocol/logLevel":   "debug",
	}}
	c.call("server/discover", nil)
	tools := c.call("tools/list", nil)
	list, _ := tools["tools"].([]any)
	for _, x := range list {
		tool, _ := x.(map[string]any)
		c.call("tools/call", map[string]any{"name": tool["name"], "arguments": argumentsFor(tool["inputSchema"])})
	}
	prompts := c.call("prompts/list", nil)
	plist, _ := prompts["prompts"].([]any)
	for _, x := range plist {
		p, _ := x.(map[string]any)
		args := map[string]any{}
		pargs, _ := p["arguments"].([]any)
		for _, a := range pargs {
			am, _ := a.(map[string]any)
			n, _ := am["name"].(string)
			args[n] = argumentValue(n)
		}
		c.call("prompts/get", map[string]any{"name": p["name"], "arguments": args})
	}
	resources := c.call("resources/list", nil)
	rlist, _ := resources["resources"].([]any)
	for _, x := range rlist {
		r, _ := x.(map[string]any)
		c.call("resources/read", map[string]any{"uri": r["uri"]})
	}
	c.call("resources/templates/list", nil)
}

// runStatelessTasks plays the tasks of the revision's tasks extension, if
// it has one: a task to its end, one that waits for input, one cancelled,
// one whose tool reports an error.
func runStatelessTasks(t testing.TB, srv *server.Server, rev string) {
	m, _ := lookupRevision(rev).spec.Method("tools/call")
	if m.TaskExtension == "" {
		return
	}
	caps := clientCapabilities(rev)
	caps["extensions"] = map[string]any{m.TaskExtension: map[string]any{}}
	c := &statelessClient{t: t, srv: srv, meta: map[string]any{
		wire.MetaProtocolVersion:             rev,
		wire.MetaClientCapabilities:          caps,
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "scripted", "version": "1"},
	}}
	until := func(id string, want ...string) map[string]any {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got := c.call("tasks/get", map[string]any{"taskId": id})
			if slices.Contains(want, got["status"].(string)) {
				return got
			}
		}
		t.Fatalf("task %s never reached %v", id, want)
		return nil
	}
	start := func(name string, args map[string]any) string {
		r := c.call("tools/call", map[string]any{"name": name, "arguments": args})
		id, _ := r["taskId"].(string)
		if r["resultType"] != "task" || id == "" {
			t.Fatalf("%s: %v, want a task", name, r)
		}
		return id
	}
	until(start("slow_compute", map[string]any{"seconds": 0.2, "label": "recorded"}), "completed")
	id := start("confirm_delete", map[string]any{"filename": "recorded.txt"})
	waiting := until(id, "input_required")
	answers := map[string]any{}
	for k := range waiting["inputRequests"].(map[string]any) {
		answers[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	}
	c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answers})
	until(id, "completed")
	id = start("slow_compute", map[string]any{"seconds": 60})
	c.call("tasks/cancel", map[string]any{"taskId": id})
	until(id, "cancelled")
	until(start("failing_job", map[string]any{}), "completed")
}

// argumentValue is what the scripted client passes for a prompt
// argument: a URI where the argument is one (the server embeds it as a
// resource, whose uri the schemas hold to the uri format).
func argumentValue(name string) string {
	if strings.Contains(strings.ToLower(name), "uri") {
		return "test://static-text"
	}
	return "value"
}

// sessionRevisions are the revisions a client negotiates with initialize.
func sessionRevisions() []string {
	var out []string
	for _, n := range revisionNames() {
		if lookupRevision(n).lifecycle {
			out = append(out, n)
		}
	}
	return out
}

// recordSessions runs a session of every revision through one server
// with a recorder and returns the log.
func recordSessions(t testing.TB) []byte {
	var buf syncBuffer
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var mu sync.Mutex
	rec := record.New(&buf, record.WithFlushInterval(0), record.WithClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(time.Millisecond)
		return clock
	}))
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithTap(rec), server.WithStrict(true))
	// The task fixtures work some steps before they ask or end, so that
	// they become tasks (past the task delay).
	tasks := server.New(conformance.New(conformance.WithStepDelay(10*time.Millisecond)), server.WithTap(rec), server.WithStrict(true))
	for _, rev := range revisionNames() {
		if lookupRevision(rev).lifecycle {
			runSession(t, srv, rev, "session-"+rev)
		} else {
			runStateless(t, srv, rev)
			runStatelessTasks(t, tasks, rev)
		}
	}
	srv.Close()
	tasks.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type syncBuffer = syncbuf.Buffer

// TestRecordedSessionsValidate records full sessions of the conformance
// fixtures, one per revision with initialize, and validates the log: a
// server that speaks the protocol leaves nothing to find.
func TestRecordedSessionsValidate(t *testing.T) {
	log := recordSessions(t)
	rep := checkBytes(t, "recorded.jsonl", log)
	for _, f := range rep.Findings {
		t.Errorf("%s\n\t%s", f, f.Excerpt)
	}
	if rep.Sessions != int64(len(revisionNames())) || rep.Messages < 100 {
		t.Errorf("recorded %d sessions, %d messages: the script did not run", rep.Sessions, rep.Messages)
	}
	if testing.Verbose() {
		t.Logf("%s", Summary(&rep))
	}
}

// checkBytes validates one in-memory log.
func checkBytes(t testing.TB, name string, log []byte, opts ...Option) Report {
	t.Helper()
	v, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v.Check(context.Background(), []Input{ReaderInput(name, bytes.NewReader(log))})
}

var recordCorpus = flag.Bool("record-corpus", false, "rewrite testdata/logs/valid/<rev>/recorded-conformance.jsonl from a recorded session of each revision")

// TestRecordCorpus keeps a snapshot of recorded sessions in the corpus
// (go test -run TestRecordCorpus -record-corpus), so that the corpus holds
// real server traffic even when the fixtures change.
// corpusDir is the corpus of logs, from this package's folder.
const corpusDir = "../../../testdata/logs"

func TestRecordCorpus(t *testing.T) {
	if !*recordCorpus {
		t.Skip("run with -record-corpus to rewrite the snapshot")
	}
	log := recordSessions(t)
	bySession := map[string][]byte{}
	for _, line := range bytes.SplitAfter(log, []byte("\n")) {
		var rec struct{ Session string }
		if json.Unmarshal(line, &rec) == nil {
			bySession[rec.Session] = append(bySession[rec.Session], line...)
		}
	}
	for _, rev := range revisionNames() {
		session := "session-" + rev
		if !lookupRevision(rev).lifecycle {
			session = ""
		}
		dir := filepath.Join(corpusDir, "valid", rev)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "recorded-conformance.jsonl"), bySession[session], 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
