package core

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/wire"
)

// Route is what an HTTP transport knows of a POSTed body besides the body:
// the session it names and the MCP headers. The transport hands both to
// Server.Route in one call and never looks at revisions itself.
type Route struct {
	Transport string         // the transport's name: its sessions serve only it
	SessionID string         // Mcp-Session-Id ("": none)
	Headers   RequestHeaders // MCP-Protocol-Version, Mcp-Method, Mcp-Name
	// Stateless keeps no sessions: a body of a session revision is served
	// on its own, in the revision its header names (generated.Assumed
	// when it names none).
	Stateless bool
}

// Reply is the core's answer to a POSTed body. The HTTP transport decides
// its status: from Refused, else from the JSON-RPC Code of a stateless
// revision's error answer and that revision's transport facts.
type Reply struct {
	Body    []byte  // nil: nothing to answer
	Refused Refusal // why the body was not served (NotRefused: it was)
	// Code is the JSON-RPC error code of a stateless revision's error
	// answer (0: a result, or any answer of a session), and Transport the
	// facts of the revision that served it (nil: none was).
	Code       int
	Transport  *protocol.Transport
	SessionID  string // the session initialize opened: Mcp-Session-Id to announce
	RetryAfter int    // seconds, for a busy server or client
}

// Refusal is why the core refused a body before it reached the protocol.
type Refusal int

const (
	NotRefused            Refusal = iota // served
	RefusedMalformed                     // not JSON-RPC, an unsupported revision, no session id where one is needed
	RefusedUnknownSession                // ended, never existed, or another caller's
	RefusedFull                          // no room for another session
	RefusedOverShare                     // the client holds its share of sessions
	RefusedUnavailable                   // the SessionStore cannot be reached: try again
)

// Call is a POSTed body routed to what serves it: a session, a session
// revision served without one, or a stateless revision. Route finds it;
// the transport then picks how to answer (JSON or an event stream) from
// what Call reports, and runs it.
type Call struct {
	srv       *Server
	in        *Incoming // &incoming
	incoming  Incoming  // kept here: one allocation for the call and its body
	detached  detached  // the context the call runs in (Run)
	kind      callKind
	refusal   *Reply
	sess      *Session
	headers   *RequestHeaders
	transport string // of the session initialize opens
}

type callKind int

const (
	callRefused    callKind = iota // answered by its refusal
	callSession                    // a request of an open session
	callInitialize                 // opens a session
	callEphemeral                  // a session revision without a session (Route.Stateless)
	callStateless                  // a stateless revision (2026-07-28)
)

// Route finds what serves body. A body that cannot be served (not JSON,
// an unsupported MCP-Protocol-Version, a missing or unknown session, a
// server full of sessions) is refused: Refused gives the reply.
func (s *Server) Route(ctx context.Context, body []byte, r Route) *Call {
	c := &Call{srv: s}
	c.in = &c.incoming
	s.parseInto(c.in, body)
	if e := c.in.Err(); e != nil {
		return c.refuse(RefusedMalformed, c.in.ErrorReply())
	}
	version := r.Headers.ProtocolVersion
	if r.SessionID == "" && (s.statelessSpec(version) != nil || !c.in.IsInitialize() && c.in.metaVersion() != "") {
		headers := r.Headers // a copy of its own: r stays on the stack of every other call
		c.kind, c.headers, c.transport = callStateless, &headers, r.Transport
		return c
	}
	if msg := s.unsupported(version); msg != "" && (r.Stateless || !c.in.IsInitialize()) {
		return c.refuseWith(RefusedMalformed, msg) // initialize negotiates: its header does not matter
	}
	switch {
	case r.Stateless && c.in.IsInitialize():
		c.kind, c.sess = callEphemeral, s.detachedSession()
	case r.Stateless:
		if version == "" {
			version = generated.Assumed.Revision
		}
		sess, err := s.ephemeralSession(version)
		if err != nil {
			return c.refuseWith(RefusedMalformed, "Bad Request: "+err.Error())
		}
		c.kind, c.sess = callEphemeral, sess
	case c.in.IsInitialize():
		c.kind, c.transport = callInitialize, r.Transport // the session opens when the call runs
	default:
		sess, refused := s.sessionOf(ctx, r)
		if sess == nil {
			c.kind, c.refusal = callRefused, &refused
			return c
		}
		c.kind, c.sess = callSession, sess
	}
	return c
}

// SessionOf finds the session a GET or DELETE names, or the reply that
// refuses the request: RefusedMalformed for an unsupported MCP-Protocol-Version
// or a missing Mcp-Session-Id, RefusedUnknownSession for a session that ended,
// never existed or is another caller's, RefusedFull or RefusedOverShare for
// a stored session this process has no room to serve now, RefusedUnavailable
// when the SessionStore cannot be reached.
func (s *Server) SessionOf(ctx context.Context, r Route) (*Session, Reply, bool) {
	if msg := s.unsupported(r.Headers.ProtocolVersion); msg != "" {
		return nil, refusal(RefusedMalformed, msg), false
	}
	sess, refused := s.sessionOf(ctx, r)
	if sess == nil {
		return nil, refused, false
	}
	return sess, Reply{}, true
}

func (s *Server) sessionOf(ctx context.Context, r Route) (*Session, Reply) {
	if r.SessionID == "" {
		return nil, refusal(RefusedMalformed, "Bad Request: missing Mcp-Session-Id header; send initialize first")
	}
	sess, why := s.lookup(ctx, r.SessionID, r.Transport, CallerFrom(ctx).Owner)
	switch why {
	case NotRefused:
		return sess, Reply{}
	case RefusedFull:
		return nil, busy(ErrTooManySessions)
	case RefusedOverShare:
		return nil, busy(ErrQuota)
	case RefusedUnavailable:
		return nil, unavailable()
	}
	return nil, refusal(RefusedUnknownSession, "Session not found: it ended or never existed; initialize again")
}

// unsupported is the refusal of a MCP-Protocol-Version the server cannot
// speak ("" when it can, or none is named). Any supported revision is
// accepted, also one older than the session negotiated.
func (s *Server) unsupported(version string) string {
	if version == "" || s.sessionSpec(version) != nil || s.statelessSpec(version) != nil {
		return ""
	}
	supported := append(s.sessionRevisions(), s.statelessRevisions()...)
	return "Bad Request: unsupported MCP-Protocol-Version " + strconv.Quote(version) + "; supported: " + strings.Join(supported, ", ")
}

func refusal(why Refusal, msg string) Reply {
	return Reply{Refused: why, Body: jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: wire.CodeInvalidRequest, Message: msg})}
}

func (c *Call) refuse(why Refusal, body []byte) *Call {
	c.kind, c.refusal = callRefused, &Reply{Body: body, Refused: why}
	return c
}

func (c *Call) refuseWith(why Refusal, msg string) *Call {
	r := refusal(why, msg)
	c.kind, c.refusal = callRefused, &r
	return c
}

// busy is the reply to an initialize the server has no room for: RefusedFull, or
// RefusedOverShare when the client holds its share of sessions.
func busy(err error) Reply {
	why := RefusedFull
	if errors.Is(err, ErrQuota) {
		why = RefusedOverShare
	}
	body := jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: wire.CodeServerBusy, Message: "Server busy: " + strings.TrimPrefix(err.Error(), "server: ")})
	return Reply{Body: body, Refused: why, RetryAfter: 5}
}

// unavailable is the reply to a request for a session the SessionStore
// could not be asked about (it is unreachable): the session may well
// exist, so the client is told to try again, not to initialize again.
func unavailable() Reply {
	body := jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: wire.CodeInternalError, Message: "Service unavailable: the session store cannot be reached; try again"})
	return Reply{Body: body, Refused: RefusedUnavailable, RetryAfter: 2}
}

// Refused reports the reply of a body that cannot be served.
func (c *Call) Refused() (Reply, bool) {
	if c.refusal == nil {
		return Reply{}, false
	}
	return *c.refusal, true
}

// Streams reports whether the answer may go on an event stream: a call
// with requests, not initialize, and not a batch of a session revision
// (a stateless revision refuses batches in its own words).
func (c *Call) Streams() bool {
	switch {
	case c.kind == callRefused || c.kind == callInitialize || !c.in.HasRequests():
		return false
	case c.kind == callStateless:
		return true
	}
	return !c.in.batch && !c.in.IsInitialize()
}

// SessionID is the session kept for the call, whose stream events the
// transport keeps for resumption ("": none, the call stands alone).
func (c *Call) SessionID() string {
	if c.kind != callSession {
		return ""
	}
	return c.sess.ID()
}

// Ended reports whether the call's session has ended since Route found it
// (a DELETE, an expiry): its client must initialize again.
func (c *Call) Ended() bool {
	if c.kind != callSession {
		return false
	}
	c.sess.mu.Lock()
	defer c.sess.mu.Unlock()
	return c.sess.closed
}

// Epitaph is what the call's client gets, on its event stream, if the
// process running the call dies before answering: a -32603 for each of
// its requests, saying so (a store that processes share keeps it, and
// another process sends it when the client resumes the stream).
func (c *Call) Epitaph() []byte {
	e := &wire.Error{Code: wire.CodeInternalError, Message: "Internal error: the server that ran this request stopped before it answered; send the request again"}
	var answers [][]byte
	for _, it := range c.in.items {
		if it.Msg != nil && it.Msg.Kind == jsonrpc.Request {
			answers = append(answers, jsonrpc.EncodeError(it.Msg.ID, e))
		}
	}
	switch {
	case len(answers) == 0:
		return nil
	case !c.in.batch:
		return answers[0]
	}
	return append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']')
}

// Prime reports whether the call's event stream starts with a priming
// event (an id, no data), as its revision's transport says.
func (c *Call) Prime() bool { return c.kind == callSession && c.sess.Priming() }

// StreamCloser ends the response that carries a call before the call
// ends, where the transport can resume it (a method's CloseStream).
type StreamCloser interface{ CloseStream() }

// Run serves the call; messages about it go to out (nil: the session's
// stream, if any). closeEarly, when not nil, ends the response before the
// call ends.
//
// The protocol decides what ends a call: over a session a client's
// disconnect is not a cancellation (it sends notifications/cancelled for
// that), so the call goes on without the request's context until it ends
// or the session does; a stateless call is its request, and ends with it
// or with the caller's credential.
func (c *Call) Run(ctx context.Context, out Outbox, closeEarly StreamCloser) Reply {
	if c.refusal != nil {
		return *c.refusal
	}
	if c.kind == callInitialize {
		sess, err := c.srv.NewSession("", nil, Transport(c.transport), OpenedBy(CallerFrom(ctx)))
		if errors.Is(err, errStoreUnavailable) {
			return unavailable()
		}
		if err != nil {
			return busy(err)
		}
		c.sess = sess
	}
	hasRequests := c.in.HasRequests()
	if c.kind == callStateless || c.kind == callEphemeral {
		// No session to resume in: the call ends with its request, and
		// with the credential it came with.
		if exp := CallerFrom(ctx).Expires; !exp.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, exp)
			defer cancel()
		}
	}
	if c.kind == callStateless {
		body, code := c.srv.ServeStateless(context.WithValue(ctx, transportKey{}, c.transport), c.in, out, c.headers)
		r := Reply{Body: body, Code: code, RetryAfter: retryAfter(code)}
		if spec := c.srv.statelessSpec(c.in.metaVersion()); spec != nil {
			r.Transport = &spec.Transport
		}
		if !hasRequests {
			return Reply{} // notifications and responses: answered 202 whatever the core made of them
		}
		return r
	}
	// A session's call outlives its request: the client may resume its
	// stream. A task the call starts keeps this context, and so the Call,
	// for its life: the serve paths let go of the body (Incoming.takeBody).
	var served context.Context = ctx
	if c.kind != callEphemeral {
		c.detached = detached{ctx}
		served = &c.detached
	}
	body := c.sess.serve(served, c.in, response{out: out, closeEarly: closeEarly}, false)
	if !hasRequests {
		return Reply{} // notifications and responses: answered 202 whatever the core made of them (it logs what it refuses)
	}
	r := Reply{Body: body}
	if c.kind == callInitialize {
		if !c.sess.negotiated() {
			c.sess.Close() // initialize failed: nothing to keep
		} else {
			r.SessionID = c.sess.ID()
		}
	}
	return r
}

func retryAfter(code int) int {
	if code == wire.CodeServerBusy {
		return 1
	}
	return 0
}
