package core

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Observer is told of every request and notification the core serves, and
// of every session that ends: package observe turns that into metrics,
// traces and an access log. Its methods are called on the serving path:
// they must be quick and safe for concurrent use.
type Observer interface {
	// Serve is called as a message is taken in, before it is validated.
	// The context it returns is the call's (the handler's, e.g. with a
	// span); the call is the observer's handle on it, given back to Finish
	// once, when it has been answered (an `any`, so that an adapter passes
	// its own through without allocating).
	Serve(ctx context.Context, m Served) (context.Context, any)
	// Finish is told how the message Serve returned call for was answered.
	Finish(call any, a Answer)
	// Ask is called as the server sends the client a request on behalf
	// of a call (sampling, elicitation, roots: ctx is the call's); meta is
	// the request's params._meta, where the observer may put the trace
	// context. done is called with the answer's error code (0 for a
	// result).
	Ask(ctx context.Context, r Asked, meta map[string]any) (done func(code int))
	// SessionEnded is called when a session ends.
	SessionEnded(s EndedSession)
}

// Served is a request or notification as the core takes it in.
type Served struct {
	Method string
	// Target is what the request names: the tool of tools/call, the
	// prompt of prompts/get, the resource of resources/read, "" for
	// others. It is the client's input: an observer that makes labels
	// of it bounds it to what is registered.
	Target    string
	ID        wire.ID        // zero for a notification
	Revision  string         // the session's, or the one the request names ("" before initialize)
	Session   string         // "" without one (a stateless request)
	Transport string         // the session's transport ("" when not named)
	Meta      map[string]any // params._meta, where the trace context travels
	// Arguments are the arguments of tools/call and prompts/get (for a
	// debug log line; never a label).
	Arguments any
}

// Asked is a request the server sends the client.
type Asked struct {
	Method, Revision, Session string
	ID                        wire.ID
}

// Answer is how a message was answered.
type Answer struct {
	// Code is the JSON-RPC error code of the answer, 0 for a result (and
	// for a notification, which has none).
	Code int
	// ToolError: a tools/call result with isError.
	ToolError bool
	// Refused names the definition the message failed validation against
	// ("" when it did not), and RefusedBy the failed schema keyword.
	Refused, RefusedBy string
	Revision           string // the revision it was served under (initialize negotiates it)
	// Unanswered: a request that got no answer (the client cancelled it).
	Unanswered bool
}

// EndedSession is a session that ended.
type EndedSession struct {
	ID, Revision, Transport string
	Lasted                  time.Duration
	// Everywhere: the session ended here, not just this process's copy of
	// it (one that another process serves too, from the shared store), nor
	// a copy that learned of an end another process observed. A session
	// that expired from the store unseen is told by the copies that find
	// it gone, so with several such copies more than once.
	Everywhere bool
}

// WithObserver makes the server tell o of what it serves (package
// observe: metrics, traces, the access log). Without one nothing is
// observed and nothing is paid for it.
func WithObserver(o Observer) Option { return optionFunc(func(c *config) { c.observer = o }) }

// observation collects what the core learns of a call while serving it,
// for the Observer.
type observation struct {
	context.Context // the call's, which carries the observation itself: one allocation
	observer        Observer
	call            any // the observer's handle on the call
	request         bool
	// toolError may be written by a task the call started, which runs
	// on after the call has been answered: what it notes then is not the
	// call's (ended).
	toolError, ended   atomic.Bool
	refused, refusedBy string
}

func (o *observation) Value(key any) any {
	if key == (observationKey{}) {
		return o
	}
	return o.Context.Value(key)
}

type observationKey struct{}

// transportKey carries the name of the transport a stateless request came
// over (Route.Transport), for the observer.
type transportKey struct{}

// observe starts observing a message; end ends it with the reply (nil for
// a notification) and the revision served. Without an Observer it is nil,
// and end does nothing.
func (s *Server) observe(ctx context.Context, m Served) (context.Context, *observation) {
	if s.cfg.observer == nil {
		return ctx, nil
	}
	o := &observation{Context: ctx, observer: s.cfg.observer, request: !m.ID.IsZero()}
	ctx, o.call = s.cfg.observer.Serve(o, m)
	return ctx, o
}

// end tells the Observer how the message was answered.
func (o *observation) end(reply []byte, revision string) {
	if o == nil || o.ended.Swap(true) {
		return
	}
	o.observer.Finish(o.call, Answer{Code: replyCode(reply), ToolError: o.toolError.Load(), Refused: o.refused, RefusedBy: o.refusedBy,
		Revision: revision, Unanswered: o.request && reply == nil})
}

// observeRefused observes a message the core answers with an error
// before it serves it (one it cannot read, a request it is too busy
// for): m.Method may be "".
func (s *Server) observeRefused(ctx context.Context, m Served, reply []byte) {
	if s.cfg.observer != nil {
		_, o := s.observe(ctx, m)
		o.end(reply, m.Revision)
	}
}

// served describes a message for the observer.
func served(msg *jsonrpc.Message, revision, session, transport string) Served {
	m := Served{Method: msg.Method, ID: msg.ID, Revision: revision, Session: session, Transport: transport}
	if params, ok := msg.Params.(map[string]any); ok {
		if p := generated.NameParam(msg.Method); p != "" && msg.Method != mcp.MethodGetTask && msg.Method != mcp.MethodUpdateTask && msg.Method != mcp.MethodCancelTask {
			m.Target, _ = params[p].(string)
		}
		m.Meta = metaOf(params)
		m.Arguments = params["arguments"]
	}
	return m
}

// noteRefused records that validation refused the message.
func noteRefused(ctx context.Context, err error) {
	o, _ := ctx.Value(observationKey{}).(*observation)
	var ve *wire.ValidationError
	if o != nil && errors.As(err, &ve) {
		o.refused, o.refusedBy = ve.Definition, ve.Keyword
	}
}

// noteResult records a tool result with isError.
func noteResult(ctx context.Context, result wire.Encoder) {
	if o, _ := ctx.Value(observationKey{}).(*observation); o != nil && !o.ended.Load() {
		if r, ok := result.(*mcp.CallToolResult); ok && r.IsError != nil && *r.IsError {
			o.toolError.Store(true)
		}
	}
}

// replyCode is the error code of an encoded answer (jsonrpc.EncodeError's
// shape: {"jsonrpc":"2.0","id":ID,"error":{"code":N,...}}), 0 for a
// result or nothing.
func replyCode(reply []byte) int {
	rest, ok := bytes.CutPrefix(reply, []byte(`{"jsonrpc":"2.0",`))
	if !ok {
		return 0
	}
	if r, ok := bytes.CutPrefix(rest, []byte(`"id":`)); ok {
		end := bytes.IndexByte(r, ',')
		if len(r) > 0 && r[0] == '"' { // a string id: to its closing quote
			end = -1
			for i := 1; i < len(r); i++ {
				if r[i] == '\\' {
					i++
				} else if r[i] == '"' {
					end = i + 1
					break
				}
			}
		}
		if end < 0 || end >= len(r) || r[end] != ',' {
			return 0
		}
		rest = r[end+1:]
	}
	num, ok := bytes.CutPrefix(rest, []byte(`"error":{"code":`))
	if !ok {
		return 0
	}
	i := 0
	for i < len(num) && (num[i] == '-' || num[i] >= '0' && num[i] <= '9') {
		i++
	}
	code, err := strconv.Atoi(string(num[:i]))
	if err != nil {
		return 0
	}
	return code
}
