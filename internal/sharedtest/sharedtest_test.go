package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnvOverride(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(Env, dir)
	got := Dir(t)
	want, _ := filepath.Abs(dir)
	if got != want {
		t.Fatalf("Dir = %q, want %q", got, want)
	}
}

func TestEnvMissing(t *testing.T) {
	t.Setenv(Env, filepath.Join(t.TempDir(), "nope"))
	if _, err := Find(); err == nil {
		t.Fatal("Find succeeded for a missing folder")
	}
}

func TestRepoRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := repoRoot(deep)
	if err != nil || got != root {
		t.Fatalf("repoRoot = %q, %v; want %q", got, err, root)
	}
}

// TestDefault checks the real layout; it skips where ../shared is absent.
func TestDefault(t *testing.T) {
	t.Setenv(Env, "")
	dir := Dir(t)
	if !filepath.IsAbs(dir) {
		t.Fatalf("Dir = %q, not absolute", dir)
	}
}
