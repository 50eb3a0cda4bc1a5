package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteMigrations are the schema versions of the SQLite backend.
var sqliteMigrations = [][]string{
	{ // 1: conversations and their messages
		`CREATE TABLE {conversations} (
			n INTEGER PRIMARY KEY AUTOINCREMENT,
			id TEXT NOT NULL UNIQUE,
			user_id TEXT NOT NULL,
			title TEXT NOT NULL DEFAULT '',
			message_count INTEGER NOT NULL DEFAULT 0,
			created_ms INTEGER NOT NULL,
			updated_ms INTEGER NOT NULL
		)`,
		`CREATE INDEX conversations_user_n ON {conversations} (user_id, n)`,
		`CREATE INDEX conversations_user_updated ON {conversations} (user_id, updated_ms)`,
		`CREATE TABLE {messages} (
			conversation_n INTEGER NOT NULL REFERENCES {conversations} (n) ON DELETE CASCADE,
			seq INTEGER NOT NULL,
			role TEXT NOT NULL,
			content TEXT NOT NULL,
			provider TEXT NOT NULL DEFAULT '',
			model TEXT NOT NULL DEFAULT '',
			prompt_tokens INTEGER,
			completion_tokens INTEGER,
			total_tokens INTEGER,
			usage_estimated INTEGER NOT NULL DEFAULT 0,
			created_ms INTEGER NOT NULL,
			PRIMARY KEY (conversation_n, seq)
		)`,
	},
}

// OpenSQLite opens (creating it, mode 0600, when missing) the SQLite
// database at path, in WAL mode, and migrates it. now is the clock (nil:
// time.Now).
func OpenSQLite(ctx context.Context, path string, now func() time.Time) (Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store: unusable SQLite path %q", path)
	}
	// Create the file first so that it, and the -wal and -shm files that
	// SQLite gives the same mode, are private to this user.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
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
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	var mode string
	if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	if !strings.EqualFold(mode, "wal") {
		db.Close()
		return nil, fmt.Errorf("store: %s: journal mode is %q, not WAL", path, mode)
	}
	s := newSQLStore(db, dialect{
		name:       "sqlite",
		tables:     strings.NewReplacer("{conversations}", "conversations", "{messages}", "messages", "{schema_migrations}", "schema_migrations"),
		rebind:     func(q string) string { return q },
		migrations: sqliteMigrations,
		unique: func(err error) bool {
			var se *sqlite.Error
			if !errors.As(err, &se) {
				return false
			}
			return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
		},
	}, now)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
