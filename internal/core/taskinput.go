package core

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// A task of the tasks extension (2026-07-28) has no stream to send the
// client requests on: what it asks waits in the task, tasks/get shows it
// under inputRequests, tasks/update answers it, a key or several at a
// time, and the task waits in input_required until every key it asked is
// answered.

// inputResponse is the definition an answer to a task's input request is
// checked against.
const inputResponse = "InputResponse"

// maxTaskInputs bounds the requests one task has out at once.
const maxTaskInputs = 16

// taskInputs are the requests a task has out to the client, guarded by the
// task's mu.
type taskInputs struct {
	pending map[string]*taskInput // by the key the client sees
	used    map[string]bool       // every key the task has used: none is used twice (SEP-2663)
}

// taskInput is one request the task waits on.
type taskInput struct {
	method string
	params any           // in the revision's shape
	answer any           // the client's result, once it came
	done   chan struct{} // closed when it came, or when the task ended
}

// drop ends every wait (the task ended).
func (in *taskInputs) drop() {
	for k, i := range in.pending {
		close(i.done)
		delete(in.pending, k)
	}
}

// askClient asks the client for inputs through the task and waits for the
// answers, decoded by method; the task is input_required meanwhile. The
// keys the client sees are the method's, made unique over the task's life.
func (t *task) askClient(ctx context.Context, inputs map[string]peer.Input) (map[string]wire.Encoder, error) {
	names := make([]string, 0, len(inputs))
	for k := range inputs {
		names = append(names, k)
	}
	sort.Strings(names)
	t.mu.Lock()
	if t.terminal() {
		t.mu.Unlock()
		return nil, context.Canceled
	}
	if len(t.input.pending)+len(inputs) > maxTaskInputs {
		t.mu.Unlock()
		return nil, fmt.Errorf("server: a task may wait on at most %d client requests at once", maxTaskInputs)
	}
	if t.input.pending == nil {
		t.input.pending, t.input.used = map[string]*taskInput{}, map[string]bool{}
	}
	keys := make(map[string]string, len(inputs)) // the method's key -> the client's
	for _, name := range names {
		key := name
		for n := 2; t.input.used[key]; n++ {
			key = fmt.Sprintf("%s~%d", name, n)
		}
		t.input.used[key] = true
		params := any(map[string]any{})
		if in := inputs[name]; in.Params != nil {
			params = t.spec.Project(in.Params)
		}
		t.input.pending[key] = &taskInput{method: inputs[name].Method, params: params, done: make(chan struct{})}
		keys[name] = key
	}
	waits := make(map[string]*taskInput, len(keys))
	for name, key := range keys {
		waits[name] = t.input.pending[key]
	}
	changed := t.status != mcp.TaskStatusInputRequired
	t.status, t.updated = mcp.TaskStatusInputRequired, time.Now()
	t.mu.Unlock()
	if changed {
		t.srv.changed(t, true)
	}

	// However the wait ends, what it asked stops waiting, and the task is
	// working again once nothing else waits.
	defer func() {
		t.mu.Lock()
		for _, key := range keys {
			if w := t.input.pending[key]; w != nil {
				close(w.done)
				delete(t.input.pending, key)
			}
		}
		back := len(t.input.pending) == 0 && t.status == mcp.TaskStatusInputRequired
		if back {
			t.status, t.updated = mcp.TaskStatusWorking, time.Now()
		}
		t.mu.Unlock()
		if back {
			t.srv.changed(t, true)
		}
	}()
	out := make(map[string]wire.Encoder, len(waits))
	for _, name := range names {
		w := waits[name]
		select {
		case <-w.done:
		case <-ctx.Done():
			return out, ctx.Err()
		}
		t.mu.Lock()
		answer := w.answer
		t.mu.Unlock()
		if answer == nil {
			return out, context.Canceled // the task ended
		}
		r, err := mcp.DecodeResult(w.method, answer, t.spec.Index)
		if err != nil { // answer lets only decodable ones through
			return out, fmt.Errorf("input %q: the client's answer is not a %s result: %w", name, w.method, err)
		}
		out[name] = r
	}
	return out, nil
}

// answer gives the task the client's answers (tasks/update); keys it does
// not wait on (never asked, answered already) are ignored, as SEP-2663
// says, and so is an answer that is no InputResponse of the revision or
// not one of its request's kind (the key waits on). The task stays
// input_required while other keys wait.
func (t *task) answer(responses map[string]any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range responses {
		w := t.input.pending[k]
		if w == nil || w.answer != nil || v == nil {
			continue
		}
		if err := t.spec.Validate(inputResponse, v); err != nil {
			t.srv.log.Debug("task: an answer that is no input response is ignored", "task", t.id, "key", k, "err", err)
			continue
		}
		if _, err := mcp.DecodeResult(w.method, v, t.spec.Index); err != nil {
			t.srv.log.Debug("task: an answer of another kind than its request is ignored", "task", t.id, "key", k, "method", w.method, "err", err)
			continue
		}
		w.answer = v
		delete(t.input.pending, k)
		close(w.done)
	}
}
