package validate

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A recording of a server nobody here wrote (server-everything through
// mcpstack proxy, driven by the TypeScript SDK client: see
// interop/thirdparty_test.go) is valid; one violation planted in it must be
// found by its rule, at its line, with nothing reported before that line
// (what is valid before the defect stays valid). Every rule has a case.
func TestPlantedViolations(t *testing.T) {
	const base = "valid/2025-11-25/third-party-server-everything-stdio.jsonl"
	const base2026 = "valid/2026-07-28/recorded-conformance.jsonl"
	const baseHTTP = "valid/2025-11-25/third-party-gosdk-http.jsonl"
	cases := []struct {
		rule  string
		base  string // default base
		plant func(r *recording) (line int)
		opts  []Option
		// also is a rule whose findings may come before the line: a
		// consequence of the defect (a request whose answer it changed).
		also string
	}{
		{RuleRecord, "", func(r *recording) int {
			n := r.find(isMethod("ping"))
			r.editRecord(n, func(rec map[string]any) { rec["dir"] = "sideways" })
			return n
		}, nil, ""},
		{RuleJSON, "", func(r *recording) int {
			n := r.find(isMethod("tools/list"))
			r.lines[n-1] = r.lines[n-1][:len(r.lines[n-1])/2]
			return n
		}, nil, ""},
		{RuleEnvelope, "", func(r *recording) int {
			n := r.find(isMethod("prompts/list"))
			r.edit(n, func(m map[string]any) { m["jsonrpc"] = "1.0" })
			return n
		}, nil, ""},
		{RuleBatch, "", func(r *recording) int { // 2025-11-25 has no batches
			n := r.find(isMethod("resources/list"))
			r.editRecord(n, func(rec map[string]any) { rec["msg"] = []any{rec["msg"]} })
			return n
		}, nil, ""},
		{RuleRevision, "", func(r *recording) int {
			n := r.find(isMethod("initialize"))
			r.edit(n, func(m map[string]any) { params(m)["protocolVersion"] = "1999-01-01" })
			r.edit(n+1, func(m map[string]any) { m["result"].(map[string]any)["protocolVersion"] = "1999-01-01" })
			return n + 1
		}, nil, ""},
		{RuleUnknownMethod, "", func(r *recording) int {
			n := r.find(isMethod("ping"))
			r.edit(n, func(m map[string]any) { m["method"] = "pings" })
			return n
		}, nil, ""},
		{RuleDirection, "", func(r *recording) int { // a client-only notification, sent by the server
			n := r.find(isMethod("notifications/message"))
			r.edit(n, func(m map[string]any) { m["method"] = "notifications/roots/list_changed"; delete(m, "params") })
			return n
		}, nil, ""},
		{RuleSchema, "", func(r *recording) int {
			n := r.find(isMethod("tools/call"))
			r.edit(n, func(m map[string]any) { params(m)["name"] = 5 })
			return n
		}, nil, ""},
		{RuleResultSchema, "", func(r *recording) int {
			n := r.answer(r.find(isMethod("tools/call")))
			r.edit(n, func(m map[string]any) {
				delete(m["result"].(map[string]any)["content"].([]any)[0].(map[string]any), "text")
			})
			return n
		}, nil, ""},
		{RuleErrorSchema, "", func(r *recording) int {
			n := r.answer(r.find(isMethod("prompts/list")))
			r.edit(n, func(m map[string]any) {
				delete(m, "result")
				m["error"] = map[string]any{"code": 1.5, "message": "not an integer code"}
			})
			return n
		}, nil, ""},
		{RuleIDReuse, "", func(r *recording) int { // the id of an answered request, again
			first := r.find(isMethod("tools/list"))
			n := r.find(isMethod("prompts/list"))
			answer, id := r.answer(n), r.msg(first)["id"]
			r.edit(n, func(m map[string]any) { m["id"] = id })
			r.edit(answer, func(m map[string]any) { m["id"] = id })
			return n
		}, nil, ""},
		{RuleResponseUnmatched, "", func(r *recording) int {
			n := r.answer(r.find(isMethod("prompts/list")))
			r.edit(n, func(m map[string]any) { m["id"] = 4242 })
			return n
		}, nil, RuleUnanswered},
		{RuleUnanswered, "", func(r *recording) int {
			n := r.find(isMethod("resources/templates/list"))
			r.remove(r.answer(n))
			return n
		}, nil, ""},
		// Before initialize the revision cannot be told yet (the first
		// line gets a "revision" finding); a capture's revision is given.
		{RuleInitFirst, "", func(r *recording) int {
			r.insert(1, r.lines[r.find(isMethod("ping"))-1])
			return 1
		}, []Option{WithRevision("2025-11-25")}, ""},
		{RuleInitOnce, "", func(r *recording) int {
			n := r.find(isMethod("notifications/initialized"))
			r.insert(n+1, r.lines[n-1])
			return n + 1
		}, nil, ""},
		{RuleInitializedFirst, "", func(r *recording) int { // a request before notifications/initialized
			n := r.find(isMethod("notifications/initialized"))
			list := r.find(isMethod("tools/list"))
			r.insert(n, r.lines[list-1], r.lines[r.answer(list)-1])
			r.edit(n, func(m map[string]any) { m["id"] = "early" })
			r.edit(n+1, func(m map[string]any) { m["id"] = "early" })
			return n
		}, nil, ""},
		{RuleServerEarly, "", func(r *recording) int {
			n := r.find(isMethod("notifications/initialized"))
			r.insert(n, r.lines[r.find(isMethod("notifications/tools/list_changed"))-1])
			return n
		}, nil, ""},
		{RuleAfterShutdown, "", func(r *recording) int {
			r.insert(len(r.lines)+1, r.lines[r.find(isMethod("notifications/message"))-1])
			return len(r.lines)
		}, nil, ""},
		{RuleCapability, "", func(r *recording) int { // resources/subscribe, no longer declared
			r.edit(r.answer(r.find(isMethod("initialize"))), func(m map[string]any) {
				delete(m["result"].(map[string]any)["capabilities"].(map[string]any)["resources"].(map[string]any), "subscribe")
			})
			return r.find(isMethod("resources/subscribe"))
		}, nil, ""},
		{RuleProgressToken, "", func(r *recording) int {
			n := r.find(isMethod("notifications/progress"))
			r.edit(n, func(m map[string]any) { params(m)["progressToken"] = "nobody's" })
			return n
		}, nil, ""},
		{RuleProgressOrder, "", func(r *recording) int {
			n := r.find(isMethod("notifications/progress"))
			r.edit(n+1, func(m map[string]any) { params(m)["progress"] = 0 })
			return n + 1
		}, nil, ""},
		{RuleCancelUnknown, "", func(r *recording) int {
			n := r.find(isMethod("prompts/list"))
			r.insert(n, cancelled(r.lines[n-1], 4242))
			return n
		}, nil, ""},
		{RuleCancelLate, "", func(r *recording) int {
			list := r.find(isMethod("prompts/list"))
			n := r.answer(list) + 1
			r.insert(n, cancelled(r.lines[list-1], r.msg(list)["id"]))
			return n
		}, nil, ""},
		{RuleCancelInitialize, "", func(r *recording) int {
			n := r.find(isMethod("tools/list"))
			r.insert(n, cancelled(r.lines[n-1], r.msg(r.find(isMethod("initialize")))["id"]))
			return n
		}, nil, ""},
		{RuleTaskStatus, "", func(r *recording) int { // working again after completed
			done := r.find(func(m map[string]any) bool {
				return m["method"] == "notifications/tasks/status" && params(m)["status"] == "completed"
			})
			r.insert(done+1, r.lines[r.find(isMethod("notifications/tasks/status"))-1])
			return done + 1
		}, nil, ""},
		{RuleTaskRelated, "", func(r *recording) int {
			n := r.answer(r.find(isMethod("tasks/result")))
			r.edit(n, func(m map[string]any) { delete(m["result"].(map[string]any), "_meta") })
			return n
		}, nil, ""},
		{RuleEmpty, "", func(r *recording) int {
			r.lines = nil
			return 0
		}, nil, ""},
		// Streamable HTTP: the go-sdk everything-server through the proxy.
		{RuleHTTPStatus, baseHTTP, func(r *recording) int { // a notification answered 200, not 202
			n := r.find(isMethod("notifications/initialized"))
			r.editRecord(n, func(rec map[string]any) { rec["http"].(map[string]any)["status"] = 200 })
			return n
		}, nil, ""},
		{RuleHTTPHeaders, baseHTTP, func(r *recording) int { // no MCP-Protocol-Version after initialize
			n := r.find(isMethod("tools/list"))
			r.editRecord(n, func(rec map[string]any) {
				delete(rec["http"].(map[string]any)["request"].(map[string]any), "Mcp-Protocol-Version")
			})
			return n
		}, nil, ""},
		{RuleHTTPHeaders, baseHTTP, func(r *recording) int { // a request that lost its session
			n := r.find(isMethod("tools/list"))
			r.editRecord(n, func(rec map[string]any) {
				rec["session"] = ""
				delete(rec["http"].(map[string]any)["request"].(map[string]any), "Mcp-Session-Id")
			})
			return n
		}, nil, ""},
		{RuleHTTPHeaders, baseHTTP, func(r *recording) int { // a session id that is not visible ASCII
			n := r.find(isMethod("initialize"))
			r.editRecord(n, func(rec map[string]any) {
				rec["http"].(map[string]any)["response"].(map[string]any)["Mcp-Session-Id"] = "not visible"
			})
			return n
		}, nil, ""},
		{RuleHTTPHeaders, base2026, func(r *recording) int { // Mcp-Name is not the tool called
			n := r.find(isMethod("tools/call"))
			r.editRecord(n, func(rec map[string]any) {
				m := rec["msg"].(map[string]any)
				pv := params(m)["_meta"].(map[string]any)["io.modelcontextprotocol/protocolVersion"]
				rec["http"] = map[string]any{"method": "POST", "status": 200, "request": map[string]any{
					"Mcp-Protocol-Version": pv, "Mcp-Method": "tools/call", "Mcp-Name": "another_tool"}}
			})
			return n
		}, nil, ""},
		{RuleHTTPErrorStatus, base2026, func(r *recording) int { // -32601 with 200, not 404
			answer := r.answer(r.find(isMethod("tools/call")))
			r.editRecord(answer, func(rec map[string]any) {
				m := rec["msg"].(map[string]any)
				delete(m, "result")
				m["error"] = map[string]any{"code": -32601, "message": "Method not found"}
				rec["http"] = map[string]any{"status": 200, "response": map[string]any{"Content-Type": "application/json"}}
			})
			return answer
		}, nil, ""},
		// No third-party implementation speaks 2026-07-28 yet: the tasks
		// extension's rule is planted in our own recording of it.
		{RuleTaskExtension, base2026, func(r *recording) int {
			n := r.find(func(m map[string]any) bool {
				res, _ := m["result"].(map[string]any)
				return res != nil && res["resultType"] == "task"
			})
			req := r.request(n)
			r.edit(req, func(m map[string]any) {
				meta := params(m)["_meta"].(map[string]any)
				caps := meta["io.modelcontextprotocol/clientCapabilities"].(map[string]any)
				delete(caps, "extensions")
			})
			return n
		}, nil, ""},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.rule] = true
		t.Run(tc.rule, func(t *testing.T) {
			name := base
			if tc.base != "" {
				name = tc.base
			}
			r := loadRecording(t, name)
			line := tc.plant(r)
			v, err := New(tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			rep := v.Check(context.Background(), []Input{ReaderInput("planted.jsonl", strings.NewReader(r.text()))})
			found := false
			for _, f := range rep.Findings {
				if f.Rule == tc.rule && f.Line == line {
					found = true
				}
				if f.Line < line && f.Rule != tc.also {
					t.Errorf("a finding before the planted line %d: %s", line, f)
				}
			}
			if !found {
				t.Errorf("no %s finding at line %d; findings:\n%s", tc.rule, line, findingLines(rep.Findings))
			}
		})
	}
	for _, rule := range Rules {
		if !covered[rule.ID] {
			t.Errorf("rule %s has no planted case", rule.ID)
		}
	}
}

// recording is a log of the recording format, line by line, to edit.
type recording struct {
	t     *testing.T
	lines []string
}

func loadRecording(t *testing.T, name string) *recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return &recording{t: t, lines: strings.Split(strings.TrimRight(string(b), "\n"), "\n")}
}

func (r *recording) text() string {
	if len(r.lines) == 0 {
		return ""
	}
	return strings.Join(r.lines, "\n") + "\n"
}

// record is line n (1-based), decoded.
func (r *recording) record(n int) map[string]any {
	var rec map[string]any
	if err := json.Unmarshal([]byte(r.lines[n-1]), &rec); err != nil {
		r.t.Fatalf("line %d: %v", n, err)
	}
	return rec
}

// msg is the message of line n (nil for an event).
func (r *recording) msg(n int) map[string]any {
	m, _ := r.record(n)["msg"].(map[string]any)
	return m
}

// find is the first line whose message matches.
func (r *recording) find(match func(m map[string]any) bool) int {
	for n := 1; n <= len(r.lines); n++ {
		if m := r.msg(n); m != nil && match(m) {
			return n
		}
	}
	r.t.Fatal("no line matches")
	return 0
}

// answer is the line of the response to the request on line n.
func (r *recording) answer(n int) int {
	req := r.record(n)
	id := fmt.Sprint(req["msg"].(map[string]any)["id"])
	for i := n + 1; i <= len(r.lines); i++ {
		rec := r.record(i)
		m, _ := rec["msg"].(map[string]any)
		if m != nil && m["method"] == nil && fmt.Sprint(m["id"]) == id && rec["dir"] != req["dir"] && rec["session"] == req["session"] {
			return i
		}
	}
	r.t.Fatalf("line %d has no answer", n)
	return 0
}

// request is the line of the request that line n answers.
func (r *recording) request(n int) int {
	resp := r.record(n)
	id := fmt.Sprint(resp["msg"].(map[string]any)["id"])
	for i := n - 1; i >= 1; i-- {
		rec := r.record(i)
		m, _ := rec["msg"].(map[string]any)
		if m != nil && m["method"] != nil && fmt.Sprint(m["id"]) == id && rec["dir"] != resp["dir"] && rec["session"] == resp["session"] {
			return i
		}
	}
	r.t.Fatalf("line %d answers no request", n)
	return 0
}

func (r *recording) editRecord(n int, f func(rec map[string]any)) {
	rec := r.record(n)
	f(rec)
	b, err := json.Marshal(rec)
	if err != nil {
		r.t.Fatal(err)
	}
	r.lines[n-1] = string(b)
}

func (r *recording) edit(n int, f func(m map[string]any)) {
	r.editRecord(n, func(rec map[string]any) { f(rec["msg"].(map[string]any)) })
}

// insert puts lines before line n (len+1: at the end).
func (r *recording) insert(n int, lines ...string) {
	r.lines = append(r.lines[:n-1], append(lines, r.lines[n-1:]...)...)
}

func (r *recording) remove(n int) { r.lines = append(r.lines[:n-1], r.lines[n:]...) }

func isMethod(method string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["method"] == method }
}

func params(m map[string]any) map[string]any {
	p, _ := m["params"].(map[string]any)
	if p == nil {
		p = map[string]any{}
		m["params"] = p
	}
	return p
}

// cancelled is a notifications/cancelled for id, sent as the line like
// was (same session, side and time).
func cancelled(like string, id any) string {
	var rec map[string]any
	_ = json.Unmarshal([]byte(like), &rec)
	rec["msg"] = map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": id}}
	b, _ := json.Marshal(rec)
	return string(b)
}

func findingLines(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.String() + "\n")
	}
	return b.String()
}
