package core

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// TaskRecord is a task as a TaskStore keeps it: enough to answer
// tasks/get, tasks/list and tasks/result after the process that ran it is
// gone.
type TaskRecord struct {
	ID, Owner string
	// Share is whose share of the kept finished tasks the task counts
	// against (Trim): its owner, or, for a task nobody owns (an
	// unauthenticated request's), the client that started it, so that one
	// anonymous client cannot push out everyone's.
	Share            string
	Method, Revision string
	Status, Message  string
	Created, Updated time.Time
	TTL              time.Duration
	Result           json.RawMessage // the result tree, once completed
	Error            json.RawMessage // the JSON-RPC error object, once failed
}

// Expires is when the record may be dropped.
func (r TaskRecord) Expires() time.Time { return r.Created.Add(r.TTL) }

// ErrTaskNotFound is what a TaskStore's Load returns for an id it does not
// keep.
var ErrTaskNotFound = errors.New("server: no such task")

// TaskStore keeps the records of tasks, so that a durable one
// (server/taskstore: SQLite, PostgreSQL) lets a finished task's result be
// read after a restart, until its TTL. The server keeps the running part
// of a task (its cancellation, its waiters) in memory and saves the record
// at each change. Implementations are safe for concurrent use.
type TaskStore interface {
	Save(ctx context.Context, r TaskRecord) error // insert, or replace the record of r.ID
	Load(ctx context.Context, id string) (TaskRecord, error)
	List(ctx context.Context, owner string) ([]TaskRecord, error) // oldest first
	Sweep(ctx context.Context, now time.Time) error               // drop the records past their TTL
	// Trim drops the finished records (completed, failed, cancelled) of
	// one share (TaskRecord.Share) beyond the newest keep, and beyond
	// keepBytes of results and errors counted from the newest: one user's
	// finished tasks are bounded on disk as in memory.
	Trim(ctx context.Context, share string, keep int, keepBytes int64) error
}

// WithTaskStore keeps the tasks' records in ts as well as in memory
// (default: memory only, lost with the process).
func WithTaskStore(ts TaskStore) Option { return optionFunc(func(c *config) { c.taskStore = ts }) }

// WithTaskLease sets how long the record of a running task counts as
// running without its heartbeat (a third of it): after that, another
// process on the same durable store takes the task for dead, ended with
// the process that ran it (default 90s).
func WithTaskLease(d time.Duration) Option { return optionFunc(func(c *config) { c.taskLease = d }) }
