package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
)

// TaskSupporter is implemented by handlers whose tools run as tasks
// (package app's, from each tool's execution.taskSupport).
type TaskSupporter interface {
	// RunsTasks reports whether the handler declared the tasks
	// capability: without it a task-augmented request is served as a
	// plain one, as the spec asks.
	RunsTasks() bool
	// TaskSupport is a tool's taskSupport: "optional", "required", or
	// anything else for none.
	TaskSupport(tool string) string
}

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
	TTL              time.Duration   // the record may be dropped at Created + TTL
	Result           json.RawMessage // the result tree, once completed
	Error            json.RawMessage // the JSON-RPC error object, once failed
}

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
func WithTaskStore(ts TaskStore) Option {
	if ts == nil {
		return optionFunc(func(*config) {})
	}
	return coreOption(core.WithTaskStore(taskStore{ts}))
}

// taskStore gives the core a TaskStore in its own types.
type taskStore struct{ s TaskStore }

func (t taskStore) Save(ctx context.Context, r core.TaskRecord) error {
	return t.s.Save(ctx, TaskRecord(r))
}

func (t taskStore) Load(ctx context.Context, id string) (core.TaskRecord, error) {
	r, err := t.s.Load(ctx, id)
	if errors.Is(err, ErrTaskNotFound) {
		err = core.ErrTaskNotFound
	}
	return core.TaskRecord(r), err
}

func (t taskStore) List(ctx context.Context, owner string) ([]core.TaskRecord, error) {
	rs, err := t.s.List(ctx, owner)
	out := make([]core.TaskRecord, len(rs))
	for i, r := range rs {
		out[i] = core.TaskRecord(r)
	}
	return out, err
}

func (t taskStore) Sweep(ctx context.Context, now time.Time) error { return t.s.Sweep(ctx, now) }

func (t taskStore) Trim(ctx context.Context, share string, keep int, keepBytes int64) error {
	return t.s.Trim(ctx, share, keep, keepBytes)
}
