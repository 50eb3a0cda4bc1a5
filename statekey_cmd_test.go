package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStateKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long, older := strings.Repeat("k", 40), strings.Repeat("p", 40)
	keyFile, prevFile, short := write("key", long+"\n"), write("prev", older), write("short", "tiny\n")
	for _, tt := range []struct {
		name           string
		file, prevFile string
		env, prevEnv   string
		key, prev      string // "" for none
		err            string
	}{
		{name: "none: the server draws its own"},
		{name: "a file, its newline trimmed", file: keyFile, key: long},
		{name: "the environment", env: long, key: long},
		{name: "the file before the environment", file: keyFile, env: strings.Repeat("e", 40), key: long},
		{name: "a rotation", file: keyFile, prevFile: prevFile, key: long, prev: older},
		{name: "a rotation in the environment", env: long, prevEnv: older, key: long, prev: older},
		{name: "too short", file: short, err: "at least 32"},
		{name: "a previous key alone", prevFile: prevFile, err: "needs --state-key-file"},
		{name: "a missing file", file: filepath.Join(dir, "nope"), err: "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("MCPSTACK_STATE_KEY", tt.env)
			t.Setenv("MCPSTACK_STATE_KEY_PREVIOUS", tt.prevEnv)
			if tt.env == "" {
				os.Unsetenv("MCPSTACK_STATE_KEY")
			}
			if tt.prevEnv == "" {
				os.Unsetenv("MCPSTACK_STATE_KEY_PREVIOUS")
			}
			key, prev, err := stateKeys(tt.file, tt.prevFile)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(key) != tt.key {
				t.Errorf("key %q, want %q", key, tt.key)
			}
			if got := ""; len(prev) > 0 {
				got = string(prev[0])
				if got != tt.prev {
					t.Errorf("previous %q, want %q", got, tt.prev)
				}
			} else if tt.prev != "" {
				t.Errorf("no previous key, want %q", tt.prev)
			}
		})
	}
}
