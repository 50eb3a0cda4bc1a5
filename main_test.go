package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "Usage: mcpstack COMMAND", ""},
		{[]string{"--help"}, 0, "schemadiff", ""},
		{[]string{"nope"}, 2, "", `unknown command "nope"`},
		{[]string{"version"}, 0, "MCP revisions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25, 2026-07-28", ""},
		{[]string{"schemadiff", "--help"}, 0, "Usage: mcpstack schemadiff", ""},
		{[]string{"schemadiff"}, 2, "", "--official"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := run(tt.args, &out, &errb)
		if code != tt.code {
			t.Errorf("run(%q) = %d, want %d (stderr %q)", tt.args, code, tt.code, errb.String())
		}
		if !strings.Contains(out.String(), tt.stdout) {
			t.Errorf("run(%q) stdout %q lacks %q", tt.args, out.String(), tt.stdout)
		}
		if !strings.Contains(errb.String(), tt.stderr) {
			t.Errorf("run(%q) stderr %q lacks %q", tt.args, errb.String(), tt.stderr)
		}
	}
}
