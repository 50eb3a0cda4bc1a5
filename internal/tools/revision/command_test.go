package revision

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// schemaDir is a schema directory with two small revisions.
func schemaDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, body := range map[string]string{
		"2025-01-01/shared/Thing.json": `{"description": "a thing of 2025-01-01"}`,
		"2026-01-01/shared/Thing.json": `{"description": "a thing of 2026-01-01"}`,
		"2026-01-01/differences.json":  `[]`,
	} {
		p = filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRevisionNew(t *testing.T) {
	t.Run("copies the newest", func(t *testing.T) {
		dir := schemaDir(t)
		var out, errOut bytes.Buffer
		if code := Command([]string{"new", "2027-01-01", "--schemas", dir}, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		b, err := os.ReadFile(filepath.Join(dir, "2027-01-01", "shared", "Thing.json"))
		if err != nil || !strings.Contains(string(b), "a thing of 2027-01-01") {
			t.Errorf("the copy: %q, %v; want the newest revision's file, its mentions updated", b, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "2027-01-01", "differences.json")); err == nil {
			t.Error("differences.json was copied: the new revision's differences from its official schema are its own")
		}
		if !strings.Contains(out.String(), "as a copy of 2026-01-01") || !strings.Contains(out.String(), "go run . schemadiff --from 2026-01-01 --to 2027-01-01") {
			t.Errorf("next steps:\n%s", out.String())
		}
		assertNoLeftovers(t, dir)
	})
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(dir string)
		code  int
		says  string
	}{
		{"a file in its place", []string{"new", "2027-01-01"}, func(dir string) {
			_ = os.WriteFile(filepath.Join(dir, "2027-01-01"), []byte("keep me"), 0o644)
		}, 1, "exists already"},
		{"an existing revision", []string{"new", "2026-01-01"}, nil, 1, "exists already"},
		{"older than the newest", []string{"new", "2025-06-01"}, nil, 1, "older than 2026-01-01"},
		{"not a date", []string{"new", "next"}, nil, 1, "not a revision name"},
		{"two at once", []string{"new", "2027-01-01", "2028-01-01"}, nil, 2, "one revision at a time"},
		{"no such directory", []string{"new", "2027-01-01", "--schemas", "/nonexistent/schema"}, nil, 1, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := schemaDir(t)
			if tc.setup != nil {
				tc.setup(dir)
			}
			args := tc.args
			if !strings.Contains(strings.Join(args, " "), "--schemas") {
				args = append(args, "--schemas", dir)
			}
			var out, errOut bytes.Buffer
			code := Command(args, &out, &errOut)
			if code != tc.code || !strings.Contains(errOut.String(), tc.says) {
				t.Errorf("exit %d, %q; want %d and %q", code, errOut.String(), tc.code, tc.says)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "2027-01-01")); err == nil && string(b) != "keep me" {
				t.Errorf("the file in the way was changed: %q", b)
			}
			assertNoLeftovers(t, dir)
		})
	}
}

// assertNoLeftovers: no half-made copy stays beside the revisions.
func assertNoLeftovers(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
