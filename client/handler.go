package client

import (
	"context"
	"errors"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// startServing answers a request of the server in the background, at
// most maxServing at once (more are answered -32000); its cancel is
// registered before anything runs, so that a notifications/cancelled that
// follows it at once is not lost.
func (s *Session) startServing(msg *jsonrpc.Message, body []byte) {
	select {
	case s.slots <- struct{}{}:
	default:
		s.refuse(msg, &wire.Error{Code: wire.CodeServerBusy, Message: "Client busy: too many requests of the server in flight"})
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	if _, dup := s.serving[msg.ID]; dup {
		s.mu.Unlock()
		cancel()
		<-s.slots
		s.refuse(msg, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: the id of a request still in flight"})
		return
	}
	s.serving[msg.ID] = cancel
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			delete(s.serving, msg.ID)
			s.mu.Unlock()
			cancel()
			<-s.slots
		}()
		s.serve(ctx, msg, body)
	}()
}

// refuse answers a request of the server that the client does not serve,
// off the read loop: sending may wait on the server, and the server on the
// read loop. At most maxServing refusals are on their way at once; past
// that the request is left unanswered, and logged.
func (s *Session) refuse(msg *jsonrpc.Message, e *wire.Error) {
	select {
	case s.refusing <- struct{}{}:
	default:
		s.unanswered.warn(s.c.log, "client: request of the server left unanswered: too many refusals on their way", "method", excerpt(msg.Method))
		return
	}
	b := jsonrpc.EncodeError(msg.ID, e)
	go func() {
		defer func() { <-s.refusing }()
		s.answer(msg.Method, b)
	}()
}

// answer sends the client's answer to a request of the server.
func (s *Session) answer(method string, b []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.conn.Send(ctx, b); err != nil {
		s.c.log.Debug("client: answering the server", "method", method, "err", err)
	}
}

// serve answers a request of the server (sampling, elicitation, roots,
// ping) with the client's handlers, after checking it against the
// revision's schema. A notifications/cancelled for it cancels ctx.
func (s *Session) serve(ctx context.Context, msg *jsonrpc.Message, body []byte) {
	spec := s.currentSpec()
	m, ok := spec.Method(msg.Method)
	if !ok || !m.ServerToClient || m.Notification {
		s.report(&Violation{Rule: RuleUnknownMethod, Method: excerpt(msg.Method), Pointer: "/method", Reason: "revision " + spec.Revision + " has no request " + excerpt(msg.Method) + " from server to client", Message: body})
		s.answer(msg.Method, jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeMethodNotFound, Message: "Method not found: " + msg.Method}))
		return
	}
	if err := spec.ValidateMessage(m.Request, msg); err != nil {
		s.report(schemaViolation(msg.Method, "", err, body))
		if s.c.violations == nil {
			s.answer(msg.Method, jsonrpc.EncodeError(msg.ID, wire.InvalidParams(err)))
			return
		}
	}
	result, err := s.handle(ctx, msg.Method, msg.Params)
	if ctx.Err() != nil {
		return // cancelled by the server: no answer
	}
	if err != nil {
		s.answer(msg.Method, jsonrpc.EncodeError(msg.ID, refusal(err)))
		return
	}
	b, err := jsonrpc.EncodeResult(msg.ID, spec.Project(result))
	if err != nil {
		b = jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInternalError, Message: "Internal error"})
	}
	s.answer(msg.Method, b)
}

// handle runs the client's handler for a request of the server.
func (s *Session) handle(ctx context.Context, method string, params any) (wire.Encoder, error) {
	return mcp.DispatchClientHandler(ctx, handlers{s.c}, method, params, s.currentSpec().Index)
}

// refusal is the error sent for a handler's error: a *wire.Error as it is,
// a method the client has no handler for -32601, anything else -32603.
func refusal(err error) *wire.Error {
	var we *wire.Error
	switch {
	case errors.As(err, &we):
		return we
	case errors.Is(err, wire.ErrMethodNotFound):
		return &wire.Error{Code: wire.CodeMethodNotFound, Message: "Method not found: this client has no handler for it"}
	}
	return &wire.Error{Code: wire.CodeInternalError, Message: err.Error()}
}

// handlers is the client's side of the server's requests: the user's
// handlers where given, a refusal (-32601) where not. Every method is
// written out, so that a new server-to-client method of a new revision is
// a compile error here rather than a silent refusal.
type handlers struct{ c *Client }

var _ mcp.ClientHandler = handlers{}

func (h handlers) CreateMessage(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
	if h.c.sampling == nil {
		return nil, wire.ErrMethodNotFound
	}
	return h.c.sampling(ctx, p)
}

func (h handlers) Elicit(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
	if h.c.elicit == nil {
		return nil, wire.ErrMethodNotFound
	}
	res, err := h.c.elicit(ctx, p)
	if err == nil && res != nil {
		withDefaults(p, res)
	}
	return res, err
}

// withDefaults fills the fields of an accepted form that the user left
// out with the defaults of the requested schema (SEP-1034), so that what
// the server gets is what the form showed.
func withDefaults(p mcp.ElicitRequestParams, res *mcp.ElicitResult) {
	form, ok := p.(*mcp.ElicitRequestFormParams)
	if !ok || res.Action != "accept" {
		return
	}
	for name, def := range form.RequestedSchema.Properties {
		prop, _ := def.(map[string]any)
		d, has := prop["default"]
		if !has {
			continue
		}
		if _, given := res.Content[name]; given {
			continue
		}
		if res.Content == nil {
			res.Content = map[string]any{}
		}
		res.Content[name] = d
	}
}

func (h handlers) ListRoots(ctx context.Context, _ *mcp.ListRootsRequestParams) (*mcp.ListRootsResult, error) {
	if h.c.roots == nil {
		return nil, wire.ErrMethodNotFound
	}
	roots, err := h.c.roots(ctx)
	if err != nil {
		return nil, err
	}
	return &mcp.ListRootsResult{Roots: roots}, nil
}

func (handlers) Ping(context.Context, *mcp.RequestParams) (*mcp.EmptyResult, error) {
	return &mcp.EmptyResult{}, nil
}

// Tasks on the client side (2025-11-25) are not supported: the client
// declares no tasks capability, so a server does not ask.

func (handlers) CancelTask(context.Context, *mcp.CancelTaskRequestParams) (*mcp.CancelTaskResult, error) {
	return nil, wire.ErrMethodNotFound
}

func (handlers) GetTask(context.Context, *mcp.GetTaskRequestParams) (*mcp.GetTaskResult, error) {
	return nil, wire.ErrMethodNotFound
}

func (handlers) GetTaskPayload(context.Context, *mcp.GetTaskPayloadRequestParams) (*mcp.GetTaskPayloadResult, error) {
	return nil, wire.ErrMethodNotFound
}

func (handlers) ListTasks(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListTasksResult, error) {
	return nil, wire.ErrMethodNotFound
}

// The notifications are dispatched by Session.notification; these are
// never called.

func (handlers) OnCancelled(context.Context, *mcp.CancelledNotificationParams) error { return nil }
func (handlers) OnElicitationComplete(context.Context, *mcp.ElicitationCompleteNotificationParams) error {
	return nil
}
func (handlers) OnLoggingMessage(context.Context, *mcp.LoggingMessageNotificationParams) error {
	return nil
}
func (handlers) OnProgress(context.Context, *mcp.ProgressNotificationParams) error  { return nil }
func (handlers) OnPromptListChanged(context.Context, *mcp.NotificationParams) error { return nil }
func (handlers) OnResourceListChanged(context.Context, *mcp.NotificationParams) error {
	return nil
}
func (handlers) OnResourceUpdated(context.Context, *mcp.ResourceUpdatedNotificationParams) error {
	return nil
}
func (handlers) OnSubscriptionsAcknowledged(context.Context, *mcp.SubscriptionsAcknowledgedNotificationParams) error {
	return nil
}
func (handlers) OnTaskStatus(context.Context, *mcp.TaskStatusNotificationParams) error { return nil }
func (handlers) OnToolListChanged(context.Context, *mcp.NotificationParams) error      { return nil }
