package interop_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/interop"
)

// mcpstack check against servers of ours and of others. A finding on a
// server of ours fails the test; on another's, each finding must be one
// of the real violations listed with it (named in the note, with the
// specification's words in its reason), and each listed one must still
// occur: a new finding is a false positive of check's until shown to be
// theirs, and a listed one that is gone means they fixed it or check went
// blind.

// checkFinding is a finding of `mcpstack check --output json`.
type checkFinding struct {
	Rule, Reason, Severity, Session string
}

// runCheck runs mcpstack check --output json with args (the server last)
// and returns its findings and exit code.
func runCheck(t *testing.T, args ...string) ([]checkFinding, int) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command(mcpstackBin, append([]string{"check", "--output", "json", "--rate", "0", "--timeout", "5s"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rep struct{ Findings []checkFinding }
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("mcpstack check %v: exit %d, not JSON (%v):\n%s\n%s", args, code, err, stdout.String(), stderr.String())
	}
	t.Logf("mcpstack check %s: exit %d, %d findings, %v", strings.Join(args, " "), code, len(rep.Findings), time.Since(start).Round(10*time.Millisecond))
	if code == 2 {
		t.Fatalf("mcpstack check could not run:\n%s", stderr.String())
	}
	return rep.Findings, code
}

// expectFindings holds findings to the known violations: each finding is
// one of them (rule and words of its reason) and each of them occurs.
func expectFindings(t *testing.T, got []checkFinding, known ...violation) {
	t.Helper()
	seen := make([]int, len(known))
	for _, f := range got {
		i := slices.IndexFunc(known, func(v violation) bool { return v.rule == f.Rule && strings.Contains(f.Reason, v.says) })
		if i < 0 {
			t.Errorf("unexpected finding: %s %s (%s): %s", f.Severity, f.Rule, f.Session, f.Reason)
			continue
		}
		seen[i]++
	}
	for i, v := range known {
		if seen[i] == 0 {
			t.Errorf("known violation no longer found: %s %q", v.rule, v.says)
		}
	}
}

// TestCheckOurServers: every profile of ours, every revision, over stdio
// and Streamable HTTP, finds nothing; the conformance fixtures, written
// for 2025-11-25, find what they do wrong in older revisions unless
// --strict stops it at the server.
func TestCheckOurServers(t *testing.T) {
	t.Parallel()
	hello := buildExample(t, "hello")
	t.Run("chat stdio", func(t *testing.T) {
		t.Parallel()
		got, code := runCheck(t, "--call-all", "--", mcpstackBin, "serve", "--stdio", "--profile", "chat", "--data-dir", t.TempDir())
		expectFindings(t, got)
		if code != 0 {
			t.Errorf("exit %d, want 0", code)
		}
	})
	t.Run("hello stdio", func(t *testing.T) {
		t.Parallel()
		got, _ := runCheck(t, "--call-all", "--", hello)
		expectFindings(t, got)
	})
	t.Run("bench http", func(t *testing.T) {
		t.Parallel()
		url := startServe(t, "--profile", "bench")
		got, _ := runCheck(t, "--call-all", url)
		expectFindings(t, got)
	})
	t.Run("conformance http strict", func(t *testing.T) {
		t.Parallel()
		url := startServe(t, "--profile", "conformance", "--strict")
		got, _ := runCheck(t, "--call-all", url)
		expectFindings(t, got)
	})
	t.Run("conformance http", func(t *testing.T) {
		t.Parallel()
		url := startServe(t, "--profile", "conformance")
		got, code := runCheck(t, "--call-all", "--revision", "2024-11-05,2025-06-18,2025-11-25", url)
		expectFindings(t, got,
			// 2024-11-05 has no audio content; the fixture sends it to every revision.
			violation{"result-schema", `"audio" is not one of the "type" values allowed here`},
			// 2024-11-05 requires a resource's uri to be a URI; the fixture embeds the argument it is given.
			violation{"result-schema", `'example' is not valid uri`},
			// 2025-06-18 has no multi-select enum in elicitation schemas.
			violation{"schema", "(elicitation/create request: ElicitRequest, 2025-06-18)"},
		)
		if code != 1 {
			t.Errorf("exit %d, want 1", code)
		}
	})
}

// startServe starts `mcpstack serve` over HTTP with args and returns its
// MCP endpoint; it stops with the test.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	cmd := exec.Command(mcpstackBin, append([]string{"serve", "--http", "127.0.0.1:0", "--addr-file", addrFile, "--data-dir", t.TempDir()}, args...)...)
	return startPeer(t, cmd, addrFile)
}

// mcpgoEcho builds the benchmark's mcp-go server (its own module, beside
// go-sdk's), once.
var mcpgoEcho = sync.OnceValues(func() (string, error) {
	bin := filepath.Join(buildDir, "mcpgo-echo")
	build := exec.Command("go", "build", "-o", bin, "./mcpgo-echo")
	build.Dir = filepath.Join("..", "internal", "tools", "bench", "peers")
	if out, err := build.CombinedOutput(); err != nil {
		return "", errors.New(string(out))
	}
	return bin, nil
})

// TestCheckOthers: servers no one here wrote.
func TestCheckOthers(t *testing.T) {
	t.Parallel()
	t.Run("go-sdk everything-server stdio", func(t *testing.T) {
		t.Parallel()
		bin, err := interop.EverythingServer()
		if err != nil {
			t.Fatal(err)
		}
		got, _ := runCheck(t, "--", bin)
		expectFindings(t, got, goSDKEverything...)
	})
	t.Run("mcp-go http", func(t *testing.T) {
		t.Parallel()
		bin, err := mcpgoEcho()
		if err != nil {
			t.Fatal(err)
		}
		addrFile := filepath.Join(t.TempDir(), "addr")
		cmd := exec.Command(bin, "--http", "127.0.0.1:0", "--addr-file", addrFile)
		url := startPeer(t, cmd, addrFile)
		got, _ := runCheck(t, "--call-all", url)
		expectFindings(t, got, mcpgoBatch)
	})
	t.Run("server-everything stdio", func(t *testing.T) {
		t.Parallel()
		node, dir := tsNode(t)
		js := everythingJS(t, dir)
		got, _ := runCheck(t, "--revision", "2025-03-26,2025-11-25", "--skip", "trigger-long-running-operation", "--", node, js, "stdio")
		expectFindings(t, got, append(tsStdio, tsResourceLink, tsNoBatch)...)
	})
	t.Run("server-everything http", func(t *testing.T) {
		t.Parallel()
		node, dir := tsNode(t)
		addr := startEverythingHTTP(t, node, everythingJS(t, dir))
		got, _ := runCheck(t, "--revision", "2025-11-25", "--skip", "trigger-long-running-operation", "http://"+addr+"/mcp")
		expectFindings(t, got, tsUnknownSession, tsAfterDelete)
	})
	t.Run("server-filesystem stdio", func(t *testing.T) {
		t.Parallel()
		node, dir := tsNode(t)
		js := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
		if _, err := os.Stat(js); err != nil {
			missingTool(t, "@modelcontextprotocol/server-filesystem is not in .tools/conformance/stable (make tools): %v", err)
		}
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("hello\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		got, _ := runCheck(t, "--revision", "2025-11-25", "--", node, js, root)
		expectFindings(t, got, tsStdio...)
		entries, _ := os.ReadDir(root)
		if len(entries) != 1 {
			t.Errorf("the folder holds %d entries after the check, want 1: only read-only tools are called", len(entries))
		}
	})
}

// startPeer starts a server that writes its address to addrFile (serve,
// the benchmark peers) and returns its MCP endpoint; it stops with the
// test.
func startPeer(t *testing.T, cmd *exec.Cmd, addrFile string) string {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			addr := strings.TrimSpace(string(b))
			if !strings.HasPrefix(addr, "http") {
				addr = "http://" + addr + "/mcp"
			}
			return addr
		}
	}
	t.Fatalf("%s did not listen in 10s", filepath.Base(cmd.Path))
	return ""
}

// The real violations check finds on others' servers.
var (
	// go-sdk's everything-server (v1.8.0) over stdio: a message whose
	// method is not a string ends the process, malformed JSON gets no
	// answer; some prompt results carry "messages": null; the resource
	// prompt embeds its argument as a URI, unchecked.
	goSDKEverything = []violation{
		{"check-protocol", "invalid request: the server exited"},
		{"check-protocol", "malformed JSON: no answer"},
		{"result-schema", "got null, want array"},
		{"result-schema", "'example' is not valid uri"},
	}
	// mcp-go refuses a batch in 2025-03-26, which has them.
	mcpgoBatch = violation{"check-protocol", "batch: refused with HTTP 400"}
	// The TypeScript SDK's servers send resource_link content to a
	// 2025-03-26 session, which has none, and over stdio answer neither a
	// batch there, nor malformed JSON, nor a request whose method is not a
	// string; over HTTP an ended or unknown session gets 400, not 404.
	tsResourceLink   = violation{"result-schema", `"resource_link" is not one of the "type" values allowed here`}
	tsNoBatch        = violation{"check-protocol", "batch: answered 0 messages, want 2 responses"}
	tsUnknownSession = violation{"check-protocol", "unknown Mcp-Session-Id: HTTP 400, want 404"}
	tsAfterDelete    = violation{"check-protocol", "request after DELETE: HTTP 400, want 404"}
)

// tsStdio is what the TypeScript SDK's stdio transport leaves unanswered
// (warnings: JSON-RPC answers them, MCP says nothing more).
var tsStdio = []violation{
	{"check-protocol", "malformed JSON: no answer"},
	{"check-protocol", "invalid request: no answer"},
	{"check-protocol", "batch where the revision has none: no answer"},
}
