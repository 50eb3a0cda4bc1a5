package core

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// How a task is shown, once for both kinds: the canonical results hold
// what 2025-11-25 and the tasks extension of 2026-07-28 say of a task
// (ttl and ttlMs, the nested task and the flat one, the inlined result),
// and each revision's projection keeps its own.

// view is the task as the protocol shows it.
func (t *task) view() mcp.Task {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.viewLocked()
}

func (t *task) viewLocked() mcp.Task {
	ttl := t.ttl.Milliseconds()
	poll := taskPollInterval.Milliseconds()
	return mcp.Task{
		TaskID: t.id, Status: t.status, StatusMessage: t.message,
		CreatedAt: t.created.UTC().Format(time.RFC3339Nano), LastUpdatedAt: t.updated.UTC().Format(time.RFC3339Nano),
		TTL: &ttl, PollInterval: &poll, TTLMs: &ttl, PollIntervalMs: &poll,
	}
}

// createdResult answers the request that started the task: the task,
// nested (2025-11-25) and flat (the extension, resultType "task").
func (t *task) createdResult() *mcp.CreateTaskResult {
	v := t.view()
	return &mcp.CreateTaskResult{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage, CreatedAt: v.CreatedAt,
		LastUpdatedAt: v.LastUpdatedAt, TTLMs: v.TTLMs, PollIntervalMs: v.PollIntervalMs, Task: &v}
}

// details are what the extension inlines of a task: its pending input
// requests, its result once completed, its error once failed. Held with
// t.mu.
func (t *task) detailsLocked() (reqs mcp.InputRequests, result mcp.JSONObject, e *mcp.Error) {
	switch {
	case t.status == mcp.TaskStatusInputRequired:
		for k, i := range t.input.pending {
			r, err := mcp.DecodeInputRequest(map[string]any{"method": i.method, "params": i.params}, t.spec.Index)
			if err != nil {
				continue // asked by this server, so decodable; never shown half
			}
			if reqs == nil {
				reqs = mcp.InputRequests{}
			}
			reqs[k] = r
		}
	case t.status == mcp.TaskStatusCompleted && len(t.result) > 0:
		if v, err := jsontree.Parse(t.result); err == nil {
			result, _ = v.(map[string]any)
		}
	case t.status == mcp.TaskStatusFailed && t.err != nil:
		e = &mcp.Error{Code: int64(t.err.Code), Message: t.err.Message, Data: t.err.Data}
	}
	return reqs, result, e
}

// state answers tasks/get.
func (t *task) state() *mcp.GetTaskResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := t.viewLocked()
	reqs, result, e := t.detailsLocked()
	return &mcp.GetTaskResult{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage, CreatedAt: v.CreatedAt,
		LastUpdatedAt: v.LastUpdatedAt, TTL: v.TTL, PollInterval: v.PollInterval, TTLMs: v.TTLMs, PollIntervalMs: v.PollIntervalMs,
		InputRequests: reqs, Result: result, Error: e}
}

// statusParams are the params of notifications/tasks/status: the task as
// tasks/get shows it.
func (t *task) statusParams() *mcp.TaskStatusNotificationParams {
	g := t.state()
	return &mcp.TaskStatusNotificationParams{TaskID: g.TaskID, Status: g.Status, StatusMessage: g.StatusMessage, CreatedAt: g.CreatedAt,
		LastUpdatedAt: g.LastUpdatedAt, TTL: g.TTL, PollInterval: g.PollInterval, TTLMs: g.TTLMs, PollIntervalMs: g.PollIntervalMs,
		InputRequests: g.InputRequests, Result: g.Result, Error: g.Error}
}

// asTask is the row of a method whose answer is a task.
func asTask(m protocol.Method) protocol.Method {
	m.Result, m.Response = m.TaskResult, ""
	return m
}

// unknownTask is the error for a task id the caller has no task of.
func unknownTask(id string) *wire.Error {
	return &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: no task %q", id),
		Data: map[string]any{"field": "/params/taskId", "reason": "no such task"}}
}

// elsewhere is the error for a request that only the process running the
// task can serve.
func elsewhere(id string) *wire.Error {
	return &wire.Error{Code: wire.CodeInternalError,
		Message: "Internal error: another server of this deployment runs the task; send the request where its Mcp-Name header (the task id) routes it",
		Data:    map[string]any{"taskId": id}}
}

// cancelTask cancels a task (tasks/cancel, both kinds) and returns it as
// it is then. One that ended already is acknowledged where the revision's
// task rules say so (the extension), else it is -32602 (2025-11-25); one
// that another process runs is cancelled there, through the relay, and
// read back from the store once it says so (without a relay, or when the
// other process does not answer in time, -32603 names the task).
func (s *Server) cancelTask(ctx context.Context, spec *protocol.Spec, t *task) (*task, *wire.Error) {
	t.mu.Lock()
	switch {
	case t.terminal():
		status := t.status
		t.mu.Unlock()
		if spec.TaskRules().CancelEndedAcknowledged {
			return t, nil
		}
		return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: task %q is %s already", t.id, status),
			Data: map[string]any{"field": "/params/taskId", "reason": "the task has ended"}}
	case !t.local:
		t.mu.Unlock()
		return s.cancelElsewhere(ctx, t)
	}
	t.status, t.updated = mcp.TaskStatusCancelled, time.Now()
	t.cancel()
	t.input.drop()
	close(t.done)
	t.mu.Unlock()
	s.changed(t, true)
	return t, nil
}

// cancelElsewhere cancels a task another process runs: the relay carries
// the cancellation there, and the task's record says when it is done.
func (s *Server) cancelElsewhere(ctx context.Context, t *task) (*task, *wire.Error) {
	if !s.relayTask(taskCancel, t.id, t.owner, nil) {
		return nil, elsewhere(t.id)
	}
	ctx, cancel := context.WithTimeout(ctx, relayTaskWait)
	defer cancel()
	next, found := s.awaitStored(ctx, t.owner, t, relayTaskPoll)
	if !found {
		return nil, unknownTask(t.id)
	}
	next.mu.Lock()
	ended := next.terminal()
	next.mu.Unlock()
	if !ended {
		return nil, elsewhere(t.id)
	}
	return next, nil
}

// cancelledResult answers tasks/cancel: the task (2025-11-25), an empty
// acknowledgement (the extension).
func (t *task) cancelledResult() *mcp.CancelTaskResult {
	v := t.view()
	return &mcp.CancelTaskResult{TaskID: v.TaskID, Status: v.Status, StatusMessage: v.StatusMessage,
		CreatedAt: v.CreatedAt, LastUpdatedAt: v.LastUpdatedAt, TTL: v.TTL, PollInterval: v.PollInterval}
}
