package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mcpstack/mcpstack/internal/sqlitedb"
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
	{ // 2: the bytes of content each conversation holds, for the user's quota
		`ALTER TABLE {conversations} ADD COLUMN content_bytes INTEGER NOT NULL DEFAULT 0`,
		`UPDATE {conversations} SET content_bytes = (SELECT COALESCE(SUM(LENGTH(CAST(content AS BLOB))), 0) FROM {messages} WHERE conversation_n = n)`,
	},
}

// OpenSQLite opens (creating it, mode 0600, when missing) the SQLite
// database at path, in WAL mode, and migrates it. now is the clock (nil:
// time.Now).
func OpenSQLite(ctx context.Context, path string, now func() time.Time) (Store, error) {
	return openSQLite(ctx, path, now)
}

func openSQLite(ctx context.Context, path string, now func() time.Time) (*sqlStore, error) {
	db, err := sqlitedb.Open(ctx, path, 8)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
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
