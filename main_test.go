package main

import (
	"bytes"
	"regexp"
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
		{[]string{"help", "nope"}, 2, "", `unknown command "nope"`},
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

// Every subcommand's help, asked for as --help, -h or mcpstack help NAME:
// one usage on stdout, nothing on stderr, exit 0; a "Flags:" heading has
// flags under it, and every flag says what it does. An unknown flag: the
// error and one usage on stderr, exit 2.
func TestEverySubcommandsHelp(t *testing.T) {
	for name := range commands() {
		t.Run(name, func(t *testing.T) {
			var want string
			for _, args := range [][]string{{name, "--help"}, {name, "-h"}, {"help", name}} {
				var out, errb bytes.Buffer
				code := run(args, &out, &errb)
				help := out.String()
				if code != 0 || errb.Len() != 0 {
					t.Errorf("%q: exit %d, stderr %q; want 0 and nothing", args, code, errb.String())
				}
				if head, _, _ := strings.Cut(help, "\n\n"); !strings.HasPrefix(help, "Usage:") || !strings.Contains(head, "mcpstack "+name) || strings.Count(help, "Usage:") != 1 {
					t.Errorf("%q: want one usage, starting with Usage: mcpstack %s; got\n%s", args, name, help)
				}
				if want == "" {
					want = help
				} else if help != want {
					t.Errorf("%q prints another help than %s --help", args, name)
				}
				if i := strings.Index(help, "\nFlags:\n"); i >= 0 && !strings.Contains(help[i:], "\n  -") {
					t.Errorf("%q: a Flags: heading with no flags under it", args)
				}
				lines := strings.Split(help, "\n")
				for i, l := range lines {
					if !flagLine.MatchString(l) {
						continue
					}
					if i+1 == len(lines) || !strings.HasPrefix(lines[i+1], "    \t") || len(strings.TrimSpace(lines[i+1])) < 10 {
						t.Errorf("%q: flag %q is not documented", args, strings.TrimSpace(l))
					}
					if f := strings.Fields(l); len(f) > 2 && strings.Join(f[1:], " ") != strings.ToUpper(strings.Join(f[1:], " ")) {
						t.Errorf("%q: flag %q has a placeholder of several words not in capitals (backquotes in its usage?)", args, strings.TrimSpace(l))
					}
				}
			}
			var out, errb bytes.Buffer
			if code := run([]string{name, "--no-such-flag"}, &out, &errb); code != 2 || strings.Count(errb.String(), "Usage:") > 1 || !strings.Contains(errb.String(), "no-such-flag") {
				t.Errorf("%s --no-such-flag: exit %d, stderr %q; want 2, the flag named and at most one usage", name, code, errb.String())
			}
		})
	}
}

// flagLine is a flag's line in flag.PrintDefaults' output.
var flagLine = regexp.MustCompile(`^  -[a-z]`)
