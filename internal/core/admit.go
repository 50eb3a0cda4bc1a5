package core

import (
	"context"
	"fmt"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/wire"
)

// The steps every request takes, whatever its revision: the method found
// in the revision's table, the request validated against its schema, a
// slot of the client's calls in flight taken.

// methodOf finds the method a request names in spec: -32601 when the
// revision has none by that name that a client may send.
func methodOf(spec *protocol.Spec, msg *jsonrpc.Message) (protocol.Method, *wire.Error) {
	m, ok := spec.Method(msg.Method)
	if !ok || !m.ClientToServer {
		return m, &wire.Error{Code: wire.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: %q in protocol revision %s", msg.Method, spec.Revision)}
	}
	return m, nil
}

// admitRequest finds the request's method and validates the request
// against the revision's schema of it (unless validation is off): -32601,
// or -32602 naming the pointer and the reason, counted as refused.
func (s *Server) admitRequest(ctx context.Context, spec *protocol.Spec, msg *jsonrpc.Message) (protocol.Method, *wire.Error) {
	m, e := methodOf(spec, msg)
	if e != nil {
		return m, e
	}
	if s.cfg.validate {
		if err := spec.ValidateMessage(m.Request, msg); err != nil {
			noteRefused(ctx, err)
			return m, wire.InvalidParams(err)
		}
	}
	return m, nil
}

// clientSlot takes one of the client's calls in flight (usage: its
// session's count, nil for a request without one): -32000 when it holds
// them all. done gives it back.
func (s *Server) clientSlot(u *clientUsage, key string) (done func(), e *wire.Error) {
	done, ok := s.startCall(u, key)
	if !ok {
		return nil, &wire.Error{Code: wire.CodeServerBusy, Message: fmt.Sprintf("Server busy: this client already has %d requests in flight", s.cfg.maxClientInflight)}
	}
	return done, nil
}
