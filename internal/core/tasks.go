package core

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/cursor"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Tasks: a request that runs on by itself after it has been answered
// with its task. Under 2025-11-25 the client asks for one (params.task),
// follows it with tasks/get or notifications/tasks/status and fetches
// what the request would have answered with tasks/result; under the tasks
// extension of 2026-07-28 the server decides (taskext.go). The core runs
// them for any handler; a handler says which tools may or must run as
// tasks (TaskSupporter; package app from each tool's
// execution.taskSupport). This file holds the table both kinds share,
// and 2025-11-25's methods.

// TaskSupporter is implemented by handlers whose tools run as tasks.
type TaskSupporter interface {
	// RunsTasks reports whether the handler declared the tasks
	// capability: without it a task-augmented request is served as a
	// plain one, as the spec asks.
	RunsTasks() bool
	// TaskSupport is a tool's taskSupport: "optional", "required", or
	// anything else for none.
	TaskSupport(tool string) string
}

// taskSupport values of a tool.
const (
	taskOptional = "optional"
	taskRequired = "required"
)

// Bounds of the task table.
const (
	// DefaultTaskTTL is how long a task is kept when the client asks for
	// no TTL, and the most it may ask for.
	DefaultTaskTTL = time.Hour
	// maxRunningPerClient bounds the tasks one client (Caller.Key) runs at
	// once; maxRunning all of them; maxKeptPerOwner the finished ones
	// kept per user (the oldest go first).
	maxRunningPerClient = 32
	maxRunning          = 1024
	maxKeptPerOwner     = 100
	// maxKeptBytesPerOwner bounds the results and errors of the finished
	// tasks kept per user, in memory and in a durable store (newest
	// first): 100 results of maxTaskResult would be 400 MiB.
	maxKeptBytesPerOwner = 64 << 20
	// maxTaskResult bounds the result a task keeps, in bytes.
	maxTaskResult    = 4 << 20
	taskPollInterval = time.Second
	taskPageSize     = 50
	// defaultTaskLease is how long a running task's record counts as
	// running without a heartbeat (other processes on the same store take
	// it for dead after); the heartbeat is a third of it.
	defaultTaskLease = 90 * time.Second
)

// task is one request running as a task.
type task struct {
	id, owner string
	client    string // Caller.Key, for the running cap
	method    string
	spec      *protocol.Spec
	created   time.Time
	ttl       time.Duration
	srv       *Server
	sess      *Session // the session to tell of status changes (2025-11-25 tasks this process runs)
	// ext is the extension whose task it is (the tasks extension of
	// 2026-07-28: the method table's TaskExtension), "" for a task of
	// 2025-11-25: neither kind is the other's to see.
	ext string
	// local: this process runs the task (else its record came from the
	// store: another process runs it, or ran it).
	local bool

	saveMu   sync.Mutex  // orders the saves and notifications of one task
	retrying atomic.Bool // a failed save is being tried again (retrySave)

	mu      sync.Mutex
	status  mcp.TaskStatus
	message string
	updated time.Time
	asking  int                // requests to the client outstanding
	result  []byte             // the result, projected, completed and encoded
	err     *wire.Error        // or the error
	cancel  context.CancelFunc // set where local
	done    chan struct{}
	// The extension's tasks ask the client through tasks/get and
	// tasks/update (taskinput.go); 2025-11-25's send their requests on an
	// open tasks/result response (taskstream.go).
	input   taskInputs
	streams taskStreams
}

func (t *task) terminal() bool { return isTerminal(t.status) }

// isTerminal reports whether a task in status has ended.
func isTerminal(status mcp.TaskStatus) bool {
	return status == mcp.TaskStatusCompleted || status == mcp.TaskStatusFailed || status == mcp.TaskStatusCancelled
}

// tasks is the server's table of the tasks this process runs or ran; a
// TaskStore keeps the records of all.
type tasks struct {
	mu    sync.Mutex
	byID  map[string]*task
	swept time.Time
}

// taskOwner is whose a task is: the principal of the session or of the
// request, or the session itself without one (then no other session sees
// it); ok is false where there is neither (a stateless server's request),
// and then there are no tasks.
func taskOwner(ctx context.Context, sess *Session) (string, bool) {
	switch {
	case sess.caller.Owner != "":
		return "principal:" + sess.caller.Owner, true
	case CallerFrom(ctx).Owner != "":
		return "principal:" + CallerFrom(ctx).Owner, true
	case sess.id != "":
		return "session:" + sess.id, true
	}
	return "", false
}

// record is the task as its store keeps it.
func (t *task) record() TaskRecord {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := TaskRecord{ID: t.id, Owner: t.owner, Share: t.keeper(), Method: t.method, Revision: t.spec.Revision, Status: string(t.status), Message: t.message,
		Created: t.created, Updated: t.updated, TTL: t.ttl}
	r.Result = t.result
	if t.err != nil {
		r.Error, _ = jsontree.Marshal(t.err.Object())
	}
	return r
}

// changed saves the task's record as it is now (a durable store) and
// tells whoever follows it. Saves do not overlap (saveMu), so the last
// one holds the newest state; a notification may repeat the one before.
func (s *Server) changed(t *task, tell bool) {
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	if s.cfg.taskStore != nil {
		r, err := s.saveRecord(t)
		switch {
		case err != nil:
			s.log.Error("task store: save; trying again", "task", t.id, "err", err)
			s.retrySave(t)
		case isTerminal(mcp.TaskStatus(r.Status)):
			s.trimStore(r.Share)
		}
	}
	if tell {
		t.tell()
	}
}

// retrySave saves t's record again, as it is then, until its store takes
// it (backing off from retryFirst to retryMost), the task's TTL passes,
// or the server closes. A running task's heartbeat would save it again
// anyway; a finished one's does not, and without this a blip of the
// store would leave its record running, to be taken for failed by the
// other processes once the lease passed, and its result lost with this
// process.
func (s *Server) retrySave(t *task) {
	if !t.retrying.CompareAndSwap(false, true) {
		return // one retrier a task: it saves the newest record
	}
	deadline := time.Now().Add(time.Hour)
	if t.ttl > 0 {
		deadline = t.created.Add(t.ttl) // the store drops the record then anyway
	}
	s.spawn(&t.retrying, func() { // a closed server retries nothing
		for wait := retryFirst; time.Now().Before(deadline); wait = min(2*wait, retryMost) {
			last := false
			select {
			case <-s.stop:
				last = true // one more try on the way out, with the record as it is then
			case <-time.After(wait):
			}
			if s.saveAgain(t) { // which lets go of retrying
				return
			}
			if last {
				break
			}
		}
		t.saveMu.Lock() // as saveAgain: a save that fails from here on starts a retrier of its own
		t.retrying.Store(false)
		t.saveMu.Unlock()
		s.log.Error("task store: gave up saving the task", "task", t.id)
	})
}

// saveAgain is one try of retrySave; it reports whether the store took
// the record.
func (s *Server) saveAgain(t *task) bool {
	t.saveMu.Lock()
	r, err := s.saveRecord(t)
	if err == nil {
		// Under saveMu: a save that fails from here on starts a
		// retrier of its own.
		t.retrying.Store(false)
	}
	t.saveMu.Unlock()
	if err != nil {
		return false
	}
	s.log.Info("task store: saved after a failure", "task", t.id)
	if isTerminal(mcp.TaskStatus(r.Status)) {
		s.trimStore(r.Share)
	}
	return true
}

// saveRecord saves t's record as it is now, for 5 s at most; t.saveMu
// is held.
func (s *Server) saveRecord(t *task) (TaskRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := t.record()
	return r, s.cfg.taskStore.Save(ctx, r)
}

// How retrySave backs off.
const (
	retryFirst = 250 * time.Millisecond
	retryMost  = 30 * time.Second
)

// fromRecord is a task as its store kept it, which this process does not
// run: one whose record says it still runs, but whose heartbeat stopped
// longer than the lease ago, ended with the process that ran it.
func (s *Server) fromRecord(r TaskRecord) *task {
	spec := generated.Lookup(r.Revision)
	if spec == nil {
		spec = s.sessionSpecs[len(s.sessionSpecs)-1]
	}
	t := &task{id: r.ID, owner: r.Owner, method: r.Method, spec: spec, created: r.Created, updated: r.Updated, ttl: r.TTL,
		srv: s, status: mcp.TaskStatus(r.Status), message: r.Message, result: r.Result, done: make(chan struct{})}
	if m, ok := spec.Method(r.Method); ok {
		t.ext = m.TaskExtension
	}
	if len(r.Error) > 0 {
		if tree, err := jsontree.Parse(r.Error); err == nil {
			t.err, _ = wire.ErrorOf(tree)
		}
	}
	if !t.terminal() && time.Since(r.Updated) > s.taskLease() {
		t.status, t.message = mcp.TaskStatusFailed, "the server that ran the task stopped"
		t.err = &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: " + t.message}
	}
	if t.terminal() {
		close(t.done)
	}
	return t
}

func (s *Server) taskLease() time.Duration {
	if s.cfg.taskLease > 0 {
		return s.cfg.taskLease
	}
	return defaultTaskLease
}

// lookupTask finds a task of owner and of the kind ext (see task.ext), in
// memory or in the store; another owner's, or another kind, is unknown
// too.
func (s *Server) lookupTask(owner, ext, id string) (*task, bool) {
	s.tasks.mu.Lock()
	s.sweepTasksLocked(time.Now())
	t, ok := s.tasks.byID[id]
	s.tasks.mu.Unlock()
	if ok {
		return t, t.owner == owner && t.ext == ext
	}
	if s.cfg.taskStore == nil {
		return nil, false
	}
	t, err := s.storedTask(context.Background(), owner, id)
	if err != nil {
		if !errors.Is(err, ErrTaskNotFound) {
			s.log.Error("task store: load", "task", id, "err", err)
		}
		return nil, false
	}
	return t, t.ext == ext
}

// storedTask reads a task of owner from the store: ErrTaskNotFound when
// it is not there, is another owner's, or has expired.
func (s *Server) storedTask(ctx context.Context, owner, id string) (*task, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	r, err := s.cfg.taskStore.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if r.Owner != owner || time.Now().After(r.Expires()) {
		return nil, ErrTaskNotFound
	}
	return s.fromRecord(r), nil
}

// sweepTasksLocked drops the tasks past their TTL from memory and, in the
// background, from the store; beyond maxKeptPerOwner finished tasks of a
// user, the oldest go first.
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
	finished := map[string][]*task{}
	for id, t := range ts.byID {
		t.mu.Lock()
		expired, ended := now.Sub(t.created) > t.ttl, t.terminal()
		if expired && !ended && t.cancel != nil {
			t.cancel()
		}
		t.mu.Unlock()
		if expired {
			delete(ts.byID, id)
		} else if ended {
			finished[t.keeper()] = append(finished[t.keeper()], t)
		}
	}
	for _, done := range finished {
		sort.Slice(done, func(i, j int) bool { return done[i].created.After(done[j].created) })
		var bytes int64
		for n, t := range done {
			t.mu.Lock()
			bytes += t.size()
			t.mu.Unlock()
			if n >= maxKeptPerOwner || bytes > maxKeptBytesPerOwner {
				delete(ts.byID, t.id) // a durable store trims its copy as it saves (trimStore)
			}
		}
	}
}

// size is what a finished task keeps, in bytes: its result or error.
func (t *task) size() int64 {
	n := int64(len(t.result))
	if t.err != nil {
		n += int64(len(t.err.Message)) + 64
	}
	return n
}

// trimStore bounds the finished tasks a durable store keeps of one share
// (task.keeper) as the table bounds them in memory (the store keeps them
// across restarts and replicas, so it trims by its own records).
func (s *Server) trimStore(share string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.cfg.taskStore.Trim(ctx, share, maxKeptPerOwner, maxKeptBytesPerOwner); err != nil {
		s.log.Error("task store: trim", "err", err)
	}
}

// keeper is whose share of the finished tasks kept in memory a task counts
// against: its principal's, or, for the tasks of a session without one or
// of nobody (holderOwner), its client's, so that one anonymous client
// cannot push out everyone's, nor keep a share in each of its thousand
// sessions.
func (t *task) keeper() string {
	if t.owner == holderOwner || strings.HasPrefix(t.owner, "session:") {
		return "client:" + t.client
	}
	return t.owner
}

// dropSessionTasks forgets the tasks owned by a session that ended: no
// one can reach them any more.
func (s *Server) dropSessionTasks(session string) {
	owner := "session:" + session
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	for id, t := range s.tasks.byID {
		if t.owner != owner {
			continue
		}
		t.mu.Lock()
		if !t.terminal() && t.cancel != nil {
			t.cancel()
		}
		t.mu.Unlock()
		delete(s.tasks.byID, id)
	}
}

// taskSupport is the taskSupport of the tool a tools/call names, and
// whether the handler runs tasks at all.
func (s *Server) taskSupport(msg *jsonrpc.Message) (support string, declared bool) {
	ts := s.taskRunner
	if ts == nil || !ts.RunsTasks() {
		return "", false
	}
	params, _ := msg.Params.(map[string]any)
	name, _ := params["name"].(string)
	return ts.TaskSupport(name), true
}

// startTask answers a task-augmented request with its task and runs it;
// release gives back the request's in-flight slots when the task ends.
func (sess *Session) startTask(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message, meta map[string]any, owner string, release func()) []byte {
	srv := sess.srv
	ttl := DefaultTaskTTL
	if n, err := jsontree.Int(meta["ttl"]); err == nil && n > 0 && n < ttl.Milliseconds() { // compared in ms: n ms as a Duration can overflow
		ttl = time.Duration(n) * time.Millisecond
	}
	now := time.Now()
	t := &task{id: newTaskID(), owner: owner, client: CallerFrom(ctx).Key, method: msg.Method, spec: spec, created: now, updated: now, ttl: ttl,
		srv: srv, sess: sess, local: true, status: mcp.TaskStatusWorking, done: make(chan struct{})}
	// The task runs on its own: not cancelled with its request, ended by
	// tasks/cancel, its TTL, or the server's end.
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	t.cancel = cancel
	if e := srv.addTask(t); e != nil {
		cancel()
		release()
		return jsonrpc.EncodeError(msg.ID, e)
	}
	srv.changed(t, false)

	p := &callPeer{srv: srv, sess: sess, spec: spec, token: progressToken(msg.Params), related: t.id, asking: t.ask, task: t}
	srv.runTask(tctx, t, m, release, func() (wire.Encoder, error) { return srv.call(peer.With(tctx, p), msg, spec) })
	return srv.encodeResult(spec, asTask(m), msg.ID, t.createdResult())
}

// addTask puts a task that starts in the table; the bounds on running
// tasks give a -32000 error instead. The caller saves its record (changed)
// before it returns the task, so that tasks/get finds it as soon as it is
// returned, runs it, and calls srv.wg.Done when it ends.
func (s *Server) addTask(t *task) *wire.Error {
	s.tasks.mu.Lock()
	s.sweepTasksLocked(t.created)
	running, mine := 0, 0
	for _, o := range s.tasks.byID {
		o.mu.Lock()
		if !o.terminal() {
			running++
			if o.client == t.client {
				mine++
			}
		}
		o.mu.Unlock()
	}
	if mine >= maxRunningPerClient || running >= maxRunning {
		s.tasks.mu.Unlock()
		return &wire.Error{Code: wire.CodeServerBusy, Message: fmt.Sprintf("Server busy: %d tasks run already; wait for one to end or cancel it", max(mine, running))}
	}
	if s.tasks.byID == nil {
		s.tasks.byID = map[string]*task{}
	}
	s.tasks.byID[t.id] = t
	s.wg.Add(1)
	s.tasks.mu.Unlock()
	return nil
}

// runTask runs a task that addTask put in the table until it ends (by
// itself, tasks/cancel, its TTL or the server's end: all cancel tctx),
// heartbeats its record meanwhile, records its end and gives back the
// request's in-flight slots (release).
func (s *Server) runTask(tctx context.Context, t *task, m protocol.Method, release func(), run func() (wire.Encoder, error)) {
	go func() {
		defer s.wg.Done()
		defer release()
		defer t.cancel()
		stopBeat := s.heartbeat(tctx, t)
		defer stopBeat()
		go func() {
			select {
			case <-s.stop:
				t.cancel()
			case <-tctx.Done():
			}
		}()
		result, err := run()
		t.finish(s, m, result, err)
	}()
}

// heartbeat refreshes a running task's record, so that other processes
// on the same store do not take it for dead.
func (s *Server) heartbeat(ctx context.Context, t *task) (stop func()) {
	if s.cfg.taskStore == nil {
		return func() {}
	}
	tick := time.NewTicker(s.taskLease() / 3)
	done := make(chan struct{})
	go func() {
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				t.mu.Lock()
				t.updated = time.Now()
				t.mu.Unlock()
				s.changed(t, false)
			case <-ctx.Done():
				return
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// ask counts the requests the task has out to the client: input_required
// while there is one.
func (t *task) ask(waiting bool) {
	t.mu.Lock()
	if waiting {
		t.asking++
	} else {
		t.asking--
	}
	to := mcp.TaskStatusWorking
	if t.asking > 0 {
		to = mcp.TaskStatusInputRequired
	}
	changed := !t.terminal() && t.status != to
	if changed {
		t.status, t.updated = to, time.Now()
	}
	t.mu.Unlock()
	if changed {
		t.srv.changed(t, true)
	}
}

// finish records the end of a task: completed, or failed (a JSON-RPC
// error, or a tool result with isError, which tasks/result still
// answers).
func (t *task) finish(srv *Server, m protocol.Method, result wire.Encoder, err error) {
	t.mu.Lock()
	if t.terminal() { // cancelled meanwhile
		t.mu.Unlock()
		return
	}
	switch {
	case err != nil:
		t.status, t.err = mcp.TaskStatusFailed, srv.wireError(t.method, err)
		t.message = t.err.Message
	case result == nil:
		t.status, t.err = mcp.TaskStatusFailed, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
	default:
		tree := t.spec.Project(result)
		b, err := jsontree.Marshal(tree)
		if err != nil {
			srv.log.Error("task: encoding the result", "task", t.id, "err", err)
			t.status, t.err = mcp.TaskStatusFailed, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
			break
		}
		if len(b) > maxTaskResult {
			t.status, t.err = mcp.TaskStatusFailed, &wire.Error{Code: wire.CodeInternalError, Message: fmt.Sprintf("Internal error: the result is larger than the %d bytes a task keeps", maxTaskResult)}
			break
		}
		t.status, t.result = mcp.TaskStatusCompleted, b
		if obj, _ := tree.(map[string]any); obj["isError"] == true && !t.spec.TaskRules().ToolErrorCompletes {
			t.status, t.message = mcp.TaskStatusFailed, "the tool reported an error"
		}
	}
	t.updated = time.Now()
	t.input.drop()
	close(t.done)
	t.mu.Unlock()
	srv.changed(t, true)
}

// tell sends notifications/tasks/status to the task's session, if it is
// still there, or, for a task without one (the extension's), to the listen
// streams that asked for it.
func (t *task) tell() {
	if t.sess == nil {
		if t.srv != nil {
			t.srv.tellListeners(t)
		}
		return
	}
	select {
	case <-t.sess.Done():
		return
	default:
	}
	if err := t.sess.Notify(context.Background(), mcp.MethodTaskStatus, t.statusParams()); err != nil && !errors.Is(err, ErrNoStream) {
		t.sess.srv.log.Debug("task status", "task", t.id, "err", err)
	}
}

func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "task_" + hex.EncodeToString(b)
}

// tasksOf serves what the core does of tasks: tasks/* and a
// task-augmented request (which then keeps the request's in-flight slot,
// *release, until it ends). served is false for a request the handler
// serves; where the handler runs no tasks, or there is no one to own
// them (a stateless server's request), everything is the handler's and a
// task param is ignored, as for a server without the capability.
func (sess *Session) tasksOf(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message, out Outbox, release *func()) (reply []byte, served bool) {
	switch msg.Method {
	case mcp.MethodGetTask, mcp.MethodGetTaskPayload, mcp.MethodListTasks, mcp.MethodCancelTask:
	default:
		if m.TaskResult == "" {
			return nil, false // not the tasks' business: nothing to look up
		}
	}
	srv := sess.srv
	support, declared := srv.taskSupport(msg)
	if !declared {
		return nil, false
	}
	params, _ := msg.Params.(map[string]any)
	meta, augmented := params["task"].(map[string]any)
	if m.TaskResult != "" && !augmented && support != taskRequired {
		return nil, false // the handler's, as it comes: no owner to look for
	}
	owner, owned := taskOwner(ctx, sess)
	if !owned {
		return nil, false
	}
	if m.TaskResult == "" {
		return sess.taskRequest(ctx, spec, m, msg, out, owner)
	}
	switch {
	case augmented && support != taskOptional && support != taskRequired:
		return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeMethodNotFound, Message: "Method not found: this tool does not run as a task (taskSupport forbidden)"}), true
	case augmented:
		r := *release
		*release = nil
		return sess.startTask(ctx, spec, m, msg, meta, owner, r), true
	case support == taskRequired:
		return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeMethodNotFound, Message: "Method not found: this tool runs only as a task (taskSupport required): send params.task"}), true
	}
	return nil, false
}

// taskRequest serves tasks/get, tasks/result, tasks/list and tasks/cancel
// of a session; ok is false for any other method. out is the stream of the
// request's response, where tasks/result has one: the task's own requests
// to the client go there while it is open, when the task is this session's.
func (sess *Session) taskRequest(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message, out Outbox, owner string) (reply []byte, ok bool) {
	srv := sess.srv
	params, _ := msg.Params.(map[string]any)
	id, _ := params["taskId"].(string)
	unknown := func() []byte { return jsonrpc.EncodeError(msg.ID, unknownTask(id)) }
	switch msg.Method {
	case mcp.MethodGetTask:
		t, found := srv.lookupTask(owner, "", id)
		if !found {
			return unknown(), true
		}
		return srv.encodeResult(spec, m, msg.ID, t.state()), true
	case mcp.MethodGetTaskPayload:
		t, found := srv.lookupTask(owner, "", id)
		if found && !t.local {
			t, found = srv.awaitStored(ctx, owner, t, taskPollInterval)
		}
		if !found {
			return unknown(), true
		}
		// The task's requests go on this response only in the session
		// the task came from: the client answers where it was asked, and
		// another session of the same owner knows nothing of the ids.
		if out != nil && t.sess == sess {
			defer t.openStream(out)()
		}
		select {
		case <-t.done:
		case <-ctx.Done():
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInternalError, Message: "Request cancelled: " + ctx.Err().Error()}), true
		}
		t.mu.Lock()
		result, terr, status := t.result, t.err, t.status
		t.mu.Unlock()
		switch {
		case terr != nil:
			return jsonrpc.EncodeError(msg.ID, terr), true
		case status == mcp.TaskStatusCancelled:
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: task %q was cancelled", id)}), true
		}
		// Decoded afresh: the related-task _meta goes on this answer only.
		var tree map[string]any
		if len(result) > 0 {
			v, _ := jsontree.Parse(result)
			tree, _ = v.(map[string]any)
		}
		tree = jsontree.WithMeta(tree, wire.MetaRelatedTask, map[string]any{"taskId": id})
		return srv.encodeTree(spec, m, msg.ID, tree), true
	case mcp.MethodListTasks:
		return srv.listTasks(ctx, spec, m, msg, owner), true
	case mcp.MethodCancelTask:
		t, found := srv.lookupTask(owner, "", id)
		if !found {
			return unknown(), true
		}
		t, e := srv.cancelTask(ctx, spec, t)
		if e != nil {
			return jsonrpc.EncodeError(msg.ID, e), true
		}
		return srv.encodeResult(spec, m, msg.ID, t.cancelledResult()), true
	}
	return nil, false
}

// awaitStored waits for a task that another process runs to end: nothing
// tells this one when it does, so its record is read again every interval (a store that fails meanwhile is asked again). It returns as
// soon as ctx ends too (the caller answers that); found is false when the
// record is gone (expired).
func (s *Server) awaitStored(ctx context.Context, owner string, t *task, every time.Duration) (_ *task, found bool) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-t.done:
			return t, true
		case <-ctx.Done():
			return t, true
		case <-tick.C:
		}
		next, err := s.storedTask(ctx, owner, t.id)
		if err == nil && next.ext != t.ext {
			err = ErrTaskNotFound
		}
		switch {
		case errors.Is(err, ErrTaskNotFound):
			return nil, false
		case err != nil:
			if ctx.Err() == nil {
				s.log.Warn("task store: load while waiting for a task", "task", t.id, "err", err)
			}
		default:
			t = next
		}
	}
}

// listTasks answers tasks/list: the owner's tasks, oldest first, a page
// at a time.
func (s *Server) listTasks(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message, owner string) []byte {
	params, _ := msg.Params.(map[string]any)
	c, _ := params["cursor"].(string)
	if c != "" {
		if _, err := cursor.Decode("tasks", c); err != nil {
			return jsonrpc.EncodeError(msg.ID, err.(*wire.Error)) // before the store is asked
		}
	}
	s.tasks.mu.Lock()
	s.sweepTasksLocked(time.Now())
	mine := map[string]*task{}
	for _, t := range s.tasks.byID {
		if t.owner == owner && t.ext == "" {
			mine[t.id] = t
		}
	}
	s.tasks.mu.Unlock()
	if store := s.cfg.taskStore; store != nil {
		records, err := store.List(ctx, owner)
		if err != nil {
			s.log.Error("task store: list", "err", err)
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the task store failed"})
		}
		now := time.Now()
		s.tasks.mu.Lock()
		for _, r := range records {
			if _, live := s.tasks.byID[r.ID]; !live && now.Before(r.Expires()) {
				if _, seen := mine[r.ID]; !seen {
					if t := s.fromRecord(r); t.ext == "" {
						mine[r.ID] = t
					}
				}
			}
		}
		s.tasks.mu.Unlock()
	}
	all := make([]*task, 0, len(mine))
	for _, t := range mine {
		all = append(all, t)
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].created.Equal(all[j].created) {
			return all[i].created.Before(all[j].created)
		}
		return all[i].id < all[j].id
	})
	page, next, _ := cursor.Page(all, "tasks", c, taskPageSize)
	res := &mcp.ListTasksResult{Tasks: make([]*mcp.Task, len(page)), NextCursor: next}
	for i, t := range page {
		v := t.view()
		res.Tasks[i] = &v
	}
	return s.encodeResult(spec, m, msg.ID, res)
}
