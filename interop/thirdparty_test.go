package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Implementations no one here wrote, through `mcpstack proxy`, driven by
// the official TypeScript SDK client and the official conformance suite:
// the recording must validate with no finding (a finding is a false
// positive of ours, or a violation of theirs to be named in the note and
// kept in the expected list below), and the proxy must not get in the way
// (the suite passes through it as it does without it).

// everythingJS is @modelcontextprotocol/server-everything as
// scripts/conformance.sh install puts it beside the TypeScript SDK.
func everythingJS(t *testing.T, dir string) string {
	t.Helper()
	js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(js); err != nil {
		missingTool(t, "@modelcontextprotocol/server-everything is not in .tools/conformance/stable (make tools): %v", err)
	}
	return js
}

// driveEverything runs testdata/ts-everything.mjs with args and returns
// what it reports.
func driveEverything(t *testing.T, node, dir string, args ...string) map[string]any {
	t.Helper()
	return runTSScript(t, node, dir, "ts-everything.mjs", args...)
}

// violation is a finding on third-party traffic that is a real violation
// of theirs, not a false positive of ours: the rule, and words of its
// reason.
type violation struct{ rule, says string }

// validateRecording runs mcpstack validate --output json on a recording:
// every finding must be one of the known violations, and each of those
// must still occur (a fixed peer, or a rule gone blind, shows). It returns
// the summary.
func validateRecording(t *testing.T, path string, minMessages int, known ...violation) string {
	t.Helper()
	out, err := exec.Command(mcpstackBin, "validate", "--output", "json", path).Output()
	if err != nil && len(known) == 0 {
		t.Errorf("mcpstack validate %s: %v", filepath.Base(path), err)
	}
	var rep struct {
		Findings []struct {
			Line         int
			Rule, Reason string
			Side         string
		}
		Summary struct{ Messages int }
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("mcpstack validate --output json: %v\n%s", err, out)
	}
	seen := make([]int, len(known))
	for _, f := range rep.Findings {
		i := slices.IndexFunc(known, func(v violation) bool { return v.rule == f.Rule && strings.Contains(f.Reason, v.says) })
		if i < 0 {
			t.Errorf("%s:%d: %s (%s): %s", filepath.Base(path), f.Line, f.Rule, f.Side, f.Reason)
			continue
		}
		seen[i]++
	}
	for i, v := range known {
		if seen[i] == 0 {
			t.Errorf("the known violation %s %q no longer occurs: update the list (and the note)", v.rule, v.says)
		}
	}
	if rep.Summary.Messages < minMessages {
		t.Fatalf("the recording holds %d messages, too few for the traffic driven (want at least %d)", rep.Summary.Messages, minMessages)
	}
	return fmt.Sprintf("%s: %d messages, %d findings, each a known violation", filepath.Base(path), rep.Summary.Messages, len(rep.Findings))
}

// calls is the driver's report of the tools it called.
func calls(t *testing.T, out map[string]any, want ...string) {
	t.Helper()
	got, _ := out["calls"].(map[string]any)
	for _, name := range want {
		if got[name] == nil {
			t.Errorf("tool %s was not called (listed: %v)", name, out["tools"])
		}
	}
}

// server-everything over stdio, with the proxy as its command (as a
// client's config would have it), checking live with --fail-on warning.
func TestServerEverythingStdioThroughProxy(t *testing.T) {
	node, dir := tsNode(t)
	js := everythingJS(t, dir)
	rec := filepath.Join(t.TempDir(), "everything-stdio.jsonl")
	out := driveEverything(t, node, dir, "stdio", mcpstackBin, "proxy", "--record", rec, "--check", "--fail-on", "warning", "--", node, js, "stdio")
	calls(t, out, "echo", "get-tiny-image", "get-resource-links", "get-resource-reference", "trigger-long-running-operation",
		"trigger-sampling-request", "trigger-elicitation-request", "get-roots-list")
	if task, _ := out["task"].([]any); len(task) < 2 || task[0] != "taskCreated" || task[len(task)-1] != "result" {
		t.Errorf("the task-augmented call went %v, want taskCreated ... result", out["task"])
	}
	if out["progress"].(float64) < 1 || out["logs"].(float64) < 1 {
		t.Errorf("no progress (%v) or log (%v) notification reached the client", out["progress"], out["logs"])
	}
	t.Log(validateRecording(t, rec, 100))
}

// server-everything over Streamable HTTP, behind the HTTP proxy.
func TestServerEverythingHTTPThroughProxy(t *testing.T) {
	node, dir := tsNode(t)
	addr := startEverythingHTTP(t, node, everythingJS(t, dir))
	rec := filepath.Join(t.TempDir(), "everything-http.jsonl")
	front, stop := startProxyHTTP(t, "http://"+addr+"/mcp", rec)
	out := driveEverything(t, node, dir, "http", front+"/mcp")
	calls(t, out, "echo", "trigger-sampling-request", "trigger-elicitation-request", "get-roots-list")
	// The suite's scenarios expect its own fixture server's tools, which
	// server-everything lacks: what counts here is that their traffic
	// validates, not that they pass.
	if !testing.Short() {
		total, _, _ := runSuite(t, node, dir, front+"/mcp")
		t.Logf("conformance suite against server-everything: %s", total)
	}
	stop()
	known := []violation{}
	if !testing.Short() {
		known = append(known, staleVersionHeader)
	}
	t.Log(validateRecording(t, rec, 80, known...))
}

// startEverythingHTTP starts server-everything over Streamable HTTP on a
// free port and returns its address; it stops with the test.
func startEverythingHTTP(t *testing.T, node, js string) (addr string) {
	t.Helper()
	addr = freeAddr(t)
	_, port, _ := strings.Cut(addr, ":")
	srv := exec.Command(node, js, "streamableHttp")
	srv.Env = append(os.Environ(), "PORT="+port)
	startUntilListening(t, srv, addr)
	return addr
}

// staleVersionHeader is the conformance suite's server-sse-multiple-streams
// scenario: it POSTs with MCP-Protocol-Version 2025-03-26 in a session
// that negotiated 2025-11-25, where the client MUST send the negotiated
// revision (2025-11-25 basic/transports, "Protocol Version Header").
var staleVersionHeader = violation{"http-headers", `MCP-Protocol-Version header is "2025-03-26"; the session negotiated 2025-11-25`}

// runSuite runs the conformance suite's active server scenarios against
// url and returns its "Total: N passed, M failed" line, whether none
// failed, and the end of its output.
func runSuite(t *testing.T, node, dir, url string) (total string, passed bool, out string) {
	t.Helper()
	suite := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(suite); err != nil {
		missingTool(t, "the conformance suite is not in .tools/conformance/stable (make tools): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, node, suite, "server", "--url", url, "--suite", "active", "-o", t.TempDir())
	run.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, _ := run.CombinedOutput()
	m := regexp.MustCompile(`Total: (\d+) passed, (\d+) failed`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("the conformance suite gave no total:\n%s", tail(b, 40))
	}
	return string(m[0]), string(m[2]) == "0", tail(b, 40)
}

// The go-sdk's conformance everything-server over Streamable HTTP (with
// sessions), behind the HTTP proxy, driven by the conformance suite's
// active scenarios and by the TypeScript SDK client.
func TestGoSDKEverythingHTTPThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the go-sdk everything-server and runs the conformance suite")
	}
	node, dir := tsNode(t)
	rec := filepath.Join(t.TempDir(), "gosdk-http.jsonl")
	front, stop := goSDKBehindProxy(t, false, rec)
	// The server passes the suite without the proxy: so it must with it.
	if total, passed, out := runSuite(t, node, dir, front+"/mcp"); !passed {
		t.Errorf("the conformance suite through the proxy: %s\n%s", total, out)
	} else {
		t.Logf("conformance through the proxy: %s", total)
	}
	out := driveEverything(t, node, dir, "http", front+"/mcp")
	calls(t, out, "test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_tool_with_progress", "test_sampling", "test_elicitation")
	stop()
	t.Log(validateRecording(t, rec, 150, staleVersionHeader))
}

// The go-sdk's everything-server without sessions (its stateless mode, as
// the SDKs offer it): every client of the recording is under no session,
// and the validator tells them apart by their initialize.
func TestGoSDKEverythingStatelessThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the go-sdk everything-server and runs the conformance suite")
	}
	node, dir := tsNode(t)
	rec := filepath.Join(t.TempDir(), "gosdk-stateless.jsonl")
	front, stop := goSDKBehindProxy(t, true, rec)
	// Without sessions some scenarios cannot pass (a server request needs
	// a stream to the client): what counts is that the traffic validates.
	total, _, _ := runSuite(t, node, dir, front+"/mcp")
	t.Logf("conformance suite against the stateless server: %s", total)
	driveEverything(t, node, dir, "http", front+"/mcp")
	stop()
	t.Log(validateRecording(t, rec, 150))
}

// goSDKBehindProxy builds and starts the go-sdk's everything-server
// (with sessions or without) and the HTTP proxy in front of it, recording
// to rec; it returns the proxy's URL and its stop.
func goSDKBehindProxy(t *testing.T, stateless bool, rec string) (front string, stop func()) {
	t.Helper()
	bin := filepath.Join(buildDir, "gosdk-everything-server")
	if b, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("go build the go-sdk everything-server: %v\n%s", err, b)
	}
	addr := freeAddr(t)
	startUntilListening(t, exec.Command(bin, fmt.Sprintf("-stateless=%v", stateless), "-http", addr), addr)
	return startProxyHTTP(t, "http://"+addr+"/mcp", rec)
}

// startUntilListening starts cmd and waits until addr accepts; the test's
// end stops it.
func startUntilListening(t *testing.T, cmd *exec.Cmd, addr string) {
	t.Helper()
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if !waitListening(addr, 20*time.Second) {
		t.Fatalf("%s did not listen on %s:\n%s", filepath.Base(cmd.Path), addr, stderr)
	}
}

// startProxyHTTP runs `mcpstack proxy` in front of upstream, recording
// to rec, and returns its base URL and a stop that interrupts it (the
// recording is then complete) and fails the test unless it exits 0. The
// test's end stops it too.
func startProxyHTTP(t *testing.T, upstream, rec string) (base string, stop func()) {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	stderr := &lockedBuffer{}
	cmd := exec.Command(mcpstackBin, "proxy", "--upstream", upstream, "--http", "127.0.0.1:0", "--addr-file", addrFile, "--record", rec)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop = sync.OnceFunc(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("mcpstack proxy: %v\n%s", err, stderr)
			}
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("mcpstack proxy did not stop on an interrupt:\n%s", stderr)
		}
	})
	t.Cleanup(stop)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			return "http://" + strings.TrimSpace(string(b)), stop
		}
	}
	t.Fatalf("mcpstack proxy did not start:\n%s", stderr)
	return "", stop
}

// waitListening reports whether addr accepts a connection within d.
func waitListening(addr string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return true
		}
	}
	return false
}

// tail is the last n lines of b.
func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
