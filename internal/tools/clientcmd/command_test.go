package clientcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
	"github.com/mcpstack/mcpstack/server"
)

func ours(t *testing.T) string {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0), mcphttp.WithTransport(websocket.Transport()))
	hs := httptest.NewServer(h)
	t.Cleanup(func() { shutdown(context.Background()); hs.Close(); srv.Close() })
	return hs.URL
}

// broken negotiates, then answers tools/list with body (%ID%: the
// request's id).
func broken(t *testing.T, body string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(b, &msg)
		switch {
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}`, msg.ID)
		case msg.Method == "tools/list":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, strings.ReplaceAll(body, "%ID%", string(msg.ID)))
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// taskServer serves a tool that runs as a task, and one that does not.
func taskServer(t *testing.T) string {
	t.Helper()
	a := app.New("tasks", "1")
	app.AddTool(a, app.Tool{Name: "later", TaskSupport: "optional"}, func(context.Context, struct{}) (string, error) { return "done later", nil })
	app.AddTool(a, app.Tool{Name: "now"}, func(context.Context, struct{}) (string, error) { return "now", nil })
	srv := app.NewServer(a)
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	t.Cleanup(func() { shutdown(context.Background()); hs.Close(); srv.Close() })
	return hs.URL + "/mcp"
}

func TestCommand(t *testing.T) {
	base := ours(t)
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // a substring
		stderrHave string
	}{
		{"list tools", []string{base + "/mcp"}, exitOK, `"name": "test_simple_text"`, ""},
		{"call a tool", []string{base + "/mcp", "--method", "tools/call", "--tool", "test_simple_text"}, exitOK, "This is a simple text response", ""},
		{"stateless revision", []string{base + "/mcp", "--proto", "2026-07-28", "--method", "tools/call", "--tool", "test_simple_text"}, exitOK, "simple text", ""},
		{"a resource over HTTP+SSE", []string{base + "/sse", "--transport", "sse", "--method", "resources/read", "--uri", "test://static-text"}, exitOK, "static text resource", ""},
		{"a prompt over WebSocket", []string{"ws" + strings.TrimPrefix(base, "http") + "/mcp/ws", "--method", "prompts/get", "--prompt", "test_prompt_with_arguments", "--arg", "arg1=x", "--arg", "arg2=y"}, exitOK, "arg1='x'", ""},
		{"generic params", []string{base + "/mcp", "--method", "completion/complete", "--args", `{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"pa"}}`}, exitOK, `"paris"`, ""},
		{"a tool error", []string{base + "/mcp", "--method", "tools/call", "--tool", "test_error_handling"}, exitToolError, `"isError": true`, "reported an error"},
		{"a JSON-RPC error", []string{base + "/mcp", "--method", "tools/call", "--tool", "nope"}, exitRPCError, "", "-32602"},
		{"a tool without inputSchema", []string{broken(t, `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":"t"}]}}`)}, exitViolation, "", "violation [schema] tools/list at /result/tools/0"},
		{"the wrong id", []string{broken(t, `{"jsonrpc":"2.0","id":999,"result":{"tools":[]}}`), "--timeout", "1s"}, exitViolation, "", "violation [unknown-id]"},
		{"not JSON", []string{broken(t, `{"jsonrpc":"2.0","id":%ID%,"result":`)}, exitViolation, "", "violation [json]"},
		{"a call as a task", []string{taskServer(t), "--method", "tools/call", "--tool", "later", "--task"}, exitOK, "done later", "task task_"},
		{"--task for a tool without tasks", []string{taskServer(t), "--method", "tools/call", "--tool", "now", "--task"}, exitRPCError, "", "-32601"},
		{"tools/call without --tool", []string{base + "/mcp", "--method", "tools/call"}, exitUsage, "", "needs --tool"},
		{"no URL", []string{"--method", "tools/list"}, exitUsage, "", "give the server's URL"},
		{"a bad header", []string{base + "/mcp", "--header", "nocolon"}, exitUsage, "", "not K: V"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Command(tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderrHave) {
				t.Errorf("exit %d (want %d)\nstdout: %.400s\nstderr: %.400s", code, tc.code, stdout.String(), stderr.String())
			}
		})
	}
}

// What a server names is printed on one line whatever it holds: a method
// name with a line break in it would otherwise write lines of its own into
// a CI log (a GitHub Actions "::error::" annotation, say).
func TestViolationsStayOnTheirLine(t *testing.T) {
	url := broken(t, `[{"jsonrpc":"2.0","method":"x\n::error file=a,line=1::forged"},{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[]}}]`)
	var stdout, stderr bytes.Buffer
	code := Command([]string{url}, &stdout, &stderr)
	if code != exitViolation || !strings.Contains(stderr.String(), "violation [unknown-method]") {
		t.Fatalf("exit %d (want %d)\nstderr: %.400s", code, exitViolation, stderr.String())
	}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if strings.HasPrefix(line, "::") {
			t.Errorf("the server wrote a line of its own: %q", line)
		}
	}
}
