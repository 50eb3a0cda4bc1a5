package store_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store/storetest"
)

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Opener {
		dir := filepath.Join(t.TempDir(), "data")
		return func() (store.Store, error) {
			return store.Open(context.Background(), store.Config{DataDir: dir, Now: now})
		}
	})
}

// The database is one private file in WAL mode under the data directory.
func TestSQLiteFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	s, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Create(context.Background(), "local", store.NewID(), "x", store.Message{Role: store.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, store.SQLiteFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", store.SQLiteFile, st.Mode().Perm())
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("data dir: %v, %v; want mode 0700", st, err)
	}
	if _, err := os.Stat(filepath.Join(dir, store.SQLiteFile+"-wal")); err != nil {
		t.Errorf("no WAL file: %v", err)
	}
}

// A database written by a newer build is refused, not misread.
func TestSQLiteNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chat.db")
	s, err := store.OpenSQLite(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Bump the recorded version behind the store's back.
	s2, err := store.OpenSQLite(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.ExecForTest(s2, `INSERT INTO schema_migrations (version, applied_ms) VALUES (99, 0)`); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := store.OpenSQLite(context.Background(), path, nil); err == nil {
		t.Fatal("opened a database at schema version 99")
	}
}

func TestSQLiteBadPath(t *testing.T) {
	for _, p := range []string{"", "/tmp/x?mode=ro", filepath.Join(t.TempDir(), "missing", "dir", "chat.db")} {
		if s, err := store.OpenSQLite(context.Background(), p, nil); err == nil {
			s.Close()
			t.Errorf("OpenSQLite(%q) succeeded", p)
		}
	}
}
