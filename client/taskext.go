package client

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Bounds of following a task of the tasks extension: the server's poll
// interval, within these.
const (
	minTaskPoll = 10 * time.Millisecond
	maxTaskPoll = 30 * time.Second
)

// followTask follows a task the server answered a request with (the tasks
// extension of 2026-07-28, WithTasks) to its end: tasks/get at the
// server's poll interval; each question of the task answered once, with
// the client's handlers, through tasks/update; the result inlined once it
// completed, checked and decoded as the request's own, or the JSON-RPC
// error of a failed task. When ctx ends first, the task is cancelled.
func (s *Session) followTask(ctx context.Context, spec *protocol.Spec, m protocol.Method, created map[string]any) (wire.Encoder, error) {
	id, _ := created["taskId"].(string)
	get, okGet := spec.Method(mcp.MethodGetTask)
	update, okUpdate := spec.Method(mcp.MethodUpdateTask)
	if !okGet || !okUpdate {
		return nil, fmt.Errorf("client: %s: the server answered with a task, which revision %s cannot follow", m.Name, spec.Revision)
	}
	answered := map[string]bool{}
	task := created
	for {
		switch task["status"] {
		case string(mcp.TaskStatusCompleted):
			result := task["result"]
			if err := spec.Validate(m.Result, result); err != nil {
				v := schemaViolation(m.Name, "/result/result", err, nil)
				s.report(v)
				return nil, v
			}
			return s.decodeResult(spec, m, result)
		case string(mcp.TaskStatusFailed):
			e, err := wire.ErrorOf(task["error"])
			if err != nil {
				return nil, fmt.Errorf("client: %s: task %s failed without a valid error: %v", m.Name, id, err)
			}
			return nil, e
		case string(mcp.TaskStatusCancelled):
			return nil, fmt.Errorf("client: %s: task %s was cancelled: %v", m.Name, id, task["statusMessage"])
		case string(mcp.TaskStatusInputRequired):
			if err := s.answerTask(ctx, spec, update, id, task["inputRequests"], answered); err != nil {
				return nil, fmt.Errorf("client: %s: task %s: %w", m.Name, id, err)
			}
		}
		timer := time.NewTimer(pollInterval(task))
		select {
		case <-ctx.Done():
			timer.Stop()
			s.cancelTask(spec, id)
			return nil, ctx.Err()
		case <-timer.C:
		}
		tree, _, err := s.statelessRounds(ctx, spec, get, map[string]any{"taskId": id})
		if err != nil {
			if ctx.Err() != nil {
				s.cancelTask(spec, id)
			}
			return nil, err
		}
		task, _ = tree.(map[string]any)
	}
}

// answerTask answers the questions of a task not answered yet.
func (s *Session) answerTask(ctx context.Context, spec *protocol.Spec, update protocol.Method, id string, requests any, answered map[string]bool) error {
	reqs, _ := requests.(map[string]any)
	fresh := pending(reqs, answered)
	if len(fresh) == 0 {
		return nil
	}
	answers, err := s.answerInputs(ctx, spec, fresh)
	if err != nil {
		return err
	}
	if _, _, err := s.statelessRounds(ctx, spec, update, map[string]any{"taskId": id, "inputResponses": answers}); err != nil {
		return err
	}
	for k := range fresh {
		answered[k] = true
	}
	return nil
}

// pending returns the questions of reqs not answered yet. It forgets the
// answered ones the server no longer lists, so that the set is bounded by
// one poll's questions however many a server adds, poll after poll; a
// question listed again after it was dropped is a new one.
func pending(reqs map[string]any, answered map[string]bool) map[string]any {
	for k := range answered {
		if _, ok := reqs[k]; !ok {
			delete(answered, k)
		}
	}
	fresh := map[string]any{}
	for k, r := range reqs {
		if !answered[k] {
			fresh[k] = r
		}
	}
	return fresh
}

// cancelTask tells the server the client gave a task up, in the
// background and bounded.
func (s *Session) cancelTask(spec *protocol.Spec, id string) {
	m, ok := spec.Method(mcp.MethodCancelTask)
	if !ok {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if _, _, err := s.statelessRounds(ctx, spec, m, map[string]any{"taskId": id}); err != nil {
			s.c.log.Debug("client: tasks/cancel not sent", "task", id, "err", err)
		}
	}()
}

// pollInterval is the server's suggested interval, within bounds.
func pollInterval(task map[string]any) time.Duration {
	ms, err := jsontree.Int(task["pollIntervalMs"])
	if err != nil || ms <= 0 {
		return time.Second
	}
	return min(max(time.Duration(ms)*time.Millisecond, minTaskPoll), maxTaskPoll)
}
