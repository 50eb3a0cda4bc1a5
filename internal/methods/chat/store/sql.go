package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// dialect is what differs between the SQL backends.
type dialect struct {
	name string
	// tables maps the {name} placeholders of the SQL below to the
	// (qualified) table names.
	tables *strings.Replacer
	// rebind turns ? placeholders into the backend's.
	rebind func(string) string
	// migrations, oldest first: migration i brings the schema to version
	// i+1. Each is a list of statements run in one transaction.
	migrations [][]string
	// prepare runs first in the migration transaction (locks, schema).
	prepare []string
	// unique reports a unique-constraint violation.
	unique func(error) bool
}

// sqlStore is Store over database/sql; sqlite.go and postgres.go give it
// its dialect.
type sqlStore struct {
	db    *sql.DB
	d     dialect
	now   func() time.Time
	q     queries
	quota Quota
}

type queries struct {
	insertConv, bumpConv, getConv, getMsgs, insertMsg string
	usage                                             string
	list, listPrefix, search, deleteMsgs, deleteConv  string
	migrationsTable, currentVersion, recordMigration  string
}

func newSQLStore(db *sql.DB, d dialect, now func() time.Time) *sqlStore {
	if now == nil {
		now = time.Now
	}
	s := &sqlStore{db: db, d: d, now: now, quota: DefaultQuota}
	x := func(q string) string { return d.rebind(d.tables.Replace(q)) }
	const convCols = `id, user_id, title, message_count, created_ms, updated_ms`
	s.q = queries{
		insertConv: x(`INSERT INTO {conversations} (` + convCols + `, content_bytes) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING n`),
		usage:      x(`SELECT COUNT(*), COALESCE(SUM(content_bytes), 0) FROM {conversations} WHERE user_id = ?`),
		// The UPDATE checks the owner, locks the row (PostgreSQL) or the
		// database (SQLite, BEGIN IMMEDIATE) and allocates the sequence
		// numbers in one statement, so concurrent appends never collide.
		bumpConv: x(`UPDATE {conversations} SET message_count = message_count + ?, content_bytes = content_bytes + ?, updated_ms = ?
			WHERE id = ? AND user_id = ? RETURNING n, ` + convCols),
		getConv:   x(`SELECT n, ` + convCols + ` FROM {conversations} WHERE id = ? AND user_id = ?`),
		getMsgs:   x(`SELECT seq, role, content, provider, model, prompt_tokens, completion_tokens, total_tokens, usage_estimated, created_ms FROM {messages} WHERE conversation_n = ? ORDER BY seq`),
		insertMsg: x(`INSERT INTO {messages} (conversation_n, seq, role, content, provider, model, prompt_tokens, completion_tokens, total_tokens, usage_estimated, created_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		list:      x(`SELECT ` + convCols + ` FROM {conversations} WHERE user_id = ? ORDER BY n LIMIT ? OFFSET ?`),
		listPrefix: x(`SELECT ` + convCols + ` FROM {conversations} WHERE user_id = ? AND substr(id, 1, ?) = ?
			ORDER BY n LIMIT ? OFFSET ?`),
		search: x(`SELECT c.id, c.user_id, c.title, c.message_count, c.created_ms, c.updated_ms,
				(SELECT COUNT(*) FROM {messages} h WHERE h.conversation_n = c.n AND lower(h.content) LIKE lower(?) ESCAPE '\'),
				m.seq, m.role, m.content, m.created_ms
			FROM {conversations} c
			LEFT JOIN {messages} m ON m.conversation_n = c.n AND m.seq = (
				SELECT MIN(f.seq) FROM {messages} f WHERE f.conversation_n = c.n AND lower(f.content) LIKE lower(?) ESCAPE '\')
			WHERE c.user_id = ? AND (lower(c.title) LIKE lower(?) ESCAPE '\' OR EXISTS (
				SELECT 1 FROM {messages} e WHERE e.conversation_n = c.n AND lower(e.content) LIKE lower(?) ESCAPE '\'))
			ORDER BY c.updated_ms DESC, c.n DESC
			LIMIT ?`),
		deleteMsgs:      x(`DELETE FROM {messages} WHERE conversation_n = ?`),
		deleteConv:      x(`DELETE FROM {conversations} WHERE n = ?`),
		migrationsTable: x(`CREATE TABLE IF NOT EXISTS {schema_migrations} (version INTEGER PRIMARY KEY, applied_ms BIGINT NOT NULL)`),
		currentVersion:  x(`SELECT COALESCE(MAX(version), 0) FROM {schema_migrations}`),
		recordMigration: x(`INSERT INTO {schema_migrations} (version, applied_ms) VALUES (?, ?)`),
	}
	return s
}

// migrate brings the schema to the newest version, in one transaction
// under the dialect's lock, so that servers starting together migrate once.
func (s *sqlStore) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for _, q := range s.d.prepare {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("store: prepare migrations: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q.migrationsTable); err != nil {
		return fmt.Errorf("store: migrations table: %w", err)
	}
	var v int
	if err := tx.QueryRowContext(ctx, s.q.currentVersion).Scan(&v); err != nil {
		return fmt.Errorf("store: schema version: %w", err)
	}
	if v > len(s.d.migrations) {
		return fmt.Errorf("store: the %s database is at schema version %d; this build knows up to %d", s.d.name, v, len(s.d.migrations))
	}
	for i := v; i < len(s.d.migrations); i++ {
		for _, q := range s.d.migrations[i] {
			if _, err := tx.ExecContext(ctx, s.d.tables.Replace(q)); err != nil {
				return fmt.Errorf("store: migration %d: %w", i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q.recordMigration, i+1, s.now().UnixMilli()); err != nil {
			return fmt.Errorf("store: record migration %d: %w", i+1, err)
		}
	}
	return tx.Commit()
}

// SchemaVersion is the schema version of the database.
func (s *sqlStore) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, s.q.currentVersion).Scan(&v)
	return v, err
}

func (s *sqlStore) Close() error { return s.db.Close() }

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

type rowScanner interface{ Scan(dest ...any) error }

func scanConv(r rowScanner, n *int64) (*Conversation, error) {
	c := &Conversation{}
	var created, updated int64
	dest := []any{&c.ID, &c.User, &c.Title, &c.MessageCount, &created, &updated}
	if n != nil {
		dest = append([]any{n}, dest...)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
	return c, nil
}

func (s *sqlStore) insertMessages(ctx context.Context, tx *sql.Tx, convN, firstSeq int64, now time.Time, msgs []Message) ([]Message, error) {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		if m.Role != RoleUser && m.Role != RoleAssistant {
			return nil, fmt.Errorf("store: message %d has role %q (want user or assistant)", i, m.Role)
		}
		m.Seq = firstSeq + int64(i)
		if m.CreatedAt.IsZero() {
			m.CreatedAt = now
		}
		var pt, ct, tt sql.NullInt64
		est := 0
		if u := m.Usage; u != nil {
			pt = sql.NullInt64{Int64: u.PromptTokens, Valid: true}
			ct = sql.NullInt64{Int64: u.CompletionTokens, Valid: true}
			tt = sql.NullInt64{Int64: u.TotalTokens, Valid: true}
			if u.Estimated {
				est = 1
			}
		}
		if _, err := tx.ExecContext(ctx, s.q.insertMsg, convN, m.Seq, m.Role, m.Content, m.Provider, m.Model, pt, ct, tt, est, ms(m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: insert message: %w", err)
		}
		m.CreatedAt = fromMS(ms(m.CreatedAt))
		out[i] = m
	}
	return out, nil
}

// withinQuota refuses, with ErrQuota, a write that would take user past
// the store's quota: newConvs more conversations, bytes more content.
// Concurrent writes of one user may pass it together (PostgreSQL reads
// committed data): the excess is bounded by what those writes carry.
func (s *sqlStore) withinQuota(ctx context.Context, tx *sql.Tx, user string, newConvs int, bytes int64) error {
	var convs int
	var used int64
	if err := tx.QueryRowContext(ctx, s.q.usage, user).Scan(&convs, &used); err != nil {
		return fmt.Errorf("store: quota: %w", err)
	}
	if convs+newConvs > s.quota.Conversations {
		return fmt.Errorf("%w: %d conversations at most", ErrQuota, s.quota.Conversations)
	}
	if used+bytes > s.quota.Bytes {
		return fmt.Errorf("%w: %d bytes of messages at most (%d used)", ErrQuota, s.quota.Bytes, used)
	}
	return nil
}

// contentBytes is what msgs count against a quota.
func contentBytes(msgs []Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Content))
	}
	return n
}

func (s *sqlStore) Create(ctx context.Context, user, id, title string, msgs ...Message) (*Conversation, error) {
	if user == "" || id == "" {
		return nil, errors.New("store: Create needs a user and an id")
	}
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := s.withinQuota(ctx, tx, user, 1, contentBytes(msgs)); err != nil {
		return nil, err
	}
	var n int64
	err = tx.QueryRowContext(ctx, s.q.insertConv, id, user, title, int64(len(msgs)), ms(now), ms(now), contentBytes(msgs)).Scan(&n)
	if err != nil {
		if s.d.unique(err) {
			return nil, ErrExists
		}
		return nil, fmt.Errorf("store: create: %w", err)
	}
	if _, err := s.insertMessages(ctx, tx, n, 1, now, msgs); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: create: %w", err)
	}
	return &Conversation{ID: id, User: user, Title: title, MessageCount: int64(len(msgs)),
		CreatedAt: fromMS(ms(now)), UpdatedAt: fromMS(ms(now))}, nil
}

func (s *sqlStore) Append(ctx context.Context, user, id string, msgs ...Message) (*Conversation, error) {
	now := s.now()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := s.withinQuota(ctx, tx, user, 0, contentBytes(msgs)); err != nil {
		return nil, err
	}
	var n int64
	c, err := scanConv(tx.QueryRowContext(ctx, s.q.bumpConv, int64(len(msgs)), contentBytes(msgs), ms(now), id, user), &n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: append: %w", err)
	}
	if _, err := s.insertMessages(ctx, tx, n, c.MessageCount-int64(len(msgs))+1, now, msgs); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("store: append: %w", err)
	}
	return c, nil
}

func (s *sqlStore) Get(ctx context.Context, user, id string) (*Conversation, error) {
	// Read-only: a deferred transaction on SQLite, which does not wait
	// for writers in WAL mode.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var n int64
	c, err := scanConv(tx.QueryRowContext(ctx, s.q.getConv, id, user), &n)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: get: %w", err)
	}
	rows, err := tx.QueryContext(ctx, s.q.getMsgs, n)
	if err != nil {
		return nil, fmt.Errorf("store: get messages: %w", err)
	}
	defer rows.Close()
	c.Messages = []Message{}
	for rows.Next() {
		var m Message
		var pt, ct, tt sql.NullInt64
		var est int64
		var created int64
		if err := rows.Scan(&m.Seq, &m.Role, &m.Content, &m.Provider, &m.Model, &pt, &ct, &tt, &est, &created); err != nil {
			return nil, fmt.Errorf("store: get messages: %w", err)
		}
		m.CreatedAt = fromMS(created)
		if pt.Valid || ct.Valid || tt.Valid {
			m.Usage = &Usage{PromptTokens: pt.Int64, CompletionTokens: ct.Int64, TotalTokens: tt.Int64, Estimated: est != 0}
		}
		c.Messages = append(c.Messages, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: get messages: %w", err)
	}
	return c, nil
}

func (s *sqlStore) List(ctx context.Context, user string, opts ListOptions) ([]*Conversation, bool, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	offset := max(opts.Offset, 0)
	var rows *sql.Rows
	var err error
	if opts.Prefix != "" {
		// substr, not LIKE: SQLite's LIKE ignores case.
		rows, err = s.db.QueryContext(ctx, s.q.listPrefix, user, utf8.RuneCountInString(opts.Prefix), opts.Prefix, limit+1, offset)
	} else {
		rows, err = s.db.QueryContext(ctx, s.q.list, user, limit+1, offset)
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: list: %w", err)
	}
	defer rows.Close()
	out := []*Conversation{}
	for rows.Next() {
		c, err := scanConv(rows, nil)
		if err != nil {
			return nil, false, fmt.Errorf("store: list: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("store: list: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}

func (s *sqlStore) Search(ctx context.Context, user, query string, limit int) ([]*SearchHit, error) {
	if limit <= 0 {
		limit = 10
	}
	limit = min(limit, MaxSearchLimit)
	pat := "%" + escapeLike(query) + "%"
	rows, err := s.db.QueryContext(ctx, s.q.search, pat, pat, user, pat, pat, limit)
	if err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	defer rows.Close()
	out := []*SearchHit{}
	for rows.Next() {
		h := &SearchHit{}
		c := &h.Conversation
		var created, updated int64
		var seq, mcreated sql.NullInt64
		var role, content sql.NullString
		if err := rows.Scan(&c.ID, &c.User, &c.Title, &c.MessageCount, &created, &updated, &h.Matches, &seq, &role, &content, &mcreated); err != nil {
			return nil, fmt.Errorf("store: search: %w", err)
		}
		c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
		if seq.Valid {
			h.First = Message{Seq: seq.Int64, Role: role.String, Content: content.String, CreatedAt: fromMS(mcreated.Int64)}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: search: %w", err)
	}
	return out, nil
}

func (s *sqlStore) Delete(ctx context.Context, user, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var n int64
	if _, err := scanConv(tx.QueryRowContext(ctx, s.q.getConv, id, user), &n); errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	} else if err != nil {
		return fmt.Errorf("store: delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q.deleteMsgs, n); err != nil {
		return fmt.Errorf("store: delete: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q.deleteConv, n); err != nil {
		return fmt.Errorf("store: delete: %w", err)
	}
	return tx.Commit()
}

// escapeLike makes s match itself literally in a LIKE pattern with
// ESCAPE '\'.
func escapeLike(s string) string {
	if !strings.ContainsAny(s, `\%_`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r == '\\' || r == '%' || r == '_' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
