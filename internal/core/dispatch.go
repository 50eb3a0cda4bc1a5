package core

import (
	"context"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// call is one admitted request, whatever its revision or transport: the
// session's (Session.request) or a stateless revision's
// (Server.statelessRequest) admission makes it, and one dispatch serves it.
// What differs between revisions is data here: whether there is a session,
// the peer's way of asking the client, the revision's task rules.
type call struct {
	spec *protocol.Spec
	m    protocol.Method
	msg  *jsonrpc.Message
	sess *Session // nil: a request without a session
	peer *callPeer
	// release gives back the client's call slot; a task that the request
	// starts takes it over (and sets it to nil).
	release func()
}

// releaseSlot gives back the client's call slot, unless a task took it.
func (c *call) releaseSlot() {
	if c.release != nil {
		c.release()
	}
}

// dispatch serves an admitted request: the tasks the revision's rules
// make of it first, then the handler; code is the error code of an error
// answer, for a transport that gives it a status.
func (s *Server) dispatch(ctx context.Context, c *call) (reply []byte, code int) {
	if reply, code, ok := s.serveTasks(ctx, c); ok {
		return reply, code
	}
	if c.sess != nil {
		place, e := c.sess.roomFor(c.msg)
		if e != nil {
			return reject(c.msg.ID, e)
		}
		defer place() // after remember (answerCall) has kept the subscription
	}
	result, err := s.call(peer.With(ctx, c.peer), c.msg, c.spec)
	return s.answerCall(c, result, err)
}

// serveTasks serves what is the tasks' business: a session's 2025-11-25
// tasks (the client asks for one), or an extension's (its own methods, and
// calls the server makes tasks of where the revision's rules say so). ok
// is false for an ordinary call.
func (s *Server) serveTasks(ctx context.Context, c *call) (reply []byte, code int, ok bool) {
	if c.sess != nil {
		reply, ok := c.sess.tasksOf(ctx, c.spec, c.m, c.msg, c.peer.out, &c.release)
		// A tasks/result the client cancelled while it waited gets no
		// answer, as answerCall; a task-augmented call does (its task
		// runs on, and the client needs its id to reach it).
		if ok && c.msg.Method == mcp.MethodGetTaskPayload && c.peer.peerCancelled != nil && c.peer.peerCancelled.Load() {
			return nil, 0, true
		}
		return reply, 0, ok
	}
	if reply, code, ok := s.extensionTaskRequest(ctx, c.spec, c.m, c.msg); ok {
		return reply, code, true
	}
	if c.m.TaskResult != "" && c.spec.TaskRules().ServerDirected {
		return s.serverDirected(ctx, c)
	}
	return nil, 0, false
}

// answerCall is the answer to a call that returned: an input-required result
// when it waits for the client's input, nothing when the client cancelled
// it, its error, or its result (what it set for the session kept).
func (s *Server) answerCall(c *call, result wire.Encoder, err error) ([]byte, int) {
	p := c.peer
	p.ended.Store(true) // the handler returned: what a goroutine it left running sends goes nowhere
	if p.rounds != nil {
		if needed := p.pending(); len(needed) > 0 {
			return s.inputRequired(c.spec, c.msg.ID, p, needed), 0
		}
	}
	if p.peerCancelled != nil && p.peerCancelled.Load() {
		return nil, 0 // the client cancelled: no answer (spec: SHOULD NOT respond)
	}
	if err != nil {
		e := s.wireError(c.msg.Method, err)
		if c.spec.Stateless() {
			e = statelessError(e)
		}
		return reject(c.msg.ID, e)
	}
	if c.sess != nil {
		c.sess.remember(c.msg)
	}
	return s.encodeResult(c.spec, c.m, c.msg.ID, result), 0
}
