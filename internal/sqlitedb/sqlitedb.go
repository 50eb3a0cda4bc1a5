// Package sqlitedb opens SQLite databases the way every store of the
// project uses them: the file private to this user, WAL, a busy timeout,
// write transactions that take the lock when they begin.
package sqlitedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Open opens (creating it, mode 0600, when missing) the database at path,
// in WAL mode, with at most maxConns connections.
func Open(ctx context.Context, path string, maxConns int) (*sql.DB, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("unusable SQLite path %q", path)
	}
	// Create the file first so that it, and the -wal and -shm files that
	// SQLite gives the same mode, are private to this user.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	f.Close()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// Write transactions take the write lock when they begin, so two
	// writers wait for each other instead of failing with SQLITE_BUSY
	// when one upgrades from a read.
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		db.Close()
		return nil, fmt.Errorf("%s: journal mode is %q, not WAL", path, mode)
	}
	return db, nil
}
