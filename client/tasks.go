package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
)

// Tasks (2025-11-25): a tool call that runs on by itself on the server.
// StartTool starts it, the typed GetTask, ListTasks and CancelTask follow
// it, ToolResult fetches what the call answered.

// StartTool calls a tool as a task: the server answers at once with the
// task (its id, status, ttl), and the call runs on. ttl is how long the
// server should keep it (0: its default). The server must declare
// tasks.requests.tools.call, and the tool taskSupport optional or
// required.
func (s *Session) StartTool(ctx context.Context, params *mcp.CallToolRequestParams, ttl time.Duration) (*mcp.Task, error) {
	spec := s.currentSpec()
	m, ok := spec.Method(mcp.MethodCallTool)
	if !ok || m.TaskResult == "" {
		return nil, fmt.Errorf("client: revision %s has no tasks of tools/call", spec.Revision)
	}
	tree, _ := spec.Project(params).(map[string]any)
	if tree == nil {
		tree = map[string]any{}
	}
	task := map[string]any{}
	if ttl > 0 {
		task["ttl"] = ttl.Milliseconds()
	}
	tree["task"] = task
	m.Result, m.Response = m.TaskResult, "" // the answer is the task
	r := s.roundTrip(ctx, spec, m, tree)
	if r.err != nil {
		return nil, r.err
	}
	res := new(mcp.CreateTaskResult)
	if err := res.DecodeValue(r.result, spec.Index); err != nil {
		return nil, schemaViolation(mcp.MethodCallTool, "/result", err, nil)
	}
	if res.Task == nil {
		return nil, schemaViolation(mcp.MethodCallTool, "/result/task", errors.New("the task is missing"), nil)
	}
	return res.Task, nil
}

// ToolResult waits for a task started by StartTool to end (tasks/result)
// and returns what the tool call answered, checked as a tools/call result;
// a call that failed returns its JSON-RPC error.
func (s *Session) ToolResult(ctx context.Context, taskID string) (*mcp.CallToolResult, error) {
	spec := s.currentSpec()
	m, ok := spec.Method(mcp.MethodGetTaskPayload)
	call, _ := spec.Method(mcp.MethodCallTool)
	if !ok {
		return nil, fmt.Errorf("client: revision %s has no tasks/result", spec.Revision)
	}
	m.Result, m.Response = call.Result, "" // the payload is the call's result
	r := s.roundTrip(ctx, spec, m, map[string]any{"taskId": taskID})
	if r.err != nil {
		return nil, r.err
	}
	res, err := s.decodeResult(spec, call, r.result)
	if err != nil {
		return nil, err
	}
	out, ok := res.(*mcp.CallToolResult)
	if !ok {
		return nil, fmt.Errorf("client: tasks/result answered %T", res)
	}
	return out, nil
}
