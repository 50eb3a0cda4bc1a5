// Package sharedtest finds the shared reference folder (official MCP schemas,
// examples, notes) that sits next to the repository as ../shared. Tests that
// need it call Dir, which skips the test when the folder is absent so that a
// fresh clone still passes "go test ./...".
package sharedtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Env names the environment variable that overrides the shared folder's path.
const Env = "MCPSTACK_SHARED"

// Dir returns the absolute path of the shared folder: $MCPSTACK_SHARED when
// set, otherwise <repo root>/../shared, where the repo root is the nearest
// directory at or above the working directory that holds go.mod. It calls
// t.Skip when the folder cannot be found, t.Fatal under CI (CI set).
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Find()
	if err != nil {
		if os.Getenv("CI") != "" { // CI lays it beside the clone: a skip would hide the checks against the official schemas
			t.Fatal("CI: ../shared not found: " + err.Error())
		}
		t.Skip("../shared not found: " + err.Error())
	}
	return dir
}

// Path is Dir joined with elem. It skips the test, naming the missing file,
// when the shared folder exists but lacks that file.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		t.Skip("../shared lacks " + filepath.Join(elem...) + ": " + err.Error())
	}
	return p
}

// Find returns the shared folder's absolute path, or an error that says where
// it looked.
func Find() (string, error) {
	if dir := os.Getenv(Env); dir != "" {
		return checkDir(dir, "$"+Env)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	root, err := repoRoot(wd)
	if err != nil {
		return "", err
	}
	return checkDir(filepath.Join(root, "..", "shared"), "<repo root>/../shared")
}

func checkDir(dir, what string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%s = %s: %w (set %s to point elsewhere)", what, abs, err, Env)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s = %s is not a directory", what, abs)
	}
	return abs, nil
}

// repoRoot walks up from dir to the first directory holding go.mod.
func repoRoot(dir string) (string, error) {
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", errors.New("no go.mod at or above " + dir)
		}
		d = parent
	}
}
