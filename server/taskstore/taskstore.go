// Package taskstore keeps the records of tasks (server.TaskStore): in
// memory, or durably in SQLite or PostgreSQL, so that a finished task's
// result can be read after the server restarted, until its TTL. A Redis
// store belongs with the scale-out work.
package taskstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/pgdb"
	"github.com/mcpstack/mcpstack/internal/sqlitedb"
	"github.com/mcpstack/mcpstack/server"
)

// Memory is a store that lives as long as the process: what the server
// does without one, as a TaskStore (for tests and composition).
func Memory() server.TaskStore { return &memory{records: map[string]server.TaskRecord{}} }

type memory struct {
	mu      sync.Mutex
	records map[string]server.TaskRecord
}

func (m *memory) Save(_ context.Context, r server.TaskRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.records[r.ID] = r
	return nil
}

func (m *memory) Load(_ context.Context, id string) (server.TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[id]
	if !ok {
		return server.TaskRecord{}, server.ErrTaskNotFound
	}
	return r, nil
}

func (m *memory) List(_ context.Context, owner string) ([]server.TaskRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []server.TaskRecord
	for _, r := range m.records {
		if r.Owner == owner {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Created.Before(out[j].Created) })
	return out, nil
}

func (m *memory) Sweep(_ context.Context, now time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, r := range m.records {
		if now.After(r.Created.Add(r.TTL)) {
			delete(m.records, id)
		}
	}
	return nil
}

func (m *memory) Trim(_ context.Context, share string, keep int, keepBytes int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var done []server.TaskRecord
	for _, r := range m.records {
		if shareOf(r) == share && finished(r.Status) {
			done = append(done, r)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].Created.After(done[j].Created) })
	var bytes int64
	for n, r := range done {
		bytes += int64(len(r.Result) + len(r.Error))
		if n >= keep || bytes > keepBytes {
			delete(m.records, r.ID)
		}
	}
	return nil
}

// shareOf is a record's share; a record saved before shares existed
// counts against its owner.
func shareOf(r server.TaskRecord) string {
	if r.Share == "" {
		return r.Owner
	}
	return r.Share
}

// finishedStatuses are the statuses of a task that has ended.
const finishedStatuses = `'completed', 'failed', 'cancelled'`

func finished(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// SQL is a store in a SQL database: SQLite or PostgreSQL.
type SQL struct {
	db    *sql.DB
	table string
	// The queries, in the database's dialect, written once.
	save, load, list, sweep, trim string
	addShare                      func(ctx context.Context, tx *sql.Tx, table string) error
}

// dialect is what differs between the SQL databases: placeholders, and
// how many bytes a TEXT value holds (Go counts bytes; LENGTH counts
// characters).
type dialect struct {
	rebind func(string) string
	bytes  func(column string) string
	// addShare adds the share column to a table made before it existed.
	addShare func(ctx context.Context, tx *sql.Tx, table string) error
}

func newSQL(db *sql.DB, table string, d dialect) *SQL {
	rebind := d.rebind
	return &SQL{db: db, table: table, addShare: d.addShare,
		save: rebind(`INSERT INTO ` + table + ` (id, owner, share, method, revision, status, message, created_ms, updated_ms, ttl_ms, expires_ms, result, error)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET status = excluded.status, message = excluded.message, updated_ms = excluded.updated_ms,
			result = excluded.result, error = excluded.error`),
		load:  rebind(`SELECT ` + columns + ` FROM ` + table + ` WHERE id = ?`),
		list:  rebind(`SELECT ` + metaColumns + ` FROM ` + table + ` WHERE owner = ? ORDER BY created_ms, id`),
		sweep: rebind(`DELETE FROM ` + table + ` WHERE expires_ms < ?`),
		// The newest first, numbered and summed in one pass (window
		// functions: SQLite 3.25 and PostgreSQL alike).
		trim: rebind(`DELETE FROM ` + table + ` WHERE id IN (SELECT id FROM (
			SELECT id, ROW_NUMBER() OVER newest AS n,
				SUM(COALESCE(` + d.bytes("result") + `, 0) + COALESCE(` + d.bytes("error") + `, 0)) OVER newest AS bytes
			FROM ` + table + ` WHERE share = ? AND status IN (` + finishedStatuses + `)
			WINDOW newest AS (ORDER BY created_ms DESC, id DESC)) ranked
		WHERE n > ? OR bytes > ?)`),
	}
}

// Close closes the database.
func (s *SQL) Close() error { return s.db.Close() }

// OpenSQLite opens (creating it when missing, private to this user) the
// SQLite database at path and its tasks table.
func OpenSQLite(ctx context.Context, path string) (*SQL, error) {
	db, err := sqlitedb.Open(ctx, path, 4)
	if err != nil {
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	s := newSQL(db, "tasks", dialect{
		rebind: func(q string) string { return q },
		bytes:  func(c string) string { return "LENGTH(CAST(" + c + " AS BLOB))" },
		addShare: func(ctx context.Context, tx *sql.Tx, table string) error {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('`+table+`') WHERE name = 'share'`).Scan(&n); err != nil || n > 0 {
				return err
			}
			_, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN share TEXT NOT NULL DEFAULT ''`)
			if err != nil && strings.Contains(err.Error(), "duplicate column") {
				return nil // another process opening the same file added it first
			}
			return err
		},
	})
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("taskstore: %s: %w", path, err)
	}
	return s, nil
}

// OpenPostgres connects to the PostgreSQL database dsn names and creates
// the tasks table in schema (lower-case letters, digits and _; created
// when missing).
func OpenPostgres(ctx context.Context, dsn, schema string) (*SQL, error) {
	db, err := pgdb.Open(ctx, dsn, schema, 8)
	if err != nil {
		return nil, fmt.Errorf("taskstore: %w", err)
	}
	s := newSQL(db, `"`+schema+`".tasks`, dialect{
		rebind: pgdb.Rebind,
		bytes:  func(c string) string { return "OCTET_LENGTH(" + c + ")" },
		addShare: func(ctx context.Context, tx *sql.Tx, table string) error {
			_, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS share TEXT NOT NULL DEFAULT ''`)
			return err
		},
	})
	if err := s.migrate(ctx, pgdb.Prepare(schema)...); err != nil {
		db.Close()
		return nil, fmt.Errorf("taskstore: postgres: %w", err)
	}
	return s, nil
}

// migrate creates the table and its indexes when missing, in one
// transaction, after the statements first (PostgreSQL: its lock and its
// schema).
func (s *SQL) migrate(ctx context.Context, first ...string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range append(first,
		`CREATE TABLE IF NOT EXISTS `+s.table+` (
		id TEXT PRIMARY KEY,
		owner TEXT NOT NULL,
		method TEXT NOT NULL,
		revision TEXT NOT NULL,
		status TEXT NOT NULL,
		message TEXT NOT NULL,
		created_ms BIGINT NOT NULL,
		updated_ms BIGINT NOT NULL,
		ttl_ms BIGINT NOT NULL,
		expires_ms BIGINT NOT NULL,
		result TEXT,
		error TEXT,
		share TEXT NOT NULL DEFAULT ''
	)`,
		`CREATE INDEX IF NOT EXISTS tasks_owner ON `+s.table+` (owner, created_ms)`,
		`CREATE INDEX IF NOT EXISTS tasks_expires ON `+s.table+` (expires_ms)`,
	) {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	if err := s.addShare(ctx, tx, s.table); err != nil {
		return fmt.Errorf("add the share column: %w", err)
	}
	// A record saved before shares existed counts against its owner: said
	// once here, so that Trim's query is an index look-up.
	if _, err := tx.ExecContext(ctx, `UPDATE `+s.table+` SET share = owner WHERE share = ''`); err != nil {
		return fmt.Errorf("fill the share column: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `CREATE INDEX IF NOT EXISTS tasks_share ON `+s.table+` (share, created_ms)`); err != nil {
		return err
	}
	return tx.Commit()
}

func nullable(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// Save inserts or replaces a record.
func (s *SQL) Save(ctx context.Context, r server.TaskRecord) error {
	_, err := s.db.ExecContext(ctx, s.save,
		r.ID, r.Owner, shareOf(r), r.Method, r.Revision, r.Status, r.Message, r.Created.UnixMilli(), r.Updated.UnixMilli(),
		r.TTL.Milliseconds(), r.Created.Add(r.TTL).UnixMilli(), nullable(r.Result), nullable(r.Error))
	if err != nil {
		return fmt.Errorf("taskstore: save %s: %w", r.ID, err)
	}
	return nil
}

const (
	columns     = `id, owner, share, method, revision, status, message, created_ms, updated_ms, ttl_ms, result, error`
	metaColumns = `id, owner, share, method, revision, status, message, created_ms, updated_ms, ttl_ms, NULL, NULL`
)

func scan(row interface{ Scan(...any) error }) (server.TaskRecord, error) {
	var r server.TaskRecord
	var created, updated, ttl int64
	var result, errObj sql.NullString
	if err := row.Scan(&r.ID, &r.Owner, &r.Share, &r.Method, &r.Revision, &r.Status, &r.Message, &created, &updated, &ttl, &result, &errObj); err != nil {
		return r, err
	}
	r.Created, r.Updated, r.TTL = time.UnixMilli(created), time.UnixMilli(updated), time.Duration(ttl)*time.Millisecond
	if result.Valid {
		r.Result = []byte(result.String)
	}
	if errObj.Valid {
		r.Error = []byte(errObj.String)
	}
	return r, nil
}

// Load reads a record.
func (s *SQL) Load(ctx context.Context, id string) (server.TaskRecord, error) {
	r, err := scan(s.db.QueryRowContext(ctx, s.load, id))
	if errors.Is(err, sql.ErrNoRows) {
		return r, server.ErrTaskNotFound
	}
	if err != nil {
		return r, fmt.Errorf("taskstore: load %s: %w", id, err)
	}
	return r, nil
}

// List reads the records of owner, oldest first, without their results
// (Load has them).
func (s *SQL) List(ctx context.Context, owner string) ([]server.TaskRecord, error) {
	rows, err := s.db.QueryContext(ctx, s.list, owner)
	if err != nil {
		return nil, fmt.Errorf("taskstore: list: %w", err)
	}
	defer rows.Close()
	var out []server.TaskRecord
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("taskstore: list: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Sweep deletes the records past their TTL.
func (s *SQL) Sweep(ctx context.Context, now time.Time) error {
	if _, err := s.db.ExecContext(ctx, s.sweep, now.UnixMilli()); err != nil {
		return fmt.Errorf("taskstore: sweep: %w", err)
	}
	return nil
}

// Trim drops the finished records of share beyond the newest keep and
// beyond keepBytes of results and errors.
func (s *SQL) Trim(ctx context.Context, share string, keep int, keepBytes int64) error {
	if _, err := s.db.ExecContext(ctx, s.trim, share, keep, keepBytes); err != nil {
		return fmt.Errorf("taskstore: trim %s: %w", share, err)
	}
	return nil
}
