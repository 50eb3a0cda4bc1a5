package check_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/tools/check"
)

// planted is a small Streamable HTTP server, written by hand so that it
// can do what no server of ours would: it serves one tool, "echo", with
// an input and an output schema, and misbehaves in one way (defect) or
// not at all ("").
type planted struct {
	defect   string
	mu       sync.Mutex
	sessions map[string]bool // id -> live
}

// session is a new session's id, or whether id is live.
func (p *planted) open() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions == nil {
		p.sessions = map[string]bool{}
	}
	id := fmt.Sprintf("s%d", len(p.sessions)+1)
	p.sessions[id] = true
	return id
}

func (p *planted) live(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.sessions[id]
}

func (p *planted) end(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sessions[id] {
		p.sessions[id] = false
	}
}

var echoTool = map[string]any{
	"name": "echo", "annotations": map[string]any{"readOnlyHint": true},
	"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string", "maxLength": 10}},
		"required": []any{"text"}, "additionalProperties": false},
	"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"echo": map[string]any{"type": "string"}}, "required": []any{"echo"}},
}

func (p *planted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reply := func(status int, msg map[string]any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(msg)
	}
	fail := func(status int, id any, code int, text string) {
		reply(status, map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
	}
	switch r.Method {
	case http.MethodDelete:
		p.end(r.Header.Get("Mcp-Session-Id"))
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m struct {
		ID     any            `json:"id"`
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	switch {
	case !json.Valid(body):
		fail(400, nil, -32700, "Parse error")
		return
	case bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")):
		fail(400, nil, -32600, "Invalid Request: no batches")
		return
	}
	_ = json.Unmarshal(body, &m)
	if m.Method == "" {
		fail(400, nil, -32600, "Invalid Request")
		return
	}
	if m.Method != "initialize" {
		switch sid := r.Header.Get("Mcp-Session-Id"); {
		case sid == "":
			fail(400, nil, -32600, "Bad Request: no session")
			return
		case !p.live(sid):
			fail(404, nil, -32600, "Session not found")
			return
		}
		if v := r.Header.Get("MCP-Protocol-Version"); v != "2025-11-25" {
			fail(400, nil, -32600, "Bad Request: unsupported protocol version")
			return
		}
	}
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	result := func(v map[string]any) { reply(200, map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": v}) }
	switch m.Method {
	case "initialize":
		w.Header().Set("Mcp-Session-Id", p.open())
		result(map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}}, "serverInfo": map[string]any{"name": "planted", "version": "1"}})
	case "ping":
		result(map[string]any{})
	case "tools/list":
		page := map[string]any{"tools": []any{echoTool}}
		if p.defect == "pagination loop" {
			page["nextCursor"] = "again"
			if m.Params["cursor"] == "again" {
				page["tools"] = []any{}
			}
		}
		result(page)
	case "tools/call":
		args, _ := m.Params["arguments"].(map[string]any)
		text, ok := args["text"].(string)
		valid := ok && len(text) <= 10 && len(args) == 1
		switch {
		case valid && p.defect == "output breaks outputSchema":
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "structuredContent": map[string]any{"echo": 5}})
		case valid, p.defect == "invalid answered as success":
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}, "structuredContent": map[string]any{"echo": text}})
		case p.defect == "wrong error code":
			fail(200, m.ID, -32603, "Internal error")
		case p.defect == "hang":
			<-r.Context().Done()
		default:
			result(map[string]any{"content": []any{map[string]any{"type": "text", "text": "invalid arguments"}}, "isError": true})
		}
	default:
		fail(200, m.ID, -32601, "Method not found")
	}
}

// findings runs check against h and returns the rule ids of its findings
// and its exit code.
func findings(t *testing.T, h http.Handler, extra ...string) (rules []string, code int, stderr string) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	var out, errb bytes.Buffer
	args := append([]string{"--revision", "2025-11-25", "--output", "json", "--rate", "0", "--timeout", "1s", "--fail-on", "warning"}, extra...)
	code = check.Command(append(args, srv.URL), &out, &errb)
	var doc struct {
		Findings []struct {
			Rule   string `json:"rule"`
			Reason string `json:"reason"`
		} `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("output is not JSON (%v):\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, f := range doc.Findings {
		rules = append(rules, f.Rule)
		t.Logf("%s: %s", f.Rule, f.Reason)
	}
	return rules, code, errb.String()
}

// Each planted defect is caught by the rule made for it; the server
// without one has no finding and exits 0.
func TestPlantedDefects(t *testing.T) {
	tests := []struct {
		defect string
		rule   string // "": no finding at all
	}{
		{"", ""},
		{"pagination loop", "check-pagination"},
		{"output breaks outputSchema", "check-output-schema"},
		{"invalid answered as success", "check-invalid-accepted"},
		{"wrong error code", "check-error-code"},
		{"hang", "check-hang"},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.defect+"none", " ", "-"), func(t *testing.T) {
			start := time.Now()
			rules, code, stderr := findings(t, &planted{defect: tt.defect})
			if tt.rule == "" {
				if len(rules) != 0 || code != 0 {
					t.Fatalf("a clean server: exit %d, findings %v\n%s", code, rules, stderr)
				}
				return
			}
			if code != 1 {
				t.Errorf("exit %d, want 1 (findings)\n%s", code, stderr)
			}
			found := false
			for _, r := range rules {
				found = found || r == tt.rule
				if r != tt.rule {
					t.Errorf("finding %s besides %s: each defect is one rule's", r, tt.rule)
				}
			}
			if !found {
				t.Errorf("findings %v, want %s\n%s", rules, tt.rule, stderr)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("the check took %v", d)
			}
		})
	}
}

// Only tools that declare readOnlyHint are called by default; one that
// declares destructiveHint only when named; --dry-run calls none.
func TestSafety(t *testing.T) {
	var calls atomic.Int64
	both := map[string]any{"destructiveHint": true, "readOnlyHint": true} // contradictory: the worse counts
	for _, annotations := range []map[string]any{{"destructiveHint": true}, both} {
		destructive := &callCounter{planted: &planted{}, calls: &calls, annotations: annotations}
		if _, code, stderr := findings(t, destructive, "--call-all"); code != 0 || calls.Load() != 0 || !strings.Contains(stderr, "declares destructiveHint") {
			t.Fatalf("%v, --call-all: called %d times (exit %d)\n%s", annotations, calls.Load(), code, stderr)
		}
		if _, code, _ := findings(t, destructive, "--call", " echo "); code != 0 || calls.Load() == 0 {
			t.Fatalf("%v, --call echo: %d calls (exit %d), want some", annotations, calls.Load(), code)
		}
		calls.Store(0)
		if _, _, stderr := findings(t, destructive, "--call", "echo", "--skip", "x, echo"); calls.Load() != 0 || !strings.Contains(stderr, "--skip names it") {
			t.Fatalf("%v, --skip echo: called %d times\n%s", annotations, calls.Load(), stderr)
		}
	}
	plain := &callCounter{planted: &planted{}, calls: &calls, annotations: map[string]any{}}
	if _, _, stderr := findings(t, plain); calls.Load() != 0 || !strings.Contains(stderr, "does not declare readOnlyHint") {
		t.Fatalf("a tool without hints was called %d times by default\n%s", calls.Load(), stderr)
	}
	readOnly := &callCounter{planted: &planted{}, calls: &calls, annotations: map[string]any{"readOnlyHint": true}}
	var out, errb bytes.Buffer
	srv := httptest.NewServer(readOnly)
	defer srv.Close()
	if code := check.Command([]string{"--revision", "2025-11-25", "--dry-run", "--rate", "0", srv.URL}, &out, &errb); code != 0 || calls.Load() != 0 {
		t.Fatalf("--dry-run: exit %d, %d calls\n%s", code, calls.Load(), errb.String())
	}
	if !strings.Contains(out.String(), `would send (valid): {"method":"tools/call","params":{"arguments":{"text":`) {
		t.Errorf("--dry-run printed:\n%s", out.String())
	}
}

// callCounter is the planted server with other annotations on its tool,
// counting the calls.
type callCounter struct {
	*planted
	calls       *atomic.Int64
	annotations map[string]any
}

func (c *callCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if bytes.Contains(body, []byte(`"tools/call"`)) {
		c.calls.Add(1)
	}
	if bytes.Contains(body, []byte(`"tools/list"`)) {
		tool := map[string]any{}
		for k, v := range echoTool {
			tool[k] = v
		}
		tool["annotations"] = c.annotations
		var m struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(body, &m)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"tools": []any{tool}}})
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.planted.ServeHTTP(w, r)
}

func TestUsage(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no server given"},
		{[]string{"--revision", "1999-01-01", "http://127.0.0.1:1/mcp"}, "unknown revision"},
		{[]string{"--output", "xml", "http://127.0.0.1:1/mcp"}, "--output"},
		{[]string{"--header", "nocolon", "http://127.0.0.1:1/mcp"}, "NAME: VALUE"},
		{[]string{"--timeout", "0s", "http://127.0.0.1:1/mcp"}, "must be positive"},
		{[]string{"--revision", "2025-11-25", "--timeout", "1s", "http://127.0.0.1:1/mcp"}, "no revision could be checked"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		if code := check.Command(tt.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, errb.String(), tt.want)
		}
	}
}

// --output html is validate's page over the check's recording, each
// session with findings a timeline; --record keeps the recording, the
// probes' session in it too.
func TestHTMLAndRecording(t *testing.T) {
	srv := httptest.NewServer(&planted{defect: "wrong error code"})
	defer srv.Close()
	rec := filepath.Join(t.TempDir(), "check.jsonl")
	var out, errb bytes.Buffer
	code := check.Command([]string{"--revision", "2025-11-25", "--output", "html", "--record", rec, "--rate", "0", "--fail-on", "warning", srv.URL}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, errb.String())
	}
	for _, want := range []string{"<html", "check-error-code", "check 2025-11-25"} { // a session with findings has its timeline
		if !strings.Contains(out.String(), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"session":"check 2025-11-25"`, `"session":"probe 2025-11-25"`, `"method":"tools/call"`, `"mcpstack/check-unknown"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("the recording lacks %s", want)
		}
	}
}

// A check that --max-time cuts short is not a clean one: nothing found in
// part of it exits 2, saying so, and the probes the time left unsent, or
// cut, are not blamed on the server.
func TestCutShortByMaxTime(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&m)
		switch {
		case m.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Mcp-Session-Id", "slow")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"slow","version":"1"}}}`, m.ID)
		case m.Method == "tools/list", m.Method == "ping":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[]}}`, m.ID)
		case r.Method == http.MethodPost && len(m.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case r.Method == http.MethodDelete:
		default:
			<-r.Context().Done() // the probes, and the GET stream, wait
		}
	})
	rules, code, stderr := findings(t, h, "--max-time", "1500ms", "--timeout", "10s")
	if code != 2 || !strings.Contains(stderr, "did not finish within --max-time") {
		t.Errorf("exit %d, rules %v, stderr:\n%s", code, rules, stderr)
	}
	if len(rules) > 0 {
		t.Errorf("the check blamed the server for its own time: %v", rules)
	}
}
