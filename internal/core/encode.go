package core

// The outbound path, one for session and stateless calls alike: the
// dispatch to the handler (with the recovery of every dispatched call), the handler's
// error as the error sent, and results, requests and notifications
// projected onto the revision, validated in strict mode and encoded. The
// members a revision requires of every result (2026-07-28's resultType,
// ttlMs, cacheScope) are the schemas' defaults, which the generated
// encoders write where the handler left them out.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// call dispatches to the handler. A panic in it is answered -32603 and
// logged with what the request named: the recovery of every dispatched
// call (guard covers initialize and a listen stream's subscriptions).
func (s *Server) call(ctx context.Context, msg *jsonrpc.Message, spec *protocol.Spec) (result wire.Encoder, err error) {
	defer func() {
		if r := recover(); r != nil {
			target := ""
			if name := generated.NameParam(msg.Method); name != "" {
				params, _ := msg.Params.(map[string]any)
				target, _ = params[name].(string)
			}
			s.log.Error("handler panic", "method", msg.Method, "target", target, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
		}
	}()
	result, err = mcp.DispatchHandler(ctx, s.handler, msg.Method, msg.Params, spec.Index)
	noteResult(ctx, result)
	return result, err
}

// guard runs a method of the handler outside a call (initialize, a listen
// stream's subscriptions), turning a panic into -32603 and a log line.
func (s *Server) guard(method string, fn func() (wire.Encoder, error)) (result wire.Encoder, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("handler panic", "method", method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
		}
	}()
	return fn()
}

// wireError turns a handler error into the error sent: a *wire.Error as it
// is, anything else -32603 without details (they are logged).
func (s *Server) wireError(method string, err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &wire.Error{Code: wire.CodeInternalError, Message: "Request cancelled: " + err.Error()}
	}
	s.log.Error("handler error", "method", method, "err", err)
	return &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"}
}

// encodeResult projects a result onto the revision, validates it in strict
// mode and encodes the response.
func (s *Server) encodeResult(spec *protocol.Spec, m protocol.Method, id wire.ID, result wire.Encoder) []byte {
	if result == nil {
		s.log.Error("handler returned no result and no error", "method", m.Name)
		return jsonrpc.EncodeError(id, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"})
	}
	a, direct := result.(appender)
	if direct && !s.cfg.strict {
		if b, ok := jsonrpc.AppendResult(id, spec.Index, a.AppendJSON); ok {
			return b
		}
	}
	tree := spec.Project(result)
	if direct && s.cfg.strict { // strict: the tree is validated, the bytes written without it (they are the same)
		if err := s.validResult(spec, m, tree); err != nil {
			return jsonrpc.EncodeError(id, err)
		}
		if b, ok := jsonrpc.AppendResult(id, spec.Index, a.AppendJSON); ok {
			return b
		}
	}
	return s.encodeTree(spec, m, id, tree)
}

// validResult validates a result in strict mode: an invalid one is a bug
// of the server, logged, and answered -32603.
func (s *Server) validResult(spec *protocol.Spec, m protocol.Method, tree any) *wire.Error {
	if !s.cfg.strict {
		return nil
	}
	if err := spec.Validate(m.Result, tree); err != nil {
		s.log.Error("strict: invalid result", "method", m.Name, "revision", spec.Revision, "err", err)
		return &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the server produced an invalid result"}
	}
	return nil
}

// appender is a result that encodes itself in a revision's shape without a
// tree (the generated types' AppendJSON), or declines (unknown members).
type appender interface {
	AppendJSON(b []byte, rev int) ([]byte, bool)
}

// encodeOutgoing encodes a request or notification the server sends,
// validated in strict mode.
func (s *Server) encodeOutgoing(spec *protocol.Spec, id wire.ID, method string, params wire.Encoder) ([]byte, error) {
	return s.encodeMessage(spec, id, method, projectParams(spec, params))
}

// projectParams is params in the revision's shape, nil when there are none.
func projectParams(spec *protocol.Spec, params wire.Encoder) map[string]any {
	if params == nil {
		return nil
	}
	tree, _ := spec.Project(params).(map[string]any)
	return tree
}

// encodeMessage encodes a request (or, with a zero id, a notification)
// whose params are already in the revision's shape, validated in strict
// mode.
func (s *Server) encodeMessage(spec *protocol.Spec, id wire.ID, method string, params map[string]any) ([]byte, error) {
	m, ok := spec.Method(method)
	if !ok || !m.ServerToClient {
		return nil, fmt.Errorf("server: %s has no server-to-client %q", spec.Revision, method)
	}
	tree := map[string]any{"jsonrpc": "2.0", "method": method}
	if !id.IsZero() {
		tree["id"] = id.Value()
	}
	if params != nil {
		tree["params"] = params
	}
	if s.cfg.strict {
		if err := spec.Validate(m.Request, tree); err != nil {
			s.log.Error("strict: invalid outgoing message", "method", method, "revision", spec.Revision, "err", err)
			return nil, fmt.Errorf("server: invalid %s: %w", method, err)
		}
	}
	return jsontree.Marshal(tree)
}

// encodeTree validates a projected result in strict mode and encodes it.
func (s *Server) encodeTree(spec *protocol.Spec, m protocol.Method, id wire.ID, tree any) []byte {
	if err := s.validResult(spec, m, tree); err != nil {
		return jsonrpc.EncodeError(id, err)
	}
	b, err := jsonrpc.EncodeResult(id, tree)
	if err != nil {
		s.log.Error("encode result", "method", m.Name, "err", err)
		return jsonrpc.EncodeError(id, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"})
	}
	return b
}
