package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Client is what a program tells servers about itself: its name, the
// handlers for what servers may ask of it, and how strict to be. One
// Client connects to any number of servers.
type Client struct {
	info       mcp.Implementation
	revision   string
	sampling   func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error)
	elicit     func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error)
	roots      func(context.Context) ([]*mcp.Root, error)
	onLog      func(context.Context, *mcp.LoggingMessageNotificationParams)
	onNotify   func(ctx context.Context, method string, params wire.Encoder)
	violations func(*Violation)
	timeout    time.Duration
	log        *slog.Logger
	maxRounds  int
	tasks      bool
	tracer     trace.Tracer // nil: no spans
	meters     *meters      // nil: no metrics
}

// Option configures a Client.
type Option func(*Client)

// WithProtocolVersion sets the revision to ask for (default: the newest
// revision with sessions, 2025-11-25). "2026-07-28" connects with
// server/discover and sends every request on its own; a server that does
// not speak it gets initialize with the newest session revision instead.
func WithProtocolVersion(revision string) Option { return func(c *Client) { c.revision = revision } }

// WithSampling answers the server's sampling/createMessage (and declares
// the sampling capability).
func WithSampling(fn func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error)) Option {
	return func(c *Client) { c.sampling = fn }
}

// WithElicitation answers the server's elicitation/create (and declares
// the elicitation capability).
func WithElicitation(fn func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error)) Option {
	return func(c *Client) { c.elicit = fn }
}

// WithRoots answers the server's roots/list (and declares roots).
func WithRoots(fn func(context.Context) ([]*mcp.Root, error)) Option {
	return func(c *Client) { c.roots = fn }
}

// WithLogHandler receives the server's log messages
// (notifications/message), in order, on a goroutine of the session's (it
// may call the session). At most 256 wait for it: past that, the newest
// are dropped and logged (WithLogger), so that a handler that is behind
// never stops the session from reading its answers.
func WithLogHandler(fn func(context.Context, *mcp.LoggingMessageNotificationParams)) Option {
	return func(c *Client) { c.onLog = fn }
}

// WithNotificationHandler receives the other notifications of the server
// (list changes, resource updates, ...), decoded, in order, on a goroutine
// of the session's (it may call the session: list the tools again on
// list_changed); progress goes to the call that asked for it
// (WithProgress). It shares WithLogHandler's queue and its bound.
func WithNotificationHandler(fn func(ctx context.Context, method string, params wire.Encoder)) Option {
	return func(c *Client) { c.onNotify = fn }
}

// WithTasks declares the tasks extension of 2026-07-28
// (io.modelcontextprotocol/tasks) on every request, so that the server may
// answer a tool call with a task; CallTool then follows it to its end:
// tasks/get at the server's poll interval, the task's questions answered
// with the client's handlers through tasks/update, and its result (checked
// as the call's own) or its JSON-RPC error returned. A call given up (its
// context ends) cancels the task. Revisions without the extension ignore
// it; 2025-11-25 tasks are StartTool's.
func WithTasks() Option { return func(c *Client) { c.tasks = true } }

// WithTracerProvider makes a client span of every request with tp, on
// the MCP semantic conventions, and carries its trace context to the
// server in params._meta (traceparent), so that the server's span is its
// child.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *Client) { c.tracer = tp.Tracer("github.com/mcpstack/mcpstack/client") }
}

// WithMeterProvider records the client pair of the MCP semantic
// conventions' metrics with mp: mcp.client.operation.duration per request,
// mcp.client.session.duration per session.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *Client) { c.meters = newMeters(mp.Meter("github.com/mcpstack/mcpstack/client")) }
}

// WithViolationHandler reports protocol violations to fn instead of
// failing: a result that breaks its schema is still decoded where it can
// be, a notification or request still handled. Without it a violation
// fails the call it concerns, and a message that concerns no call is
// dropped (and logged).
func WithViolationHandler(fn func(*Violation)) Option { return func(c *Client) { c.violations = fn } }

// WithRequestTimeout bounds every request (default: none beyond the
// context's). A request that times out is cancelled on the server
// (notifications/cancelled).
func WithRequestTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// WithLogger sets where the client logs what it drops (default: nowhere).
func WithLogger(l *slog.Logger) Option { return func(c *Client) { c.log = l } }

// New returns a client named name at version.
func New(name, version string, opts ...Option) *Client {
	c := &Client{
		info:      mcp.Implementation{Name: name, Version: version},
		log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		maxRounds: 10,
	}
	for _, o := range opts {
		o(c)
	}
	if c.revision == "" {
		c.revision = protocol.NewestSession(generated.Specs).Revision
	}
	return c
}

// capabilities are what the client's handlers can answer.
func (c *Client) capabilities() *mcp.ClientCapabilities {
	caps := &mcp.ClientCapabilities{}
	if c.sampling != nil {
		caps.Sampling = &mcp.ClientCapabilitiesSampling{}
	}
	if c.elicit != nil {
		caps.Elicitation = &mcp.ClientCapabilitiesElicitation{}
	}
	if c.roots != nil {
		caps.Roots = &mcp.ClientCapabilitiesRoots{}
	}
	return caps
}

// Connect opens a connection and negotiates: initialize and
// notifications/initialized, or server/discover for a stateless
// revision. The session validates everything the server sends from the
// first message on.
func (c *Client) Connect(ctx context.Context, t Transport) (*Session, error) {
	spec := generated.Lookup(c.revision)
	if spec == nil {
		return nil, fmt.Errorf("client: unknown protocol revision %q", c.revision)
	}
	conn, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: connect: %w", err)
	}
	s := newSession(c, conn, spec)
	if spec.Stateless() {
		err = s.discover(ctx)
		var we *wire.Error
		var he *HTTPError
		if errors.As(err, &we) && (we.Code == wire.CodeMethodNotFound || we.Code == wire.CodeInvalidRequest || we.Code == wire.CodeUnsupportedProtocolVersion) ||
			errors.As(err, &he) && he.Status == http.StatusBadRequest {
			s.setSpec(protocol.NewestSession(generated.Specs)) // a server of the session revisions
			err = s.initialize(ctx)
		}
	} else {
		err = s.initialize(ctx)
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}
