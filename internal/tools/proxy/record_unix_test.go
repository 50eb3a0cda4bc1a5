//go:build unix

package proxy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// --record is its owner's only, as serve's recordings are: created 0600
// whatever the umask would let through (here none), and an existing file
// open to others narrowed to 0600.
func TestRecordIsOwnerOnly(t *testing.T) {
	old := syscall.Umask(0) // only the mode the proxy asks for counts
	defer syscall.Umask(old)
	dir := t.TempDir()
	fresh, wide := filepath.Join(dir, "fresh.jsonl"), filepath.Join(dir, "wide.jsonl")
	if err := os.WriteFile(wide, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fresh, wide} {
		var out, errOut bytes.Buffer
		in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
		if code := runWith(t, []string{"--record", path, "--"}, child(t, "echo"), in, &out, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
			t.Errorf("%s: mode %v, %d bytes; want 0600 and the recording", filepath.Base(path), fi.Mode().Perm(), fi.Size())
		}
	}
}
