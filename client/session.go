package client

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/server/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// Session is a connection to one server after negotiation: one typed
// method per request of the method table (mcp.ServerRequests), list
// iterators, and Close. It is safe for concurrent use.
type Session struct {
	mcp.ServerRequests

	c    *Client
	conn Conn

	mu       sync.Mutex
	spec     *wire.Spec
	nextID   int64
	pending  map[wire.ID]*call
	progress map[wire.ID]func(*mcp.ProgressNotificationParams) // by progress token
	serving  map[wire.ID]context.CancelFunc                    // the server's requests in flight
	info     *mcp.Implementation
	caps     *mcp.ServerCapabilities
	instr    string

	done    chan struct{}
	err     error // why done closed
	closing sync.Once
}

// call is a request in flight.
type call struct {
	method string
	reply  chan reply
}

type reply struct {
	result any // the result tree
	err    error
}

func newSession(c *Client, conn Conn, spec *wire.Spec) *Session {
	s := &Session{
		c: c, conn: conn, spec: spec,
		pending:  map[wire.ID]*call{},
		progress: map[wire.ID]func(*mcp.ProgressNotificationParams){},
		serving:  map[wire.ID]context.CancelFunc{},
		done:     make(chan struct{}),
	}
	s.ServerRequests = mcp.ServerRequests{Requester: s}
	go s.readLoop()
	return s
}

func (s *Session) setSpec(spec *wire.Spec) {
	s.mu.Lock()
	s.spec = spec
	s.mu.Unlock()
}

func (s *Session) currentSpec() *wire.Spec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spec
}

// Revision is the negotiated protocol revision.
func (s *Session) Revision() string { return s.currentSpec().Revision }

// ServerInfo is the server's name and version as it gave them.
func (s *Session) ServerInfo() *mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// ServerCapabilities are what the server declared.
func (s *Session) ServerCapabilities() *mcp.ServerCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

// Instructions is what the server said about using it.
func (s *Session) Instructions() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.instr
}

// Done is closed when the connection has ended; Err says why.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is why the session ended (nil while it lasts, ErrClosed after Close).
func (s *Session) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the session and its connection; calls in flight fail with
// ErrClosed.
func (s *Session) Close() error {
	err := s.conn.Close()
	s.end(ErrClosed)
	return err
}

// end fails every call in flight with err, once.
func (s *Session) end(err error) {
	s.closing.Do(func() {
		s.mu.Lock()
		s.err = err
		pending := s.pending
		s.pending = map[wire.ID]*call{}
		for _, cancel := range s.serving {
			cancel()
		}
		s.mu.Unlock()
		for _, c := range pending {
			c.reply <- reply{err: err}
		}
		close(s.done)
	})
}

// initialize negotiates a session revision.
func (s *Session) initialize(ctx context.Context) error {
	spec := s.currentSpec()
	res, err := s.Initialize(ctx, &mcp.InitializeRequestParams{
		ProtocolVersion: spec.Revision,
		Capabilities:    *s.c.capabilities(),
		ClientInfo:      s.c.info,
	})
	if err != nil {
		return fmt.Errorf("client: initialize: %w", err)
	}
	if res.ProtocolVersion != spec.Revision {
		agreed := lookupSession(res.ProtocolVersion)
		if agreed == nil {
			v := &Violation{Rule: RuleVersion, Method: mcp.MethodInitialize, Pointer: "/result/protocolVersion",
				Reason: fmt.Sprintf("the server answered revision %q, which this client does not speak (it asked for %s)", res.ProtocolVersion, spec.Revision)}
			return fmt.Errorf("client: initialize: %w", v)
		}
		s.setSpec(agreed)
	}
	s.mu.Lock()
	s.info, s.caps, s.instr = &res.ServerInfo, &res.Capabilities, res.Instructions
	s.mu.Unlock()
	s.conn.Negotiated(s.Revision())
	return s.notify(ctx, mcp.MethodInitialized, &mcp.NotificationParams{})
}

// Request sends a request and returns its result, decoded by its method:
// what the typed methods of mcp.ServerRequests call. Under a stateless
// revision an input-required result is answered by the client's handlers
// and the request sent again, until it completes.
func (s *Session) Request(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	if s.c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.c.timeout)
		defer cancel()
	}
	spec := s.currentSpec()
	m, ok := spec.Method(method)
	if !ok || !m.ClientToServer {
		return nil, fmt.Errorf("client: revision %s has no request %q from client to server", spec.Revision, method)
	}
	tree := map[string]any{}
	if params != nil {
		if t, ok := spec.Project(params).(map[string]any); ok {
			tree = t
		}
	}
	if spec.Stateless() {
		return s.statelessRequest(ctx, spec, m, tree)
	}
	result, err := s.roundTrip(ctx, spec, m, tree)
	if err != nil {
		return nil, err
	}
	return s.decodeResult(spec, m, result)
}

// roundTrip sends one request and waits for its answer: the result tree,
// a *wire.Error, or a *Violation.
func (s *Session) roundTrip(ctx context.Context, spec *wire.Spec, m wire.Method, params map[string]any) (any, error) {
	onProgress := progressFrom(ctx)
	s.mu.Lock()
	s.nextID++
	id := wire.IntID(s.nextID)
	token := wire.StringID(fmt.Sprintf("progress-%d", s.nextID))
	c := &call{method: m.Name, reply: make(chan reply, 1)}
	if s.pending == nil { // ended
		s.mu.Unlock()
		return nil, s.err
	}
	select {
	case <-s.done:
		s.mu.Unlock()
		return nil, s.err
	default:
	}
	s.pending[id] = c
	if onProgress != nil {
		s.progress[token] = onProgress
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		if onProgress != nil {
			delete(s.progress, token)
		}
		s.mu.Unlock()
	}()
	if onProgress != nil {
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		meta["progressToken"] = token.Value()
		params["_meta"] = meta
	}
	var p any = params
	if len(params) == 0 && !m.ParamsRequired {
		p = nil
	}
	msg, err := jsonrpc.EncodeRequest(id, m.Name, p)
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", m.Name, err)
	}
	if err := s.conn.Send(ctx, msg); err != nil {
		return nil, fmt.Errorf("client: %s: %w", m.Name, err)
	}
	select {
	case r := <-c.reply:
		return r.result, r.err
	case <-ctx.Done():
		if !spec.Stateless() {
			// Tell the server (spec: notifications/cancelled); a stateless
			// request is cancelled by its transport (the HTTP request ends).
			_ = s.notify(context.WithoutCancel(ctx), mcp.MethodCancelled, &mcp.CancelledNotificationParams{RequestID: id, Reason: ctx.Err().Error()})
		}
		return nil, ctx.Err()
	case <-s.done:
		return nil, s.err
	}
}

// decodeResult decodes a result tree by its method; one that does not
// decode is a violation too.
func (s *Session) decodeResult(spec *wire.Spec, m wire.Method, tree any) (wire.Encoder, error) {
	res, err := mcp.DecodeResult(m.Name, tree, spec.Index)
	if err != nil {
		v := schemaViolation(m.Name, "/result", err, nil)
		s.report(v)
		if s.c.violations == nil || res == nil {
			return nil, v
		}
	}
	return res, nil
}

// notify sends a notification.
func (s *Session) notify(ctx context.Context, method string, params wire.Encoder) error {
	spec := s.currentSpec()
	var tree any
	if params != nil {
		tree = spec.Project(params)
	}
	msg, err := jsonrpc.EncodeRequest(wire.ID{}, method, tree)
	if err != nil {
		return err
	}
	return s.conn.Send(ctx, msg)
}

// report hands a violation to the handler, or logs it.
func (s *Session) report(v *Violation) {
	if s.c.violations != nil {
		s.c.violations(v)
		return
	}
	s.c.log.Warn("client: protocol violation", "rule", v.Rule, "method", v.Method, "pointer", v.Pointer, "reason", v.Reason)
}

// readLoop reads and dispatches the server's messages until the
// connection ends.
func (s *Session) readLoop() {
	for {
		msg, err := s.conn.Read(context.Background())
		var broken *BrokenAnswer
		if errors.As(err, &broken) {
			v := &Violation{Rule: RuleJSON, Reason: "the answer is not JSON", Message: broken.Body}
			s.report(v)
			if tree, perr := wire.Parse(broken.RequestID); perr == nil {
				if id, ierr := wire.IDFromValue(tree); ierr == nil {
					s.deliver(id, reply{err: v})
				}
			}
			continue
		}
		if err != nil {
			if errors.Is(err, ErrClosed) {
				s.end(ErrClosed)
			} else {
				s.end(fmt.Errorf("client: connection: %w", err))
			}
			return
		}
		s.receive(msg)
	}
}

// receive validates one body from the server and dispatches its messages.
func (s *Session) receive(body []byte) {
	items, _, perr := jsonrpc.Parse(body, jsonrpc.Limits{})
	if perr != nil {
		s.report(&Violation{Rule: RuleJSON, Reason: perr.Message, Message: body})
		return
	}
	for _, it := range items {
		if it.Err != nil {
			v := &Violation{Rule: RuleJSON, Reason: it.Err.Message, Message: body}
			s.report(v)
			s.deliver(it.ID, reply{err: v}) // the call it answers fails with it
			continue
		}
		switch it.Msg.Kind {
		case jsonrpc.Response:
			s.response(it.Msg, body)
		case jsonrpc.Notification:
			s.notification(it.Msg, body)
		case jsonrpc.Request:
			go s.serve(it.Msg, body)
		}
	}
}

// deliver hands a reply to the call with id; false when there is none.
func (s *Session) deliver(id wire.ID, r reply) bool {
	if id.IsZero() {
		return false
	}
	s.mu.Lock()
	c, ok := s.pending[id]
	if ok {
		delete(s.pending, id)
	}
	s.mu.Unlock()
	if ok {
		c.reply <- r
	}
	return ok
}

// response checks a response against the request it answers.
func (s *Session) response(msg *jsonrpc.Message, body []byte) {
	s.mu.Lock()
	c, ok := s.pending[msg.ID]
	s.mu.Unlock()
	if !ok {
		s.report(&Violation{Rule: RuleUnknownID, Pointer: "/id", Reason: fmt.Sprintf("a response with id %s, which no request in flight has", msg.ID), Message: body})
		return
	}
	spec := s.currentSpec()
	if msg.Error != nil {
		if def := errorDefinition(spec); def != "" {
			if err := spec.Validate(def, msg.Tree); err != nil {
				v := schemaViolation(c.method, "", err, body)
				s.report(v)
				if s.c.violations == nil {
					s.deliver(msg.ID, reply{err: v})
					return
				}
			}
		}
		s.deliver(msg.ID, reply{err: msg.Error})
		return
	}
	m, _ := spec.Method(c.method)
	if err := spec.Validate(resultDefinition(spec, m, msg.Result), msg.Result); err != nil {
		v := schemaViolation(c.method, "/result", err, body)
		s.report(v)
		if s.c.violations == nil {
			s.deliver(msg.ID, reply{err: v})
			return
		}
	}
	s.deliver(msg.ID, reply{result: msg.Result})
}

// errorDefinition is the revision's definition of an error response.
func errorDefinition(spec *wire.Spec) string {
	for _, def := range []string{"JSONRPCErrorResponse", "JSONRPCError"} {
		if spec.Has(def) {
			return def
		}
	}
	return ""
}

// resultDefinition is what a result is checked against: the method's
// result, or an input-required result where the revision has them.
func resultDefinition(spec *wire.Spec, m wire.Method, result any) string {
	if obj, ok := result.(map[string]any); ok && obj["resultType"] == resultInputRequired && spec.Has(inputRequiredDefinition) {
		return inputRequiredDefinition
	}
	return m.Result
}

// notification checks and dispatches a notification of the server.
func (s *Session) notification(msg *jsonrpc.Message, body []byte) {
	spec := s.currentSpec()
	m, ok := spec.Method(msg.Method)
	if !ok || !m.ServerToClient || !m.Notification {
		s.report(&Violation{Rule: RuleUnknownMethod, Method: msg.Method, Pointer: "/method", Reason: fmt.Sprintf("revision %s has no notification %q from server to client", spec.Revision, msg.Method), Message: body})
		return
	}
	if err := spec.Validate(m.Request, msg.Tree); err != nil {
		s.report(schemaViolation(msg.Method, "", err, body))
		if s.c.violations == nil {
			return
		}
	}
	params, err := mcp.DecodeParams(msg.Method, msg.Params, spec.Index)
	if err != nil && msg.Params != nil {
		s.report(schemaViolation(msg.Method, "/params", err, body))
		return
	}
	ctx := context.Background()
	switch p := params.(type) {
	case *mcp.ProgressNotificationParams:
		s.mu.Lock()
		fn := s.progress[p.ProgressToken]
		s.mu.Unlock()
		if fn != nil {
			fn(p)
		}
	case *mcp.LoggingMessageNotificationParams:
		if s.c.onLog != nil {
			s.c.onLog(ctx, p)
		}
	case *mcp.CancelledNotificationParams:
		s.mu.Lock()
		cancel := s.serving[p.RequestID]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	default:
		if s.c.onNotify != nil {
			s.c.onNotify(ctx, msg.Method, params)
		}
	}
}

// progressKey is the context key of a call's progress handler.
type progressKey struct{}

type progressHandler struct {
	fn func(*mcp.ProgressNotificationParams)
}

// WithProgress returns a context whose request asks the server for
// progress (a progress token in _meta) and hands each
// notifications/progress of it to fn.
func WithProgress(ctx context.Context, fn func(*mcp.ProgressNotificationParams)) context.Context {
	return context.WithValue(ctx, progressKey{}, &progressHandler{fn: fn})
}

// progressFrom gives the handler of a call that asked for progress.
func progressFrom(ctx context.Context) func(*mcp.ProgressNotificationParams) {
	if h, _ := ctx.Value(progressKey{}).(*progressHandler); h != nil {
		return h.fn
	}
	return nil
}
