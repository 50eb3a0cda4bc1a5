// Package pgdb opens PostgreSQL databases the way every store of the
// project uses them (the chat store, the task store): through pgx's
// database/sql driver, tables in a schema of their own.
package pgdb

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx/v5" database/sql driver
)

// validSchemaName reports whether s is a PostgreSQL identifier that
// needs no quoting: a lower-case letter or _, then up to 62 of those or
// digits. (A regexp of it, compiled at init, stayed on every process's
// heap, which every GC cycle marks.)
func validSchemaName(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Open checks the schema's name (it is spliced into statements, quoted),
// connects to the database dsn names with at most maxConns connections,
// and pings it.
func Open(ctx context.Context, dsn, schema string, maxConns int) (*sql.DB, error) {
	if !validSchemaName(schema) {
		return nil, fmt.Errorf("PostgreSQL schema %q: use lower-case letters, digits and _", schema)
	}
	db, err := sql.Open("pgx/v5", dsn) // "pgx" is pgx v4's too, where a program links both
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(min(4, maxConns))
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return db, nil
}

// Prepare is what a store's migration of its tables in schema runs first,
// in its transaction: an advisory lock on the schema, so that servers
// starting together on one database migrate one at a time, whichever
// stores share the schema (CREATE ... IF NOT EXISTS fails against a
// concurrent twin), then the schema.
func Prepare(schema string) []string {
	return []string{
		`SELECT pg_advisory_xact_lock(hashtext('mcpstack.migrate.` + schema + `'))`,
		`CREATE SCHEMA IF NOT EXISTS "` + schema + `"`,
	}
}

// Rebind rewrites the ? placeholders of a query as $1, $2, ... (the
// stores write their queries once, for SQLite and PostgreSQL alike). The
// queries have no ? inside string literals.
func Rebind(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}
