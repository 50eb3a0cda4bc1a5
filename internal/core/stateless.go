package core

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// inputMethods are the requests that may be answered with an input-required
// result (2026-07-28, basic/patterns/mrtr): elsewhere a method that asks the
// client for input gets an error instead.
var inputMethods = map[string]bool{
	mcp.MethodCallTool: true, mcp.MethodGetPrompt: true, mcp.MethodReadResource: true, mcp.MethodGetTaskPayload: true,
}

// RequestHeaders are the HTTP headers a stateless request must agree with
// (Streamable HTTP of 2026-07-28).
type RequestHeaders struct {
	ProtocolVersion string // MCP-Protocol-Version
	Method          string // Mcp-Method
	Name            string // Mcp-Name
	// Params are the Mcp-Param-{Name} headers, by Name in lower case, as
	// they came: the handler (the registration layer) checks them against
	// the arguments its tools mark x-mcp-header.
	Params map[string]string
	// Repeated names a header of these that came more than once (its
	// values could route one way and be checked another): -32020.
	Repeated string
}

type headersKey struct{}

// HeadersFrom returns the Streamable HTTP headers of a stateless request
// (2026-07-28), nil for any other call: where they are nil there is
// nothing to check them against.
func HeadersFrom(ctx context.Context) *RequestHeaders {
	h, _ := ctx.Value(headersKey{}).(*RequestHeaders)
	return h
}

// statelessRevisions lists the revisions whose requests carry their own
// version, oldest first.
func (s *Server) statelessRevisions() []string {
	var out []string
	for _, sp := range generated.Specs {
		if sp.Stateless() {
			out = append(out, sp.Revision)
		}
	}
	return out
}

// statelessSpec returns the spec of a stateless revision, or nil.
func (s *Server) statelessSpec(version string) *protocol.Spec {
	if sp := generated.Lookup(version); sp != nil && sp.Stateless() {
		return sp
	}
	return nil
}

// ServeStateless answers a body of a stateless revision: one request that
// names its revision in _meta, served without a session. Messages about the
// call go to related. headers, when not nil, are checked against the body.
// code is the JSON-RPC error code of an error answer (0 otherwise), so that
// a transport can give it its status without reading the answer again.
func (s *Server) ServeStateless(ctx context.Context, in *Incoming, related Outbox, headers *RequestHeaders) (reply []byte, code int) {
	s.tap("", ClientToServer, in.takeBody())
	defer func() { s.tap("", ServerToClient, reply) }()
	if in.batch { // a batch too long to parse is still a batch
		return reject(wire.ID{}, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: a stateless request is one message, not a batch"})
	}
	if in.err != nil {
		return in.ErrorReply(), in.err.Code
	}
	it := in.items[0]
	if it.Err != nil {
		return reject(it.ID, it.Err)
	}
	if it.Msg.Kind != jsonrpc.Request {
		return nil, 0 // notifications and responses: nothing to correlate without a session
	}
	return s.statelessRequest(ctx, it.Msg, related, headers)
}

// statelessRequest serves one request of a stateless revision, observed.
func (s *Server) statelessRequest(ctx context.Context, msg *jsonrpc.Message, related Outbox, headers *RequestHeaders) (reply []byte, code int) {
	if s.cfg.observer != nil {
		version := metaVersionOf(msg)
		transport, _ := ctx.Value(transportKey{}).(string)
		var obs *observation
		ctx, obs = s.observe(ctx, served(msg, version, "", transport))
		defer func() { obs.end(reply, version) }() // also when the call panics past the handler's recovery
	}
	params, _ := msg.Params.(map[string]any)
	meta := metaOf(params)
	version, _ := meta[wire.MetaProtocolVersion].(string)
	headerVersion := ""
	if headers != nil {
		headerVersion = headers.ProtocolVersion
	}
	// A method the revision lacks (initialize, ping, ...) is -32601, whatever
	// else is wrong with the request.
	probe := version
	if probe == "" {
		probe = headerVersion
	}
	if sp := s.statelessSpec(probe); sp != nil {
		if _, e := methodOf(sp, msg); e != nil {
			return reject(msg.ID, e)
		}
	}
	if version == "" {
		return reject(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: "Invalid params: _meta must carry " + wire.MetaProtocolVersion,
			Data: map[string]any{"field": "/params/_meta/" + strings.ReplaceAll(wire.MetaProtocolVersion, "/", "~1"), "reason": "missing protocol version"}})
	}
	if headers != nil {
		if headers.Repeated != "" {
			reason := headers.Repeated + " header is sent more than once"
			return reject(msg.ID, wire.HeaderMismatch(headers.Repeated, reason))
		}
		if e := checkHeaders(headers, msg, version, params); e != nil {
			return reject(msg.ID, e)
		}
	}
	spec := s.statelessSpec(version)
	if spec == nil {
		return reject(msg.ID, &wire.Error{Code: wire.CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version " + strconv.Quote(version),
			Data: map[string]any{"supported": s.statelessRevisions(), "requested": version}})
	}
	m, e := s.admitRequest(ctx, spec, msg)
	if e != nil {
		return reject(msg.ID, e)
	}
	caps := new(mcp.ClientCapabilities)
	if err := caps.DecodeValue(meta[wire.MetaClientCapabilities], spec.Index); err != nil {
		return reject(msg.ID, wire.InvalidParams(jsontree.At(jsontree.At(jsontree.At(err, wire.MetaClientCapabilities), "_meta"), "params")))
	}
	if msg.Method == mcp.MethodSubscriptionsListen {
		return s.listen(ctx, spec, m, msg, caps, related)
	}
	release, e := s.clientSlot(nil, CallerFrom(ctx).Key)
	if e != nil {
		return reject(msg.ID, e)
	}
	c := &call{spec: spec, m: m, msg: msg, release: release}
	defer c.releaseSlot()
	p := &callPeer{srv: s, spec: spec, out: related, token: progressToken(msg.Params), rounds: &inputRounds{method: msg.Method,
		binding: stateBinding{owner: CallerFrom(ctx).Owner, method: msg.Method, digest: paramsDigest(params)}}}
	if level, ok := meta[wire.MetaLogLevel].(string); ok {
		p.level = mcp.LoggingLevel(level)
	}
	p.caps = caps
	if err := p.restore(params); err != nil {
		return reject(msg.ID, &wire.Error{Code: wire.CodeInvalidParams, Message: "Invalid params: " + err.Error(),
			Data: map[string]any{"field": "/params/requestState", "reason": err.Error()}})
	}
	if headers != nil {
		ctx = context.WithValue(ctx, headersKey{}, headers)
	}
	// A method an extension adds is the extension's to serve, for a
	// client that declares it.
	if m.Extension != "" && !declares(p.caps, m.Extension) {
		return reject(msg.ID, missingExtension(m.Extension))
	}
	c.peer = p
	return s.dispatch(ctx, c)
}

// reject encodes an error answer and gives its code.
func reject(id wire.ID, e *wire.Error) ([]byte, int) { return jsonrpc.EncodeError(id, e), e.Code }

// statelessError maps codes that stateless revisions retired: -32002
// (resource not found) became -32602 with the same data (2026-07-28,
// basic/index: servers MUST NOT emit -32002 any more).
func statelessError(e *wire.Error) *wire.Error {
	if e.Code == wire.CodeResourceNotFound {
		c := *e
		c.Code = wire.CodeInvalidParams
		return &c
	}
	return e
}

// checkHeaders compares the Streamable HTTP headers of 2026-07-28 with the
// body: a missing or different value is a -32020 header mismatch.
func checkHeaders(h *RequestHeaders, msg *jsonrpc.Message, version string, params map[string]any) *wire.Error {
	mismatch := func(header, got, want string) *wire.Error {
		reason := fmt.Sprintf("%s header is %q, the body says %q", header, got, want)
		if got == "" {
			reason = fmt.Sprintf("%s header is missing; the body says %q", header, want)
		}
		return wire.HeaderMismatch(header, reason)
	}
	if h.ProtocolVersion != version {
		return mismatch("MCP-Protocol-Version", h.ProtocolVersion, version)
	}
	if h.Method != msg.Method {
		return mismatch("Mcp-Method", h.Method, msg.Method)
	}
	param := generated.NameParam(msg.Method)
	if param == "" {
		return nil
	}
	name, _ := params[param].(string)
	if h.Name != name {
		return mismatch("Mcp-Name", h.Name, name)
	}
	return nil
}

// inputRequired answers with the inputs the method is waiting for, and the
// answers so far in an integrity-protected requestState.
func (s *Server) inputRequired(spec *protocol.Spec, id wire.ID, p *callPeer, needed map[string]peer.Input) []byte {
	reqs := make(map[string]any, len(needed))
	for k, in := range needed {
		r := map[string]any{"method": in.Method}
		if in.Params != nil {
			r["params"] = spec.Project(in.Params)
		} else {
			r["params"] = map[string]any{}
		}
		reqs[k] = r
	}
	state, err := s.sealState(p.rounds.binding, p.rounds.answers, needed)
	if err != nil {
		return jsonrpc.EncodeError(id, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"})
	}
	tree := map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": state}
	if s.cfg.strict {
		if err := spec.Validate("InputRequiredResult", tree); err != nil {
			s.log.Error("strict: invalid input-required result", "method", p.rounds.method, "err", err)
			return jsonrpc.EncodeError(id, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the server produced an invalid result"})
		}
	}
	b, err := jsonrpc.EncodeResult(id, tree)
	if err != nil {
		return jsonrpc.EncodeError(id, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"})
	}
	return b
}

// restore collects the answers of earlier rounds (requestState) and of this
// one (inputResponses). An answer counts only for a request the server
// asked in the state it comes with: inputResponses without a requestState,
// or for keys the state did not ask, are ignored, so the method asks again
// (a new input-required result) instead of trusting answers nobody asked
// for. A state that fails its checks is an error.
func (p *callPeer) restore(params map[string]any) error {
	r := p.rounds
	r.answers = map[string]any{}
	st, _ := params["requestState"].(string)
	if st == "" {
		return nil
	}
	prev, asked, err := p.srv.openState(r.binding, st)
	if err != nil {
		return err
	}
	for k, v := range prev {
		r.answers[k] = v
	}
	resp, _ := params["inputResponses"].(map[string]any)
	for k, v := range resp {
		if slices.Contains(asked, k) {
			r.answers[k] = v
		}
	}
	return nil
}

// pending are the inputs the call waits for (an input-required result).
func (p *callPeer) pending() map[string]peer.Input {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rounds.needed
}

// askRound gives the answers the client sent with the request, and notes
// what it has not answered yet (peer.ErrInputRequired: the call ends in an
// input-required result). A call that became a task asks through it.
func (p *callPeer) askRound(ctx context.Context, inputs map[string]peer.Input) (map[string]wire.Encoder, error) {
	rounds := p.rounds
	if !inputMethods[rounds.method] {
		return nil, fmt.Errorf("%w: %s cannot ask the client for input in a stateless request", peer.ErrNoPeer, rounds.method)
	}
	out := make(map[string]wire.Encoder, len(inputs))
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(inputs))
	for k := range inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	missing := map[string]peer.Input{}
	for _, k := range keys {
		in := inputs[k]
		if a, ok := rounds.answers[k]; ok {
			r, err := mcp.DecodeResult(in.Method, a, p.spec.Index)
			if err == nil {
				out[k] = r
				continue
			}
		}
		missing[k] = in
	}
	if len(missing) == 0 {
		return out, nil
	}
	if t := p.task; t != nil {
		p.mu.Unlock()
		got, err := t.askClient(ctx, missing)
		p.mu.Lock()
		for k, r := range got {
			out[k] = r
		}
		return out, err
	}
	if rounds.needed == nil {
		rounds.needed = map[string]peer.Input{}
	}
	for k, in := range missing {
		rounds.needed[k] = in
	}
	return out, peer.ErrInputRequired
}
