package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mcpstack/mcpstack/internal/pgdb"
)

// DefaultPostgresSchema is the schema of the tables unless told otherwise.
const DefaultPostgresSchema = "mcpstack_chat"

// postgresMigrations are the schema versions of the PostgreSQL backend.
var postgresMigrations = [][]string{
	{ // 1: conversations and their messages
		`CREATE TABLE {conversations} (
			n BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
			id TEXT NOT NULL UNIQUE,
			user_id TEXT NOT NULL,
			title TEXT NOT NULL DEFAULT '',
			message_count BIGINT NOT NULL DEFAULT 0,
			created_ms BIGINT NOT NULL,
			updated_ms BIGINT NOT NULL
		)`,
		`CREATE INDEX conversations_user_n ON {conversations} (user_id, n)`,
		`CREATE INDEX conversations_user_updated ON {conversations} (user_id, updated_ms)`,
		`CREATE TABLE {messages} (
			conversation_n BIGINT NOT NULL REFERENCES {conversations} (n) ON DELETE CASCADE,
			seq BIGINT NOT NULL,
			role TEXT NOT NULL,
			content TEXT NOT NULL,
			provider TEXT NOT NULL DEFAULT '',
			model TEXT NOT NULL DEFAULT '',
			prompt_tokens BIGINT,
			completion_tokens BIGINT,
			total_tokens BIGINT,
			usage_estimated INTEGER NOT NULL DEFAULT 0,
			created_ms BIGINT NOT NULL,
			PRIMARY KEY (conversation_n, seq)
		)`,
	},
	{ // 2: the bytes of content each conversation holds, for the user's quota
		`ALTER TABLE {conversations} ADD COLUMN content_bytes BIGINT NOT NULL DEFAULT 0`,
		`UPDATE {conversations} SET content_bytes = (SELECT COALESCE(SUM(OCTET_LENGTH(content)), 0) FROM {messages} WHERE conversation_n = n)`,
	},
}

// OpenPostgres connects to the PostgreSQL database dsn names and migrates
// the tables in schema ("" is DefaultPostgresSchema; lower-case letters,
// digits and _), creating the schema when missing. now is the clock (nil:
// time.Now).
func OpenPostgres(ctx context.Context, dsn, schema string, now func() time.Time) (Store, error) {
	return openPostgres(ctx, dsn, schema, now)
}

func openPostgres(ctx context.Context, dsn, schema string, now func() time.Time) (*sqlStore, error) {
	if schema == "" {
		schema = DefaultPostgresSchema
	}
	db, err := pgdb.Open(ctx, dsn, schema, 16)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	q := `"` + schema + `".`
	s := newSQLStore(db, dialect{
		name:       "postgres",
		tables:     strings.NewReplacer("{conversations}", q+"conversations", "{messages}", q+"messages", "{schema_migrations}", q+"schema_migrations"),
		rebind:     pgdb.Rebind,
		prepare:    pgdb.Prepare(schema), // one migrator at a time across every server on the database
		migrations: postgresMigrations,
		unique: func(err error) bool {
			var pe *pgconn.PgError
			return errors.As(err, &pe) && pe.Code == "23505"
		},
	}, now)
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}
