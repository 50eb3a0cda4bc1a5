package core

import (
	"context"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// The tasks extension of 2026-07-28 (io.modelcontextprotocol/tasks,
// SEP-2663), on the stateless path. The revision's table says which
// requests may run as tasks (protocol.Method.TaskExtension) and which methods
// need the extension (protocol.Method.Extension); Spec.TaskRules how its tasks
// differ from 2025-11-25's. The server decides which calls become tasks:
// one whose tool supports tasks, from a client that declares the
// extension, and that is still running after the task delay. tasks/get
// shows a task with its result, error or pending input inlined;
// tasks/update answers its input; tasks/cancel is acknowledged.

// holderOwner owns the tasks of unauthenticated requests: whoever holds a
// task's id (128 random bits) may follow it, as SEP-2663 allows where
// there is no authorization context. A principal's tasks are its own.
const holderOwner = "holder"

// extensionOwner is whose an extension task of this request is.
func extensionOwner(ctx context.Context) string {
	if o := CallerFrom(ctx).Owner; o != "" {
		return "principal:" + o
	}
	return holderOwner
}

// declares reports whether client capabilities declare an extension.
func declares(caps *mcp.ClientCapabilities, ext string) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[ext]
	return ok
}

// missingExtension is -32021 for a request that needs an extension the
// client did not declare.
func missingExtension(ext string) *wire.Error {
	return peer.MissingCapability(&mcp.ClientCapabilities{Extensions: map[string]mcp.JSONObject{ext: {}}})
}

// serverDirected serves a request that may run as a task of an extension:
// ok is false where it is an ordinary call (the tool does not run as a
// task, or the client did not declare the extension and the tool does not
// need it). release is the request's in-flight slot; a task takes it over.
func (s *Server) serverDirected(ctx context.Context, c *call) (reply []byte, code int, ok bool) {
	spec, m, msg, p, release := c.spec, c.m, c.msg, c.peer, &c.release
	support, declared := s.taskSupport(msg)
	if !declared || (support != taskOptional && support != taskRequired) {
		return nil, 0, false
	}
	if !declares(p.caps, m.TaskExtension) {
		if support == taskRequired {
			reply, code = reject(msg.ID, missingExtension(m.TaskExtension))
			return reply, code, true
		}
		return nil, 0, false
	}
	type outcome struct {
		result wire.Encoder
		err    error
	}
	// The call runs detached from the request, which ends when the task
	// is returned; until then, the client going away cancels it.
	ttl := DefaultTaskTTL
	tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ttl)
	ended := make(chan outcome, 1)
	go func() {
		r, err := s.call(peer.With(tctx, p), msg, spec)
		ended <- outcome{r, err}
	}()
	answer := func(o outcome) ([]byte, int, bool) {
		cancel()
		reply, code := s.answerCall(c, o.result, o.err)
		return reply, code, true
	}
	timer := time.NewTimer(s.cfg.taskDelay)
	defer timer.Stop()
	select {
	case o := <-ended:
		return answer(o)
	case <-ctx.Done():
		cancel()
		return answer(<-ended)
	case <-s.stop:
		cancel()
		return answer(<-ended)
	case <-timer.C:
	}
	now := time.Now()
	t := &task{id: newTaskID(), owner: extensionOwner(ctx), client: CallerFrom(ctx).Key, method: msg.Method, spec: spec, ext: m.TaskExtension,
		created: now, updated: now, ttl: ttl, srv: s, local: true, status: mcp.TaskStatusWorking, cancel: cancel, done: make(chan struct{})}
	p.mu.Lock()
	if len(p.rounds.needed) > 0 { // it asked for input first: an input-required result
		p.mu.Unlock()
		return answer(<-ended)
	}
	if e := s.addTask(t); e != nil {
		p.mu.Unlock()
		cancel()
		<-ended // the call holds the request's in-flight slot until it returns
		reply, code := reject(msg.ID, e)
		return reply, code, true
	}
	p.task = t // from now on it asks through the task
	p.mu.Unlock()
	s.changed(t, false) // saved before it is returned: tasks/get finds it at once
	r := *release
	*release = nil
	s.runTask(tctx, t, m, r, func() (wire.Encoder, error) { o := <-ended; return o.result, o.err })
	return s.encodeResult(spec, asTask(m), msg.ID, t.createdResult()), 0, true
}

// extensionTaskRequest serves tasks/get, tasks/update and tasks/cancel of
// the extension (m.Extension); ok is false for any other method.
func (s *Server) extensionTaskRequest(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message) (reply []byte, code int, ok bool) {
	switch msg.Method {
	case mcp.MethodGetTask, mcp.MethodUpdateTask, mcp.MethodCancelTask:
	default:
		return nil, 0, false
	}
	params, _ := msg.Params.(map[string]any)
	id, _ := params["taskId"].(string)
	t, found := s.lookupTask(extensionOwner(ctx), m.Extension, id)
	if !found {
		reply, code = reject(msg.ID, unknownTask(id))
		return reply, code, true
	}
	var result wire.Encoder
	switch msg.Method {
	case mcp.MethodGetTask:
		result = t.state()
	case mcp.MethodCancelTask:
		t, e := s.cancelTask(ctx, spec, t)
		if e != nil {
			reply, code = reject(msg.ID, e)
			return reply, code, true
		}
		result = t.cancelledResult()
	case mcp.MethodUpdateTask:
		t.mu.Lock()
		waits := t.local || t.terminal()
		t.mu.Unlock()
		responses, _ := params["inputResponses"].(map[string]any)
		switch {
		case waits:
			t.answer(responses)
		case !s.relayTask(taskAnswer, id, t.owner, responses):
			// Its record is here, its wait for input is in the process
			// that runs it: an acknowledgement would lose the answers.
			reply, code = reject(msg.ID, elsewhere(id))
			return reply, code, true
		}
		result = &mcp.UpdateTaskResult{}
	}
	return s.encodeResult(spec, m, msg.ID, result), 0, true
}
