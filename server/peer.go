package server

import (
	"context"
	"fmt"
	"time"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/server/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// callPeer is the peer.Peer of one call: messages about the call go to the
// call's own stream when it has one.
type callPeer struct {
	sess  *Session
	spec  *wire.Spec
	out   Outbox
	token wire.ID
}

func (p *callPeer) send(msg []byte) error {
	out := p.out
	if out == nil {
		out = p.sess.stream()
	}
	if out == nil {
		return ErrNoStream
	}
	p.sess.tap(ServerToClient, msg)
	return out.Send(msg)
}

func (p *callPeer) Notify(ctx context.Context, method string, params wire.Encoder) error {
	msg, err := p.sess.srv.encodeOutgoing(p.spec, wire.ID{}, method, params)
	if err != nil {
		return err
	}
	return p.send(msg)
}

func (p *callPeer) Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	sess, srv := p.sess, p.sess.srv
	m, ok := p.spec.Method(method)
	if !ok || !m.ServerToClient {
		return nil, &wire.Error{Code: wire.CodeMethodNotFound, Message: fmt.Sprintf("%q is not a server-to-client request of %s", method, p.spec.Revision)}
	}
	id := wire.IntID(sess.nextID.Add(1))
	msg, err := srv.encodeOutgoing(p.spec, id, method, params)
	if err != nil {
		return nil, err
	}
	pc := &pendingCall{method: method, reply: make(chan *jsonrpc.Message, 1)}
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		return nil, ErrClosed
	}
	sess.pending[id] = pc
	sess.mu.Unlock()
	forget := func() {
		sess.mu.Lock()
		delete(sess.pending, id)
		sess.mu.Unlock()
	}
	if err := p.send(msg); err != nil {
		forget()
		return nil, err
	}
	timer := time.NewTimer(srv.cfg.callTimeout)
	defer timer.Stop()
	select {
	case resp := <-pc.reply:
		if resp.Error != nil {
			return nil, resp.Error
		}
		if err := p.spec.Validate(m.Result, resp.Result); err != nil {
			return nil, fmt.Errorf("client answered %s with an invalid result: %w", method, err)
		}
		return mcp.DecodeResult(method, resp.Result, p.spec.Index)
	case <-ctx.Done():
		forget()
		p.cancelCall(id, "the server no longer needs the answer")
		return nil, ctx.Err()
	case <-timer.C:
		forget()
		p.cancelCall(id, "timed out")
		return nil, fmt.Errorf("client did not answer %s within %s", method, srv.cfg.callTimeout)
	case <-sess.Done():
		return nil, ErrClosed
	}
}

func (p *callPeer) cancelCall(id wire.ID, reason string) {
	_ = p.Notify(context.Background(), mcp.MethodCancelled, &mcp.CancelledNotificationParams{RequestID: id, Reason: reason})
}

func (p *callPeer) ProgressToken() wire.ID { return p.token }

func (p *callPeer) LogLevel() mcp.LoggingLevel {
	p.sess.mu.Lock()
	defer p.sess.mu.Unlock()
	return p.sess.logLevel
}

func (p *callPeer) ClientCapabilities() *mcp.ClientCapabilities {
	p.sess.mu.Lock()
	defer p.sess.mu.Unlock()
	return p.sess.clientCaps
}

func (p *callPeer) SessionID() string { return p.sess.id }
