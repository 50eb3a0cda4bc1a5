package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// With OTEL_TRACES_EXPORTER=console, `mcpstack serve` prints the span of
// a tools/call whose _meta carries a traceparent as a child of that
// trace. The server runs in a child process (this test binary), since the
// console exporter writes to the process's stdout.
func TestServeConsoleTraces(t *testing.T) {
	if os.Getenv("MCPSTACK_TRACE_CHILD") != "" {
		os.Exit(run(append([]string{"serve"}, strings.Fields(os.Getenv("MCPSTACK_TRACE_CHILD"))...), os.Stdout, os.Stderr))
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestServeConsoleTraces$")
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=console", "OTEL_SERVICE_NAME=mcpstack-test",
		"MCPSTACK_TRACE_CHILD=--profile conformance --http 127.0.0.1:0 --access-log=false --addr-file "+addrFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var addr string
	for deadline := time.Now().Add(20 * time.Second); addr == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			addr = strings.TrimSpace(string(b))
		}
	}
	if addr == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("the server did not start: %s", stderr.String())
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}`
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", strings.NewReader(body))
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "greet"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_ = cmd.Process.Signal(os.Interrupt) // shutting down flushes the spans
	_ = cmd.Wait()
	type span struct {
		Name        string
		SpanContext struct{ TraceID string }
		Parent      struct {
			TraceID, SpanID string
			Remote          bool
		}
	}
	dec := json.NewDecoder(bufio.NewReader(&stdout))
	var found bool
	for {
		var s span
		if err := dec.Decode(&s); err != nil {
			break
		}
		if s.Name == "tools/call greet" {
			found = true
			if s.SpanContext.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || s.Parent.SpanID != "00f067aa0ba902b7" || !s.Parent.Remote {
				t.Errorf("span %+v, want a child of the traceparent", s)
			}
		}
	}
	if !found {
		t.Errorf("no tools/call span on stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
}
