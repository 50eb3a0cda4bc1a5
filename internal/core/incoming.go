package core

import (
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Incoming is a parsed body, ready to be served.
type Incoming struct {
	body  []byte
	items []jsonrpc.Item
	batch bool
	err   *wire.Error
	one   jsonrpc.Single // items, for a body of one message
}

// Parse splits a body into messages. It needs no session, so that a
// transport can see whether a body opens one (initialize) or needs an
// answer at all.
func (s *Server) Parse(body []byte) *Incoming {
	in := new(Incoming)
	s.parseInto(in, body)
	return in
}

// parseInto is Parse into an Incoming the caller holds (Route's Call).
func (s *Server) parseInto(in *Incoming, body []byte) {
	items, batch, err := jsonrpc.ParseInto(body, jsonrpc.Limits{MaxDepth: s.cfg.maxDepth}, &in.one)
	if batch && !s.cfg.batches { // a batch too long to parse is still a batch
		err = &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: batches are not accepted"}
	}
	in.body, in.items, in.batch, in.err = body, items, batch, err
}

// takeBody returns the body, for the tap, and lets go of it: a message of
// the body lives in the Incoming (one), often inside a Call, and one that
// outlives its call (a task's, a listen's) keeps them and the parsed tree,
// not the bytes too.
func (in *Incoming) takeBody() []byte {
	body := in.body
	in.body = nil
	return body
}

// Err is the error that answers the whole body (not JSON, empty batch).
func (in *Incoming) Err() *wire.Error { return in.err }

// ErrorReply is the encoded answer for Err.
func (in *Incoming) ErrorReply() []byte { return jsonrpc.EncodeError(wire.ID{}, in.err) }

// HasRequests reports whether the body needs an answer: it holds a request
// or an element that is not a valid message.
func (in *Incoming) HasRequests() bool {
	if in.err != nil {
		return true
	}
	for _, it := range in.items {
		if it.Err != nil || it.Msg.Kind == jsonrpc.Request {
			return true
		}
	}
	return false
}

// IsInitialize reports whether the body is an initialize request.
func (in *Incoming) IsInitialize() bool {
	for _, it := range in.items {
		if it.Msg != nil && it.Msg.Kind == jsonrpc.Request && it.Msg.Method == mcp.MethodInitialize {
			return true
		}
	}
	return false
}

// InitializeAlone reports whether the body is an initialize request by
// itself, not in a batch: what a transport serves before it reads the
// next body (nothing can be served before initialize is answered). A
// batch's other requests run as any call does: they may wait on the
// client, whose answer is read only after them.
func (in *Incoming) InitializeAlone() bool { return !in.batch && in.IsInitialize() }

// join is the answer made of out: nil, one message, or an array for a
// batch.
func (in *Incoming) join(out [][]byte) []byte {
	switch {
	case len(out) == 0:
		return nil
	case in.batch:
		return jsonrpc.Batch(out)
	default:
		return out[0]
	}
}

// metaVersionOf reads params._meta's protocol version, "" when absent.
func metaVersionOf(msg *jsonrpc.Message) string {
	v, _ := metaOf(msg.Params)[wire.MetaProtocolVersion].(string)
	return v
}

// metaOf is params._meta (nil when there is none): where a request
// carries its protocol version, capabilities, progress token and trace.
func metaOf(params any) map[string]any {
	p, _ := params.(map[string]any)
	meta, _ := p["_meta"].(map[string]any)
	return meta
}

// metaVersion is the protocol version the body's request names in its
// _meta ("" when none does): the mark of a stateless revision's request.
func (in *Incoming) metaVersion() string {
	for _, it := range in.items {
		if it.Msg != nil && it.Msg.Kind == jsonrpc.Request {
			if v := metaVersionOf(it.Msg); v != "" {
				return v
			}
		}
	}
	return ""
}
