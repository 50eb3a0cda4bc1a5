// Package peer is what a handwritten method can do with the other side of
// the session while it handles a call: report progress, log, and ask the
// client for sampling, elicitation or its roots. The server puts a Peer in
// the context of every call; methods never see a transport or a revision.
package peer

import (
	"context"
	"errors"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Peer is the client as seen from one call.
type Peer interface {
	// Call sends a request to the client and waits for its result,
	// decoded by method (mcp.DecodeResult).
	Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error)
	// Notify sends a notification about the current call.
	Notify(ctx context.Context, method string, params wire.Encoder) error
	// ProgressToken is the token the current request asked progress
	// under; zero when it asked for none.
	ProgressToken() wire.ID
	// LogLevel is the least severe level the client wants; "" when it
	// wants no log messages.
	LogLevel() mcp.LoggingLevel
	// ClientCapabilities are what the client declared.
	ClientCapabilities() *mcp.ClientCapabilities
	// SessionID identifies the session ("" when the transport has none).
	SessionID() string
}

type ctxKey struct{}

// With returns a context carrying p.
func With(ctx context.Context, p Peer) context.Context { return context.WithValue(ctx, ctxKey{}, p) }

// From returns the Peer of the current call, or nil outside a call.
func From(ctx context.Context) Peer {
	p, _ := ctx.Value(ctxKey{}).(Peer)
	return p
}

// ErrNoPeer is returned outside a call, or where the transport cannot reach
// the client (a stateless server asked for a server-to-client request).
var ErrNoPeer = errors.New("peer: no client to talk to in this context")

// ErrNotSupported is returned when the client did not declare the
// capability a request needs.
var ErrNotSupported = errors.New("peer: the client did not declare this capability")

// Progress reports progress of the current call. It does nothing when the
// request carried no progress token. progress must increase from call to
// call; total and message are optional (nil, "").
func Progress(ctx context.Context, progress float64, total *float64, message string) error {
	p := From(ctx)
	if p == nil || p.ProgressToken().IsZero() {
		return nil
	}
	return p.Notify(ctx, mcp.MethodProgress, &mcp.ProgressNotificationParams{
		ProgressToken: p.ProgressToken(),
		Progress:      progress,
		Total:         total,
		Message:       message,
	})
}

// severity orders the logging levels of RFC 5424, least severe first.
var severity = map[mcp.LoggingLevel]int{
	mcp.LoggingLevelDebug: 0, mcp.LoggingLevelInfo: 1, mcp.LoggingLevelNotice: 2,
	mcp.LoggingLevelWarning: 3, mcp.LoggingLevelError: 4, mcp.LoggingLevelCritical: 5,
	mcp.LoggingLevelAlert: 6, mcp.LoggingLevelEmergency: 7,
}

// Enabled reports whether a message of level would reach the client.
func Enabled(ctx context.Context, level mcp.LoggingLevel) bool {
	p := From(ctx)
	if p == nil || p.LogLevel() == "" {
		return false
	}
	return severity[level] >= severity[p.LogLevel()]
}

// Log sends a log message to the client when its level allows it.
func Log(ctx context.Context, level mcp.LoggingLevel, logger string, data any) error {
	if !Enabled(ctx, level) {
		return nil
	}
	return From(ctx).Notify(ctx, mcp.MethodLoggingMessage, &mcp.LoggingMessageNotificationParams{
		Level: level, Logger: logger, Data: data,
	})
}

// CreateMessage asks the client's model for a completion (sampling).
func CreateMessage(ctx context.Context, params *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrNoPeer
	}
	if c := p.ClientCapabilities(); c == nil || c.Sampling == nil {
		return nil, ErrNotSupported
	}
	r, err := p.Call(ctx, mcp.MethodCreateMessage, params)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.CreateMessageResult), nil
}

// Elicit asks the user, through the client, for input.
func Elicit(ctx context.Context, params mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrNoPeer
	}
	if c := p.ClientCapabilities(); c == nil || c.Elicitation == nil {
		return nil, ErrNotSupported
	}
	r, err := p.Call(ctx, mcp.MethodElicit, params)
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ElicitResult), nil
}

// ListRoots asks the client for its roots.
func ListRoots(ctx context.Context) (*mcp.ListRootsResult, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrNoPeer
	}
	if c := p.ClientCapabilities(); c == nil || c.Roots == nil {
		return nil, ErrNotSupported
	}
	r, err := p.Call(ctx, mcp.MethodListRoots, &mcp.RequestParams{})
	if err != nil {
		return nil, err
	}
	return r.(*mcp.ListRootsResult), nil
}

// Ping checks that the client is still there.
func Ping(ctx context.Context) error {
	p := From(ctx)
	if p == nil {
		return ErrNoPeer
	}
	_, err := p.Call(ctx, mcp.MethodPing, &mcp.RequestParams{})
	return err
}
