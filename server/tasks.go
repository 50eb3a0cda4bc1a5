package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/generated"
	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// Tasks (2025-11-25): a request whose params carry task runs on by
// itself; the client gets the task at once (CreateTaskResult), follows it
// with tasks/get or notifications/tasks/status, and fetches what the
// request would have answered with tasks/result. The core runs them for
// any handler; a handler says which tools may or must run as tasks
// (TaskSupporter; package app from each tool's execution.taskSupport).

// TaskSupporter is implemented by handlers whose tools run as tasks: the
// taskSupport of a tool ("optional", "required"; anything else forbids).
type TaskSupporter interface {
	TaskSupport(tool string) string
}

// taskSupport values of a tool.
const (
	taskOptional = "optional"
	taskRequired = "required"
)

// Task statuses.
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// Bounds of the task table.
const (
	// DefaultTaskTTL is how long a task is kept when the client asks for
	// no TTL, and the most it may ask for.
	DefaultTaskTTL = time.Hour
	// maxTasksPerOwner bounds the tasks one user keeps at once.
	maxTasksPerOwner = 100
	taskPollInterval = time.Second
)

// relatedTaskKey is the _meta member that ties a message to its task.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// createTaskResult is what a task-augmented request is answered with.
const createTaskResult = "CreateTaskResult"

// task is one request running as a task.
type task struct {
	id, owner string
	method    string
	spec      *wire.Spec
	created   time.Time
	ttl       time.Duration
	sess      *Session // to tell of status changes (gone when it ended)

	mu      sync.Mutex
	status  string
	message string
	updated time.Time
	result  any         // the result tree, projected and completed
	err     *wire.Error // or the error
	cancel  context.CancelFunc
	done    chan struct{}
}

func (t *task) terminal() bool {
	return t.status == taskCompleted || t.status == taskFailed || t.status == taskCancelled
}

// view is the task as the protocol shows it.
func (t *task) view() mcp.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	ttl := t.ttl.Milliseconds()
	poll := taskPollInterval.Milliseconds()
	return mcp.Task{
		TaskID: t.id, Status: mcp.TaskStatus(t.status), StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTL: &ttl, PollInterval: &poll,
	}
}

// tasks is the server's table of tasks, by id: the ones this process
// runs or ran; a TaskStore keeps the records of all.
type tasks struct {
	mu    sync.Mutex
	byID  map[string]*task
	swept time.Time
}

// record is the task as its store keeps it.
func (t *task) record() TaskRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := TaskRecord{ID: t.id, Owner: t.owner, Method: t.method, Revision: t.spec.Revision, Status: t.status, Message: t.message,
		Created: t.created, Updated: t.updated, TTL: t.ttl}
	if t.result != nil {
		r.Result, _ = wire.Marshal(t.result)
	}
	if t.err != nil {
		r.Error, _ = wire.Marshal(map[string]any{"code": t.err.Code, "message": t.err.Message, "data": t.err.Data})
	}
	return r
}

// save writes the task's record to the store, when there is one.
func (s *Server) saveTask(t *task) {
	if s.cfg.taskStore == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.cfg.taskStore.Save(ctx, t.record()); err != nil {
		s.log.Error("task store: save", "task", t.id, "err", err)
	}
}

// fromRecord is a task of an earlier process, as its store kept it: it
// has ended, and one that had not when that process stopped failed then.
func (s *Server) fromRecord(r TaskRecord) *task {
	spec := generated.Lookup(r.Revision)
	if spec == nil {
		spec = s.sessionSpecs[len(s.sessionSpecs)-1]
	}
	t := &task{id: r.ID, owner: r.Owner, method: r.Method, spec: spec, created: r.Created, updated: r.Updated, ttl: r.TTL,
		status: r.Status, message: r.Message, done: make(chan struct{})}
	close(t.done)
	if len(r.Result) > 0 {
		t.result, _ = wire.Parse(r.Result)
	}
	if len(r.Error) > 0 {
		if tree, err := wire.Parse(r.Error); err == nil {
			obj, _ := tree.(map[string]any)
			code, _ := wire.Int(obj["code"])
			msg, _ := obj["message"].(string)
			t.err = &wire.Error{Code: int(code), Message: msg, Data: obj["data"]}
		}
	}
	if !t.terminal() {
		t.status, t.message = taskFailed, "the server stopped while the task ran"
		t.err = &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: " + t.message}
		s.saveTask(t)
	}
	return t
}

// taskOwner is whose a task is: the session's principal, or the session
// itself when it has none (then no other session sees it).
func taskOwner(sess *Session) string {
	if sess.caller.Owner != "" {
		return "principal:" + sess.caller.Owner
	}
	return "session:" + sess.id
}

// sweepTasksLocked drops the tasks past their TTL, from memory and, in
// the background, from the store.
func (s *Server) sweepTasksLocked(now time.Time) {
	ts := &s.tasks
	if now.Sub(ts.swept) < time.Second {
		return
	}
	ts.swept = now
	if store := s.cfg.taskStore; store != nil {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := store.Sweep(ctx, now); err != nil {
				s.log.Warn("task store: sweep", "err", err)
			}
		}()
	}
	for id, t := range ts.byID {
		if now.Sub(t.created) > t.ttl {
			t.mu.Lock()
			if t.cancel != nil && !t.terminal() {
				t.cancel()
			}
			t.mu.Unlock()
			delete(ts.byID, id)
		}
	}
}

// lookupTask finds a task of owner, in memory or in the store; another
// owner's is unknown too.
func (s *Server) lookupTask(owner, id string) (*task, bool) {
	s.tasks.mu.Lock()
	s.sweepTasksLocked(time.Now())
	t, ok := s.tasks.byID[id]
	s.tasks.mu.Unlock()
	if !ok && s.cfg.taskStore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r, err := s.cfg.taskStore.Load(ctx, id)
		if err != nil {
			if !errors.Is(err, ErrTaskNotFound) {
				s.log.Error("task store: load", "task", id, "err", err)
			}
			return nil, false
		}
		if time.Now().After(r.Expires()) {
			return nil, false
		}
		t, ok = s.fromRecord(r), true
	}
	if !ok || t.owner != owner {
		return nil, false
	}
	return t, true
}

// taskSupport is the taskSupport of the tool a tools/call names.
func (s *Server) taskSupport(msg *jsonrpc.Message) string {
	ts, ok := s.handler.(TaskSupporter)
	if !ok {
		return ""
	}
	params, _ := msg.Params.(map[string]any)
	name, _ := params["name"].(string)
	return ts.TaskSupport(name)
}

// startTask answers a task-augmented request with its task and runs it.
func (sess *Session) startTask(ctx context.Context, spec *wire.Spec, m wire.Method, msg *jsonrpc.Message, meta map[string]any) []byte {
	srv := sess.srv
	ttl := DefaultTaskTTL
	if n, err := wire.Int(meta["ttl"]); err == nil && n > 0 && time.Duration(n)*time.Millisecond < ttl {
		ttl = time.Duration(n) * time.Millisecond
	}
	owner := taskOwner(sess)
	now := time.Now()
	t := &task{id: newTaskID(), owner: owner, method: msg.Method, spec: spec, created: now, updated: now, ttl: ttl,
		sess: sess, status: taskWorking, done: make(chan struct{})}
	srv.tasks.mu.Lock()
	srv.sweepTasksLocked(now)
	n := 0
	for _, o := range srv.tasks.byID {
		if o.owner == owner {
			n++
		}
	}
	if n >= maxTasksPerOwner {
		srv.tasks.mu.Unlock()
		return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeServerBusy, Message: fmt.Sprintf("Server busy: you keep %d tasks already; fetch or cancel some", n)})
	}
	if srv.tasks.byID == nil {
		srv.tasks.byID = map[string]*task{}
	}
	srv.tasks.byID[t.id] = t
	srv.tasks.mu.Unlock()
	srv.saveTask(t)

	// The task runs on its own: not cancelled with its request, ended by
	// tasks/cancel, its TTL, or the server's end.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	t.cancel = cancel
	go func() {
		select {
		case <-srv.stop:
			cancel()
		case <-tctx.Done():
		}
	}()
	p := &callPeer{sess: sess, spec: spec, token: progressToken(msg.Params), related: t.id,
		asking: func(waiting bool) { t.set(taskWorking, taskInputRequired, waiting) }}
	go func() {
		defer cancel()
		result, err := srv.call(peer.With(tctx, p), msg, spec)
		t.finish(srv, m, result, err)
	}()
	res := &mcp.CreateTaskResult{Task: t.view()}
	tm := m
	tm.Result, tm.Response = createTaskResult, ""
	return srv.encodeResult(spec, tm, msg.ID, res)
}

// set moves a running task between working and input_required.
func (t *task) set(from, to string, waiting bool) {
	if !waiting {
		from, to = to, from
	}
	t.mu.Lock()
	changed := t.status == from
	if changed {
		t.status, t.updated = to, time.Now()
	}
	t.mu.Unlock()
	if changed {
		t.sess.srv.saveTask(t)
		t.tell()
	}
}

// finish records the end of a task.
func (t *task) finish(srv *Server, m wire.Method, result wire.Encoder, err error) {
	t.mu.Lock()
	if t.terminal() { // cancelled meanwhile
		t.mu.Unlock()
		return
	}
	switch {
	case err != nil:
		t.status, t.err = taskFailed, srv.wireError(t.method, err)
		t.message = t.err.Message
	case result == nil:
		t.status, t.err = taskFailed, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	default:
		t.status, t.result = taskCompleted, srv.complete(t.spec, m, t.spec.Project(result))
	}
	t.updated = time.Now()
	close(t.done)
	t.mu.Unlock()
	srv.saveTask(t)
	t.tell()
}

// tell sends notifications/tasks/status to the task's session, if it is
// still there.
func (t *task) tell() {
	if t.sess == nil {
		return // a task of an earlier process
	}
	select {
	case <-t.sess.Done():
		return
	default:
	}
	v := t.view()
	params := &mcp.TaskStatusNotificationParams{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage,
		CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, TTL: v.TTL, PollInterval: v.PollInterval}
	if err := t.sess.Notify(context.Background(), mcp.MethodTaskStatus, params); err != nil && !errors.Is(err, ErrNoStream) {
		t.sess.srv.log.Debug("task status", "task", t.id, "err", err)
	}
}

func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "task_" + hex.EncodeToString(b)
}

// taskRequest serves tasks/get, tasks/result, tasks/list and tasks/cancel
// of a session; ok is false for any other method.
func (sess *Session) taskRequest(ctx context.Context, spec *wire.Spec, m wire.Method, msg *jsonrpc.Message) (reply []byte, ok bool) {
	srv := sess.srv
	owner := taskOwner(sess)
	params, _ := msg.Params.(map[string]any)
	id, _ := params["taskId"].(string)
	unknown := func() []byte {
		return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: no task %q", id),
			Data: map[string]any{"field": "/params/taskId", "reason": "no such task"}})
	}
	switch msg.Method {
	case mcp.MethodGetTask:
		t, found := srv.lookupTask(owner, id)
		if !found {
			return unknown(), true
		}
		v := t.view()
		return srv.encodeResult(spec, m, msg.ID, &mcp.GetTaskResult{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage,
			CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, TTL: v.TTL, PollInterval: v.PollInterval}), true
	case mcp.MethodGetTaskPayload:
		t, found := srv.lookupTask(owner, id)
		if !found {
			return unknown(), true
		}
		select {
		case <-t.done:
		case <-ctx.Done():
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInternalError, Message: "Request cancelled: " + ctx.Err().Error()}), true
		}
		t.mu.Lock()
		result, terr, status := t.result, t.err, t.status
		t.mu.Unlock()
		if terr != nil {
			return jsonrpc.EncodeError(msg.ID, terr), true
		}
		if status == taskCancelled {
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: task %q was cancelled", id)}), true
		}
		tree, _ := copyTree(result).(map[string]any)
		if tree == nil {
			tree = map[string]any{}
		}
		metaTree, _ := tree["_meta"].(map[string]any)
		if metaTree == nil {
			metaTree = map[string]any{}
		}
		metaTree[relatedTaskKey] = map[string]any{"taskId": id}
		tree["_meta"] = metaTree
		return srv.encodeTree(spec, m, msg.ID, tree), true
	case mcp.MethodListTasks:
		srv.tasks.mu.Lock()
		srv.sweepTasksLocked(time.Now())
		mine := map[string]*task{}
		for _, t := range srv.tasks.byID {
			if t.owner == owner {
				mine[t.id] = t
			}
		}
		srv.tasks.mu.Unlock()
		if store := srv.cfg.taskStore; store != nil {
			records, err := store.List(ctx, owner)
			if err != nil {
				srv.log.Error("task store: list", "err", err)
				return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the task store failed"}), true
			}
			now := time.Now()
			for _, r := range records {
				if _, live := mine[r.ID]; !live && now.Before(r.Expires()) {
					mine[r.ID] = srv.fromRecord(r)
				}
			}
		}
		all := make([]*task, 0, len(mine))
		for _, t := range mine {
			all = append(all, t)
		}
		sort.Slice(all, func(i, j int) bool { return all[i].created.Before(all[j].created) })
		list := make([]*mcp.Task, len(all))
		for i, t := range all {
			v := t.view()
			list[i] = &v
		}
		return srv.encodeResult(spec, m, msg.ID, &mcp.ListTasksResult{Tasks: list}), true
	case mcp.MethodCancelTask:
		t, found := srv.lookupTask(owner, id)
		if !found {
			return unknown(), true
		}
		t.mu.Lock()
		if t.terminal() {
			status := t.status
			t.mu.Unlock()
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: task %q is %s already", id, status),
				Data: map[string]any{"field": "/params/taskId", "reason": "the task has ended"}}), true
		}
		t.status, t.updated = taskCancelled, time.Now()
		if t.cancel != nil {
			t.cancel()
		}
		close(t.done)
		t.mu.Unlock()
		srv.saveTask(t)
		t.tell()
		v := t.view()
		return srv.encodeResult(spec, m, msg.ID, &mcp.CancelTaskResult{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage,
			CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, TTL: v.TTL, PollInterval: v.PollInterval}), true
	}
	return nil, false
}

// copyTree copies a JSON tree, so that a stored result is not changed by
// what one answer adds.
func copyTree(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyTree(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = copyTree(e)
		}
		return a
	}
	return v
}
