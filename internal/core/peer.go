package core

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// ErrStateless is returned when a stateless server is asked to send a
// request to the client.
var ErrStateless = errors.New("server: no session")

// callPeer is the peer.Peer of one call, whatever its revision: messages
// about the call go to the call's own stream when it has one. What
// differs between revisions is data: a call of a session may fall back on
// the session's stream and asks the client in round trips; a call without
// one (a stateless revision's request) carries its own log level and
// capabilities, and asks in input-required results (rounds).
type callPeer struct {
	srv  *Server
	sess *Session // nil: a request without a session
	spec *protocol.Spec
	out  Outbox
	// closeEarly ends the response carrying the call before the call ends
	// (nil: the transport cannot resume it).
	closeEarly StreamCloser
	token      wire.ID
	// related is the task the call runs as ("": none); asking is told
	// when it waits for the client and when it stops (input_required).
	related string
	asking  func(waiting bool)
	// peerCancelled is set when the client cancelled the call: it has most
	// likely closed the call's stream too.
	peerCancelled *atomic.Bool
	// ended is set when the call's handler has returned: a message sent
	// after (by a goroutine it left running) is refused, not sent on the
	// session's stream in place of the call's closed one: progress must
	// stop with the request, and its token means nothing to the client.
	ended atomic.Bool
	// level and caps are those of a request without a session, which
	// carries them itself; a session's are the session's.
	level mcp.LoggingLevel
	caps  *mcp.ClientCapabilities
	// rounds collects what the call asks the client when its revision has
	// no round trips (input-required results); nil where it has.
	rounds *inputRounds

	// mu guards task, and rounds' needed and calls (its binding and
	// answers are set by restore before the call runs).
	mu sync.Mutex
	// task is the task the call runs as: a session's task delivers the
	// call's messages on its open tasks/result responses; a call without a
	// session that became a task has no stream left, and asks through it.
	task *task
}

// inputRounds is what a call without round trips asked and was given.
type inputRounds struct {
	method  string
	binding stateBinding   // what a requestState of this request is bound to
	answers map[string]any // results the client gave, by key
	needed  map[string]peer.Input
	calls   int
}

func (p *callPeer) currentTask() *task {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.task
}

// errCallEnded is what a message about a call that has returned gets.
var errCallEnded = errors.New("core: the call has returned: nothing more is sent about it")

// send writes a message about the call on the call's stream; when that is
// gone (the client closed it) or was never there, on the session's
// stream. A call without a session has only its own, until it becomes a
// task.
func (p *callPeer) send(msg []byte) error {
	if p.ended.Load() {
		return errCallEnded
	}
	if p.sess == nil {
		if p.out == nil || p.currentTask() != nil {
			return ErrNoStream
		}
		p.srv.tap("", ServerToClient, msg)
		return p.out.Send(msg)
	}
	p.srv.tap(p.sess.id, ServerToClient, msg)
	if p.out != nil {
		err := p.out.Send(msg)
		if err == nil {
			return nil
		}
		if s := p.sess.stream(); s != nil {
			return s.Send(msg)
		}
		return err
	}
	if s := p.sess.stream(); s != nil {
		return s.Send(msg)
	}
	if p.srv.relayToStream(p.sess, msg) { // the session's stream may be another process's
		return nil
	}
	return ErrNoStream
}

// encode encodes a request or notification of the call; one of a task
// carries the related-task _meta (2025-11-25: MUST).
func (p *callPeer) encode(id wire.ID, method string, params wire.Encoder) ([]byte, error) {
	return p.encodeTree(id, method, projectParams(p.spec, params))
}

// encodeTree is encode for params in the revision's shape already.
func (p *callPeer) encodeTree(id wire.ID, method string, tree map[string]any) ([]byte, error) {
	if p.related != "" {
		tree = jsontree.WithMeta(tree, wire.MetaRelatedTask, map[string]any{"taskId": p.related})
	}
	return p.srv.encodeMessage(p.spec, id, method, tree)
}

func (p *callPeer) Notify(ctx context.Context, method string, params wire.Encoder) error {
	msg, err := p.encode(wire.ID{}, method, params)
	if err != nil {
		return err
	}
	if t := p.currentTask(); t != nil && p.sess != nil {
		return t.deliver(ctx, p.sess, msg, false)
	}
	return p.send(msg)
}

// NotifyExtension sends an extension notification about the current call
// (e.g. the content_delta events of schema/ext) on the call's stream.
func (p *callPeer) NotifyExtension(ctx context.Context, method, definition string, params any) error {
	msg, err := p.srv.encodeExtension(method, definition, params)
	if err != nil {
		return err
	}
	return p.send(msg)
}

// Ask asks the client for several inputs: in one input-required result
// where the revision has no round trips, one request after the other
// where it has.
func (p *callPeer) Ask(ctx context.Context, inputs map[string]peer.Input) (map[string]wire.Encoder, error) {
	if p.rounds != nil {
		return p.askRound(ctx, inputs)
	}
	out := make(map[string]wire.Encoder, len(inputs))
	for _, k := range slices.Sorted(maps.Keys(inputs)) {
		r, err := p.Call(ctx, inputs[k].Method, inputs[k].Params)
		if err != nil {
			return out, fmt.Errorf("input %q: %w", k, err)
		}
		out[k] = r
	}
	return out, nil
}

func (p *callPeer) Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	if p.rounds != nil {
		p.mu.Lock()
		p.rounds.calls++
		key := fmt.Sprintf("%s#%d", method, p.rounds.calls)
		p.mu.Unlock()
		r, err := p.askRound(ctx, map[string]peer.Input{key: {Method: method, Params: params}})
		if err != nil {
			return nil, err
		}
		return r[key], nil
	}
	sess, srv := p.sess, p.srv
	if sess == nil { // a call without a session has rounds (above); never here
		return nil, fmt.Errorf("%w: no session to send %s on", ErrStateless, method)
	}
	if sess.ephemeral {
		return nil, fmt.Errorf("%w: the server runs stateless, so it cannot send %s to the client", ErrStateless, method)
	}
	m, ok := p.spec.Method(method)
	if !ok || !m.ServerToClient {
		return nil, &wire.Error{Code: wire.CodeMethodNotFound, Message: fmt.Sprintf("%q is not a server-to-client request of %s", method, p.spec.Revision)}
	}
	if p.asking != nil {
		p.asking(true)
		defer p.asking(false)
	}
	id := wire.IntID(srv.idBase + sess.nextID.Add(1))
	tree := projectParams(p.spec, params)
	answered := func(int) {}
	if o := srv.cfg.observer; o != nil {
		// A copy: the tree may hold the caller's own _meta map (an
		// Extra member, a map-typed Meta), which the observer writes to.
		meta, _ := tree["_meta"].(map[string]any)
		meta = maps.Clone(meta)
		if meta == nil {
			meta = map[string]any{}
		}
		answered = o.Ask(ctx, Asked{Method: method, Revision: p.spec.Revision, Session: sess.id, ID: id}, meta)
		if len(meta) > 0 {
			tree = maps.Clone(tree) // a custom Encoder's tree may be its own map too
			if tree == nil {
				tree = map[string]any{}
			}
			tree["_meta"] = meta
		}
	}
	msg, err := p.encodeTree(id, method, tree)
	if err != nil {
		answered(wire.CodeInternalError)
		return nil, err
	}
	pc := &pendingCall{method: method, reply: make(chan *jsonrpc.Message, 1)}
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		answered(wire.CodeInternalError)
		return nil, ErrClosed
	}
	if max := srv.cfg.maxPending; max > 0 && len(sess.pending) >= max {
		sess.mu.Unlock()
		answered(wire.CodeServerBusy)
		return nil, fmt.Errorf("server: the session already waits on %d requests to the client", max)
	}
	sess.pending[id] = pc
	sess.mu.Unlock()
	sess.save(ctx)
	forget := func() {
		sess.mu.Lock()
		delete(sess.pending, id)
		sess.mu.Unlock()
		sess.save(ctx)
	}
	// The call timeout counts from now: a task's request may wait for a
	// stream to go out on (tasks/result), and that wait is the client's
	// too.
	var timeout <-chan time.Time // none without a call timeout
	var deadline time.Time
	if d := srv.cfg.callTimeout; d > 0 {
		deadline = time.Now().Add(d)
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	send := p.send
	if t := p.currentTask(); t != nil {
		send = func(msg []byte) error {
			waitCtx := ctx
			if !deadline.IsZero() {
				var cancel context.CancelFunc
				waitCtx, cancel = context.WithDeadline(ctx, deadline)
				defer cancel()
			}
			if err := t.deliver(waitCtx, sess, msg, true); err != nil {
				if ctx.Err() == nil && waitCtx.Err() != nil {
					return fmt.Errorf("no stream to send %s on within %s: the client neither listens nor asks for the task's result", method, srv.cfg.callTimeout)
				}
				return err
			}
			return nil
		}
	}
	if err := send(msg); err != nil {
		forget()
		answered(wire.CodeInternalError)
		return nil, err
	}
	select {
	case resp := <-pc.reply:
		if resp.Error != nil {
			answered(resp.Error.Code)
			return nil, resp.Error
		}
		if err := p.spec.Validate(m.Result, resp.Result); err != nil {
			answered(wire.CodeInvalidParams)
			return nil, fmt.Errorf("client answered %s with an invalid result: %w", method, err)
		}
		answered(0)
		return mcp.DecodeResult(method, resp.Result, p.spec.Index)
	case <-ctx.Done():
		forget()
		p.cancelCall(id, "the server no longer needs the answer")
		answered(wire.CodeInternalError)
		return nil, ctx.Err()
	case <-timeout:
		forget()
		p.cancelCall(id, "timed out")
		answered(wire.CodeInternalError)
		return nil, fmt.Errorf("client did not answer %s within %s", method, srv.cfg.callTimeout)
	case <-sess.Done():
		answered(wire.CodeInternalError)
		return nil, ErrClosed
	}
}

// cancelCall tells the client the server no longer waits for request id.
// When the client itself cancelled the call, it has usually dropped the
// call's stream already, so the session's stream is tried first.
func (p *callPeer) cancelCall(id wire.ID, reason string) {
	msg, err := p.srv.encodeOutgoing(p.spec, wire.ID{}, mcp.MethodCancelled, &mcp.CancelledNotificationParams{RequestID: id, Reason: reason})
	if err != nil {
		return
	}
	if p.peerCancelled != nil && p.peerCancelled.Load() {
		if s := p.sess.stream(); s != nil {
			p.srv.tap(p.sess.id, ServerToClient, msg)
			if s.Send(msg) == nil {
				return
			}
		}
	}
	_ = p.send(msg)
}

func (p *callPeer) ProgressToken() wire.ID { return p.token }

func (p *callPeer) LogLevel() mcp.LoggingLevel {
	if p.sess == nil {
		return p.level
	}
	p.sess.mu.Lock()
	defer p.sess.mu.Unlock()
	return p.sess.logLevel
}

func (p *callPeer) ClientCapabilities() *mcp.ClientCapabilities {
	if p.sess == nil {
		return p.caps
	}
	p.sess.mu.Lock()
	defer p.sess.mu.Unlock()
	return p.sess.clientCaps
}

func (p *callPeer) SessionID() string {
	if p.sess == nil {
		return ""
	}
	return p.sess.id
}

// CloseStream ends the response that carries the call before the call ends,
// where the transport can resume it (Streamable HTTP with Last-Event-ID).
func (p *callPeer) CloseStream() {
	if p.closeEarly != nil {
		p.closeEarly.CloseStream()
	}
}
