package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Session is a connection to one server after negotiation: one typed
// method per request of the method table (requests_gen.go, generated),
// list iterators, and Close. It is safe for concurrent use.
type Session struct {
	c      *Client
	conn   Conn
	opened time.Time
	// events runs the user's notification callbacks in order, off the
	// read loop (a callback may call the session).
	events     chan func()
	eventBytes atomic.Int64 // of the notifications in events
	// slots bounds the server's requests served at once.
	slots chan struct{}
	// refusing bounds the refusals of the others on their way.
	refusing chan struct{}
	// droppedNotes and unanswered log what the session drops, each kind
	// with its own count, without a line for each.
	droppedNotes, unanswered dropLog

	mu       sync.Mutex
	spec     *protocol.Spec
	nextID   int64
	pending  map[wire.ID]*call
	progress map[wire.ID]func(*mcp.ProgressNotificationParams) // by progress token
	serving  map[wire.ID]context.CancelFunc                    // the server's requests in flight
	given    []wire.ID                                         // calls given up (cancelled, timed out): their late answers are no violation
	listed   map[string]map[string]string                      // tool -> argument -> its Mcp-Param header, from the last whole tools/list
	relisted map[string]map[string]string                      // the same from the tools/list under way, which replaces listed at its last page
	info     *mcp.Implementation
	caps     *mcp.ServerCapabilities
	instr    string

	done    chan struct{}
	err     error // why done closed
	closing sync.Once
}

// call is a request in flight, and what its answer is checked against.
type call struct {
	method           string
	result, response string // definitions (protocol.Method's, or a task's)
	// task is the definition of a task answer (resultType "task"), where
	// the server may give one (the tasks extension, WithTasks).
	task  string
	reply chan reply
}

type reply struct {
	result any  // the result tree
	valid  bool // it passed the revision's schema
	task   bool // it is a task (a CreateTaskResult of the tasks extension)
	err    error
}

func newSession(c *Client, conn Conn, spec *protocol.Spec) *Session {
	s := &Session{
		c: c, conn: conn, spec: spec, opened: time.Now(),
		pending:  map[wire.ID]*call{},
		progress: map[wire.ID]func(*mcp.ProgressNotificationParams){},
		serving:  map[wire.ID]context.CancelFunc{},
		done:     make(chan struct{}),
		events:   make(chan func(), maxEvents),
		slots:    make(chan struct{}, maxServing),
		refusing: make(chan struct{}, maxServing),
	}
	go s.readLoop()
	go s.runEvents()
	return s
}

// maxServing is how many requests of the server the client serves at
// once; up to as many more are refused with -32000, off the read loop,
// and past those they go unanswered (dropped and logged).
const maxServing = 32

// maxEvents is how many notifications may wait for their callback, and
// maxEventBytes how many bytes of them (as their messages came; one alone
// may be larger).
const (
	maxEvents     = 256
	maxEventBytes = 16 << 20
)

// maxGivenUp is how many calls given up are remembered.
const maxGivenUp = 256

// runEvents runs the notification callbacks, in order.
func (s *Session) runEvents() {
	for {
		select {
		case fn := <-s.events:
			fn()
		case <-s.done:
			return
		}
	}
}

// event queues a callback without waiting: when maxEvents, or
// maxEventBytes of notifications (size is this one's message), are queued
// already, the notification is dropped and logged. Waiting would let a
// callback that calls the session (as WithNotificationHandler allows)
// stall the read loop that must read its answer, behind a server that
// sends notifications faster than the callbacks take them.
func (s *Session) event(method string, size int, fn func()) {
	n := int64(size)
	if queued := s.eventBytes.Add(n); queued > maxEventBytes && queued != n {
		s.eventBytes.Add(-n)
		s.droppedNotes.warn(s.c.log, "client: notification dropped: its handler is behind", "method", method, "queued_bytes", queued-n)
		return
	}
	select {
	case s.events <- func() { defer s.eventBytes.Add(-n); fn() }:
	default:
		s.eventBytes.Add(-n)
		s.droppedNotes.warn(s.c.log, "client: notification dropped: its handler is behind", "method", method, "queued", maxEvents)
	}
}

// Initialize is done by Connect: a session negotiates once.
func (s *Session) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return nil, errors.New("client: the session is initialized already (Connect does it)")
}

// Discover is done by Connect under 2026-07-28; ServerInfo and
// ServerCapabilities give what it said.
func (s *Session) Discover(context.Context, *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	return nil, errors.New("client: the session has discovered the server already (Connect does it)")
}

func (s *Session) setSpec(spec *protocol.Spec) {
	s.mu.Lock()
	s.spec = spec
	s.mu.Unlock()
}

func (s *Session) currentSpec() *protocol.Spec {
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
	s.end(ErrClosed)
	return s.conn.Close()
}

// end fails every call in flight with err, once.
func (s *Session) end(err error) {
	s.closing.Do(func() {
		if m := s.c.meters; m != nil {
			m.session.Record(context.Background(), time.Since(s.opened).Seconds(),
				metric.WithAttributes(attribute.String("mcp.protocol.version", s.currentSpec().Revision)))
		}
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
	res, err := mcp.ServerRequests{Requester: s}.Initialize(ctx, &mcp.InitializeRequestParams{
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
			v.bound()
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
	if method == mcp.MethodCallTool {
		ctx = withParamHeaders(ctx, s.callHeaders(tree))
	}
	var res wire.Encoder
	var err error
	if spec.Stateless() {
		res, err = s.statelessRequest(ctx, spec, m, tree)
	} else if r := s.roundTrip(ctx, spec, m, tree); r.err != nil {
		err = r.err
	} else {
		res, err = s.decodeResult(spec, m, r.result)
	}
	if lt, ok := res.(*mcp.ListToolsResult); ok {
		cursor, _ := tree["cursor"].(string)
		s.learnHeaders(cursor == "", lt)
	}
	return res, err
}

// roundTrip sends one request and waits for its answer: the result tree,
// a *wire.Error, or a *Violation.
func (s *Session) roundTrip(ctx context.Context, spec *protocol.Spec, m protocol.Method, params map[string]any) (r reply) {
	onProgress := progressFrom(ctx)
	// What the transport keeps open for the call (an HTTP response
	// stream, its resumptions) ends with it: afterAnswer later, so that a
	// stream that carried the answer can end by itself and its connection
	// be reused, even when the answer came another way or the server
	// keeps the stream open.
	ctx, cancel := context.WithCancel(ctx)
	defer func() { time.AfterFunc(afterAnswer, cancel) }()
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return reply{err: s.err}
	default:
	}
	s.nextID++
	id := wire.IntID(s.nextID)
	token := wire.StringID(fmt.Sprintf("progress-%d", s.nextID))
	c := &call{method: m.Name, result: m.Result, response: m.Response, reply: make(chan reply, 1)}
	if m.TaskExtension != "" && s.c.tasks {
		c.task = m.TaskResult
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
		params = jsontree.WithMeta(params, "progressToken", token.Value())
	}
	if s.c.tracer != nil || s.c.meters != nil {
		var end func(reply)
		ctx, params, end = s.instrument(ctx, spec, m, id, params)
		defer func() { end(r) }()
	}
	var p any = params
	if len(params) == 0 && !m.ParamsRequired {
		p = nil
	}
	msg, err := jsonrpc.EncodeRequest(id, m.Name, p)
	if err != nil {
		return reply{err: fmt.Errorf("client: %s: %w", m.Name, err)}
	}
	if err := s.conn.Send(ctx, msg); err != nil {
		if v := (*Violation)(nil); errors.As(err, &v) {
			s.report(v) // what the transport found in the answer (not read as messages)
		}
		if ctx.Err() != nil { // given up while sending: the server may have it already
			s.giveUp(id, m.Name, ctx.Err())
			return reply{err: ctx.Err()}
		}
		return reply{err: fmt.Errorf("client: %s: %w", m.Name, err)}
	}
	select {
	case r := <-c.reply:
		if r.err != nil && ctx.Err() != nil {
			// The transport failed because the call was given up (its
			// request ended with ctx): that is the cancellation.
			s.giveUp(id, m.Name, ctx.Err())
			return reply{err: ctx.Err()}
		}
		return r
	case <-ctx.Done():
		s.giveUp(id, m.Name, ctx.Err())
		return reply{err: ctx.Err()}
	case <-s.done:
		return reply{err: s.err}
	}
}

// giveUp forgets a call the caller stopped waiting for: its late answer
// is dropped without a violation, and the server is told (spec:
// notifications/cancelled; never for initialize), in the background and
// bounded, so that a stuck connection does not hold the caller.
func (s *Session) giveUp(id wire.ID, method string, why error) {
	s.forget(id)
	if method == mcp.MethodInitialize {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.notify(ctx, mcp.MethodCancelled, &mcp.CancelledNotificationParams{RequestID: id, Reason: why.Error()}); err != nil {
			s.c.log.Debug("client: notifications/cancelled not sent", "id", id, "err", err)
		}
	}()
}

// forget remembers that call id ended before its answer came (given up,
// or failed by a broken answer): an answer to it later is expected, not a
// violation.
func (s *Session) forget(id wire.ID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.given = append(s.given, id)
	if len(s.given) > maxGivenUp {
		s.given = s.given[len(s.given)-maxGivenUp:]
	}
}

// givenUp reports whether id is a call given up.
func (s *Session) givenUp(id wire.ID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.given {
		if g == id {
			return true
		}
	}
	return false
}

// decodeResult decodes a result tree by its method; one that does not
// decode is a violation too.
func (s *Session) decodeResult(spec *protocol.Spec, m protocol.Method, tree any) (wire.Encoder, error) {
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

// report hands a violation to the handler, or logs it; cut to
// MaxExcerpt first (in place: the caller may return v as the call's error).
func (s *Session) report(v *Violation) {
	v.bound()
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
		var lost *AnswerError
		if errors.As(err, &lost) {
			s.lost(lost)
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

// lost fails the call whose answer the transport could not deliver: a
// body that is not JSON is a violation, a stream that ended first an
// error of the connection.
func (s *Session) lost(e *AnswerError) {
	var err error = e
	if e.Body != nil {
		v := &Violation{Rule: RuleJSON, Reason: "the answer is not JSON", Message: e.Body}
		s.report(v)
		err = v
	}
	if tree, perr := jsontree.Parse(e.RequestID); perr == nil {
		if id, ierr := wire.IDFromValue(tree); ierr == nil && s.deliver(id, reply{err: err}) {
			s.forget(id) // the call failed: the server's real answer may follow
		}
	}
}

// receive validates one body from the server and dispatches its messages.
func (s *Session) receive(body []byte) {
	items, batch, perr := jsonrpc.Parse(body, jsonrpc.Limits{})
	if perr != nil {
		s.report(&Violation{Rule: RuleJSON, Reason: perr.Message, Message: body})
		return
	}
	if spec := s.currentSpec(); batch && !spec.Has(batchDefinition) {
		s.report(&Violation{Rule: RuleJSON, Reason: "a batch: revision " + spec.Revision + " has none", Message: body})
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
			s.startServing(it.Msg, body)
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
		if !s.givenUp(msg.ID) { // a late answer to a call given up is expected
			s.report(&Violation{Rule: RuleUnknownID, Pointer: "/id", Reason: fmt.Sprintf("a response with id %s, which no request in flight has", msg.ID), Message: body})
		}
		return
	}
	spec := s.currentSpec()
	if msg.Error != nil {
		if def := spec.ErrorResponse(); def != "" {
			if err := spec.ValidateMessage(def, msg); err != nil {
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
	// The whole response where the revision defines one per method (it
	// says which results may be input-required), else the result.
	var err error
	at := "" // where the validated value is in the message
	obj, _ := msg.Result.(map[string]any)
	task := c.task != "" && obj["resultType"] == resultTask
	switch {
	case task:
		err, at = spec.Validate(c.task, msg.Result), "/result"
	case c.response != "":
		err = spec.ValidateMessage(c.response, msg)
	default:
		err, at = spec.Validate(c.result, msg.Result), "/result"
	}
	if err != nil {
		v := schemaViolation(c.method, at, err, body)
		s.report(v)
		if s.c.violations == nil {
			s.deliver(msg.ID, reply{err: v})
			return
		}
	}
	s.deliver(msg.ID, reply{result: msg.Result, valid: err == nil, task: task && err == nil})
}

// batchDefinition is what a revision with batches defines.
const batchDefinition = "JSONRPCBatchResponse"

// notification checks and dispatches a notification of the server.
func (s *Session) notification(msg *jsonrpc.Message, body []byte) {
	spec := s.currentSpec()
	m, ok := spec.Method(msg.Method)
	if !ok || !m.ServerToClient || !m.Notification {
		s.report(&Violation{Rule: RuleUnknownMethod, Method: excerpt(msg.Method), Pointer: "/method", Reason: fmt.Sprintf("revision %s has no notification %q from server to client", spec.Revision, excerpt(msg.Method)), Message: body})
		return
	}
	if err := spec.ValidateMessage(m.Request, msg); err != nil {
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
			fn(p) // on the read loop, so that it comes before the call's result
		}
	case *mcp.LoggingMessageNotificationParams:
		if s.c.onLog != nil {
			s.event(msg.Method, len(body), func() { s.c.onLog(ctx, p) })
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
			s.event(msg.Method, len(body), func() { s.c.onNotify(ctx, msg.Method, params) })
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
// notifications/progress of it to fn, before the request returns. fn runs
// on the session's reader: it must be quick and must not call the
// session (the log and notification handlers may).
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

// dropLog logs what a session drops: the first at once, then at most a
// line a second, with the count of those not logged since, so that a
// server's flood is not a flood of log lines.
type dropLog struct {
	mu       sync.Mutex
	next     time.Time
	unlogged int
}

func (d *dropLog) warn(l *slog.Logger, msg string, args ...any) {
	d.mu.Lock()
	now := time.Now()
	if now.Before(d.next) {
		d.unlogged++
		d.mu.Unlock()
		return
	}
	unlogged := d.unlogged
	d.unlogged, d.next = 0, now.Add(time.Second)
	d.mu.Unlock()
	l.Warn(msg, append(args, "dropped_unlogged_before", unlogged)...)
}
