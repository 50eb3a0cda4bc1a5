// Package addrfile writes the address a server bound (--addr-file), so
// that a script or a test that started it with port 0 can find it.
package addrfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write puts addr and a newline in path, whole or not at all: it writes a
// temporary file beside it and renames it, so that a reader polling for
// the file never sees half an address.
func Write(path, addr string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("addr file: %w", err)
	}
	_, werr := f.WriteString(addr + "\n")
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o600)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("addr file %s: %w", path, werr)
	}
	return nil
}
