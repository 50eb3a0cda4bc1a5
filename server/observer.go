package server

import (
	"context"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/wire"
)

// Observer is told of every request and notification the server serves,
// and of every session that ends: package observe turns that into
// metrics, traces and an access log. Its methods are called on the
// serving path: they must be quick and safe for concurrent use.
type Observer interface {
	// Serve is called as a message is taken in, before it is validated.
	// The context it returns is the call's (the handler's, e.g. with a
	// span); its Finisher (nil: none) is told once, when it has been
	// answered.
	Serve(ctx context.Context, m Served) (context.Context, Finisher)
	// Ask is called as the server sends the client a request on behalf
	// of a call (sampling, elicitation, roots: ctx is the call's); meta is
	// the request's params._meta, where the observer may put the trace
	// context. done is called with the answer's error code (0 for a
	// result).
	Ask(ctx context.Context, r Asked, meta map[string]any) (done func(code int))
	// SessionEnded is called when a session ends.
	SessionEnded(s EndedSession)
}

// Finisher is told how a message an Observer saw was answered. The server
// calls Finish once, after which the Observer may reuse the Finisher: an
// Observer that wraps another must not use it after Finish either.
type Finisher interface {
	Finish(Answer)
}

// Served is a request or notification as the server takes it in.
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
func WithObserver(o Observer) Option {
	if o == nil {
		return optionFunc(func(*config) {})
	}
	return coreOption(core.WithObserver(observer{o}))
}

// observer gives the core an Observer in its own types.
type observer struct{ o Observer }

func (a observer) Serve(ctx context.Context, m core.Served) (context.Context, any) {
	return a.o.Serve(ctx, Served(m)) // the Finisher passes through the core as it is
}

func (a observer) Finish(call any, ans core.Answer) {
	if f, ok := call.(Finisher); ok { // an observer may hand back no Finisher
		f.Finish(Answer(ans))
	}
}

func (a observer) Ask(ctx context.Context, r core.Asked, meta map[string]any) func(code int) {
	return a.o.Ask(ctx, Asked(r), meta)
}

func (a observer) SessionEnded(s core.EndedSession) { a.o.SessionEnded(EndedSession(s)) }

// Direction says which way a message went.
type Direction string

// The two directions.
const (
	ClientToServer Direction = "c2s"
	ServerToClient Direction = "s2c"
)

// Tap sees every message of every session as it crosses the server: bodies
// as received (a batch is one array), and each message the server sends. It
// must not block; it is called from the goroutines that handle messages.
type Tap interface {
	Message(session string, dir Direction, msg []byte)
}

// WithTap records the traffic, e.g. for `mcpstack serve --record`.
func WithTap(t Tap) Option {
	if t == nil {
		return optionFunc(func(*config) {})
	}
	return coreOption(core.WithTap(tap{t}))
}

type tap struct{ t Tap }

func (t tap) Message(session string, dir core.Direction, msg []byte) {
	t.t.Message(session, Direction(dir), msg)
}
