package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Outbox takes messages for the client, one encoded JSON-RPC message each:
// an SSE stream, a WebSocket, stdout.
type Outbox interface {
	Send(msg []byte) error
}

// ErrNoStream is returned when a message has nowhere to go: no request is
// in flight to carry it and the client keeps no stream open.
var ErrNoStream = errors.New("server: no stream open to the client")

// Session is the state of one client: the negotiated revision, its
// capabilities and log level, its requests in flight and the requests the
// server sent it.
type Session struct {
	srv       *Server
	id        string
	transport string       // the transport that opened it ("" when unnamed)
	caller    Caller       // who opened it: only they may use it
	usage     *clientUsage // its client's count of sessions and calls (nil: no quota)

	ctx    context.Context // cancelled when the session ends
	cancel context.CancelFunc

	mu          sync.Mutex
	spec        *protocol.Spec
	initialized bool
	clientCaps  *mcp.ClientCapabilities
	clientInfo  *mcp.Implementation
	// capsJSON and infoJSON are the client's capabilities and info as
	// it sent them, for the session's state.
	capsJSON, infoJSON json.RawMessage
	logLevel           mcp.LoggingLevel
	subscriptions      map[string]struct{} // resources/subscribe the handler accepted
	subscribing        int                 // resources/subscribe the handler is deciding (roomFor)
	out                Outbox
	inflight           map[wire.ID]*inflight
	pending            map[wire.ID]*pendingCall
	closed             bool
	ephemeral          bool // serves one body and is gone: no server-to-client requests
	neverIdle          bool // the idle timeout does not end it (NeverIdle)
	// endedElsewhere: the store no longer kept it when this copy saved or
	// refreshed: the process that ended it observed its end.
	endedElsewhere atomic.Bool
	touching       atomic.Bool // touchLater runs

	broadcasts notifyQueue // Broadcast's notifications for this session

	// durable: the client reaches the session by id alone (it was opened
	// without a stream), so its state is kept in the SessionStore and
	// outlives this process.
	durable bool
	saveMu  sync.Mutex   // serializes save and the Delete of end
	base    SessionState // the state as this copy last read or wrote it; saveMu and mu
	// delta is what the client changed through this copy since base; mu.
	delta stateDelta
	// retryAt: the last save failed, and the next request tries again
	// from then on (unix nanoseconds; 0: none).
	retryAt atomic.Int64
	// refreshes load the state another process announced, saves save it
	// off the relay's goroutine: one goroutine at a time each.
	refreshes, saves coalesced
	saved            atomic.Int64 // unix nanoseconds of the last save

	opened   time.Time
	nextID   atomic.Int64
	lastUsed atomic.Int64 // unix nanoseconds
	active   atomic.Int32
}

type inflight struct {
	cancel          context.CancelFunc
	cancelledByPeer atomic.Bool
}

type pendingCall struct {
	method string
	reply  chan *jsonrpc.Message
}

func newSession(s *Server, id string, out Outbox) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	sess := &Session{
		opened: time.Now(),
		srv:    s, id: id, ctx: ctx, cancel: cancel, out: out,
		inflight: map[wire.ID]*inflight{}, pending: map[wire.ID]*pendingCall{},
	}
	sess.touch()
	return sess
}

// ID is the session id (the Mcp-Session-Id of HTTP transports).
func (sess *Session) ID() string { return sess.id }

// Done is closed when the session ends.
func (sess *Session) Done() <-chan struct{} { return sess.ctx.Done() }

// negotiated reports whether initialize agreed on a revision.
func (sess *Session) negotiated() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.spec != nil
}

// Priming reports whether the session's streams start with a priming
// event (an id, no data): a fact of its revision's transport.
func (sess *Session) Priming() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.spec != nil && sess.spec.Transport.PrimingEvent
}

// Revision is the negotiated protocol revision ("" before initialize).
func (sess *Session) Revision() string {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.spec == nil {
		return ""
	}
	return sess.spec.Revision
}

// Initialized reports whether the client finished the initialize exchange.
func (sess *Session) Initialized() bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.initialized
}

// Attach makes out the stream for messages not related to a request (the
// GET stream). It fails when one is attached already. detach undoes it.
func (sess *Session) Attach(out Outbox) (detach func(), ok bool) {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if sess.out != nil || sess.closed {
		return nil, false
	}
	sess.out = out
	return func() {
		sess.mu.Lock()
		if sess.out == out {
			sess.out = nil
		}
		sess.mu.Unlock()
	}, true
}

// Stream returns the outbox attached for messages not related to a request
// (nil when none is).
func (sess *Session) Stream() Outbox { return sess.stream() }

func (sess *Session) stream() Outbox {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return sess.out
}

// Close ends the session: calls in flight are cancelled, waiting
// server-to-client requests fail, streams close.
func (sess *Session) Close() { sess.end(true) }

// end ends the session in this process; forget drops its state from the
// store too (the client ended it, or let it expire). A process that shuts
// down keeps the states, for the others that share its store.
func (sess *Session) end(forget bool) {
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		return
	}
	sess.closed = true
	for _, f := range sess.inflight {
		f.cancel()
	}
	sess.mu.Unlock()
	srv := sess.srv
	deleting := forget && sess.durable
	if deleting { // before it is unlisted: a request that misses it from then on does not restore it
		srv.forgetSession(sess.id, time.Now().Add(2*storeTimeout))
	}
	srv.remove(sess) // unlisted before Done fires
	if deleting {
		sess.saveMu.Lock() // after a save under way, so that it does not put the state back
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		// Marked on: a Load that began before the delete ends within
		// storeTimeout of it; a state the store failed to delete is
		// refused here for as long as it could be kept.
		until := time.Now().Add(2 * storeTimeout)
		if err := srv.sessionStore.Delete(ctx, sess.id); err != nil {
			srv.log.Warn("session state not deleted", "session", sessionid.Digest(sess.id), "err", err)
			until = time.Now().Add(max(srv.cfg.idleTimeout, 2*storeTimeout))
		}
		cancel()
		sess.saveMu.Unlock()
		srv.forgetSession(sess.id, until)
	}
	sess.cancel()
	sess.srv.sessionClosed(sess.id, forget)
	if o := sess.srv.cfg.observer; o != nil {
		sess.mu.Lock()
		revision := ""
		if sess.spec != nil {
			revision = sess.spec.Revision
		}
		sess.mu.Unlock()
		o.SessionEnded(EndedSession{ID: sess.id, Revision: revision, Transport: sess.transport, Lasted: time.Since(sess.opened),
			Everywhere: (forget || !sess.durable) && !sess.endedElsewhere.Load()})
	}
}

func (sess *Session) idleSince(now time.Time) time.Duration {
	return now.Sub(time.Unix(0, sess.lastUsed.Load()))
}

func (sess *Session) busy() bool { return sess.active.Load() > 0 }

// Notify sends a notification on the session's stream (not related to any
// request), in the negotiated revision's shape.
func (sess *Session) Notify(ctx context.Context, method string, params wire.Encoder) error {
	sess.mu.Lock()
	spec, ok := sess.spec, sess.initialized
	sess.mu.Unlock()
	if !ok {
		return ErrNoStream
	}
	msg, err := sess.srv.encodeOutgoing(spec, wire.ID{}, method, params)
	if err != nil {
		return err
	}
	out := sess.stream()
	if out == nil {
		if sess.srv.relayToStream(sess, msg) { // the stream may be another process's
			return nil
		}
		return ErrNoStream
	}
	sess.srv.tap(sess.id, ServerToClient, msg)
	return out.Send(msg)
}

// Handle parses and serves a body; see Serve.
func (sess *Session) Handle(ctx context.Context, body []byte, related Outbox) []byte {
	return sess.Serve(ctx, sess.srv.Parse(body), related)
}

// Serve handles every message of a body and returns the encoded answer: one
// response, an array for a batch, nil when nothing is to be answered.
// Notifications and responses are handled in order before requests start;
// the requests of a batch run concurrently. Messages the server sends while
// handling the requests (progress, logs, sampling requests) go to related,
// or to the session's stream when related is nil.
func (sess *Session) Serve(ctx context.Context, in *Incoming, related Outbox) []byte {
	return sess.serve(ctx, in, response{out: related}, false)
}

// response is where the messages of the requests being served go, and
// how their response ends early where the transport can resume it.
type response struct {
	out        Outbox
	closeEarly StreamCloser // nil: the response cannot end before the call
}

// ServeBusy serves a body whose requests the transport cannot take now (it
// serves as many at once as it may): they are answered -32000 at once,
// while the responses and notifications in it are handled as usual, as a
// call in flight may be waiting for one of them. Invalid messages get
// their errors.
func (sess *Session) ServeBusy(ctx context.Context, in *Incoming, related Outbox) []byte {
	return sess.serve(ctx, in, response{out: related}, true)
}

// errBusy answers a request the transport cannot take now.
var errBusy = &wire.Error{Code: wire.CodeServerBusy, Message: "Server busy: too many requests of this connection in flight; retry when one is answered"}

// serve serves a body between the taps; busy answers its requests -32000
// (ServeBusy).
func (sess *Session) serve(ctx context.Context, in *Incoming, related response, busy bool) (reply []byte) {
	sess.srv.tap(sess.id, ClientToServer, in.takeBody())
	defer func() { sess.srv.tap(sess.id, ServerToClient, reply) }()
	if in.err != nil {
		return in.ErrorReply()
	}
	sess.touch()
	sess.active.Add(1)
	defer func() {
		sess.active.Add(-1)
		sess.touch()
	}()
	if !in.batch { // one message: nothing to gather
		reply, serve := sess.screen(ctx, in.items[0], busy, false)
		if serve {
			reply = sess.request(ctx, in.items[0].Msg, related)
		}
		return reply
	}
	answers := make([][]byte, len(in.items))
	var wg sync.WaitGroup
	for i, it := range in.items {
		var serve bool
		if answers[i], serve = sess.screen(ctx, it, busy, true); serve {
			wg.Add(1)
			m := it.Msg
			sess.srv.Go(func() {
				defer wg.Done()
				answers[i] = sess.request(ctx, m, related)
			})
		}
	}
	wg.Wait()
	var out [][]byte
	for _, a := range answers {
		if a != nil {
			out = append(out, a)
		}
	}
	return in.join(out)
}

// screen takes what a message of a body gets without being served: an
// error for a malformed one, a client's response delivered, a
// notification handled, a refusal; serve is true for a request to serve.
func (sess *Session) screen(ctx context.Context, it jsonrpc.Item, busy, inBatch bool) (reply []byte, serve bool) {
	switch {
	case it.Err != nil:
		reply = jsonrpc.EncodeError(it.ID, it.Err)
		sess.refused(ctx, Served{ID: it.ID}, reply)
	case it.Msg.Kind == jsonrpc.Response:
		sess.deliver(it.Msg)
	case it.Msg.Kind == jsonrpc.Notification:
		sess.notification(ctx, it.Msg)
	case inBatch && it.Msg.Method == mcp.MethodInitialize:
		reply = jsonrpc.EncodeError(it.Msg.ID, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: initialize must not be part of a batch"})
		sess.refused(ctx, served(it.Msg, "", sess.id, sess.transport), reply)
	case busy:
		reply = jsonrpc.EncodeError(it.Msg.ID, errBusy)
		sess.refused(ctx, served(it.Msg, "", sess.id, sess.transport), reply)
	default:
		return nil, true
	}
	return reply, false
}

// refused observes a message the session answered without serving it.
func (sess *Session) refused(ctx context.Context, m Served, reply []byte) {
	if sess.srv.cfg.observer == nil {
		return
	}
	m.Session, m.Transport = sess.id, sess.transport
	sess.mu.Lock()
	if sess.spec != nil {
		m.Revision = sess.spec.Revision
	}
	sess.mu.Unlock()
	sess.srv.observeRefused(ctx, m, reply)
}

// request answers one request, observed (a request of a stateless
// revision sent over a session is observed where it is served).
func (sess *Session) request(ctx context.Context, msg *jsonrpc.Message, related response) (reply []byte) {
	srv := sess.srv
	sess.mu.Lock()
	spec := sess.spec
	sess.mu.Unlock()
	if srv.cfg.observer != nil && (spec != nil || msg.Method == mcp.MethodInitialize || metaVersionOf(msg) == "") {
		revision := ""
		if spec != nil {
			revision = spec.Revision
		} else if msg.Method == mcp.MethodInitialize {
			params, _ := msg.Params.(map[string]any)
			revision, _ = params["protocolVersion"].(string)
		}
		var obs *observation
		ctx, obs = srv.observe(ctx, served(msg, revision, sess.id, sess.transport))
		defer func() { // also when the call panics past the handler's recovery
			if msg.Method == mcp.MethodInitialize {
				revision = ""
				sess.mu.Lock()
				if sess.spec != nil {
					revision = sess.spec.Revision // what it negotiated, if it did
				}
				sess.mu.Unlock()
			}
			obs.end(reply, revision)
		}()
	}
	if msg.Method == mcp.MethodInitialize {
		return sess.initialize(ctx, msg)
	}
	if spec == nil {
		if metaVersionOf(msg) != "" {
			// A request of a stateless revision needs no initialize: it
			// carries its version and capabilities itself. It still ends
			// with the session (a listen stream on a socket that closed).
			ctx, cancel := context.WithCancel(context.WithValue(ctx, transportKey{}, sess.transport))
			defer cancel()
			defer context.AfterFunc(sess.ctx, cancel)()
			// In flight on the session as any request: its id is taken
			// until it is answered, notifications/cancelled reaches it,
			// and the session's cap counts it.
			f := &inflight{cancel: cancel}
			if e := sess.track(msg.ID, f); e != nil {
				return jsonrpc.EncodeError(msg.ID, e)
			}
			defer sess.untrack(msg.ID)
			reply, _ = srv.statelessRequest(ctx, msg, related.out, nil)
			if f.cancelledByPeer.Load() {
				return nil // the client cancelled: no answer (spec: SHOULD NOT respond)
			}
			return reply
		}
		if msg.Method != mcp.MethodPing {
			return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: the session is not initialized; send initialize first"})
		}
		spec = srv.sessionSpecs[len(srv.sessionSpecs)-1]
	}
	m, e := srv.admitRequest(ctx, spec, msg)
	if e != nil {
		return jsonrpc.EncodeError(msg.ID, e)
	}
	ctx, cancel := context.WithCancel(ctx) // the session's end cancels it (end, track)
	defer cancel()
	r := &sessionRequest{flight: inflight{cancel: cancel}}
	if e := sess.track(msg.ID, &r.flight); e != nil {
		return jsonrpc.EncodeError(msg.ID, e)
	}
	defer sess.untrack(msg.ID)
	done, e := srv.clientSlot(sess.usage, CallerFrom(ctx).Key) // a session not kept (stateless mode) has no usage
	if e != nil {
		return jsonrpc.EncodeError(msg.ID, e)
	}
	r.peer = callPeer{srv: srv, sess: sess, spec: spec, out: related.out, closeEarly: related.closeEarly, token: progressToken(msg.Params), peerCancelled: &r.flight.cancelledByPeer}
	r.call = call{spec: spec, m: m, msg: msg, sess: sess, peer: &r.peer, release: done}
	c := &r.call
	defer c.releaseSlot()
	reply, _ = srv.dispatch(ctx, c)
	return reply
}

// sessionRequest is what serving one request of a session keeps, in one
// allocation rather than three.
type sessionRequest struct {
	flight inflight
	peer   callPeer
	call   call
}

// track lists a request as in flight (notifications/cancelled finds it
// there), within the session's cap and under an id no request in flight
// has; untrack takes it off.
func (sess *Session) track(id wire.ID, f *inflight) *wire.Error {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	if max := sess.srv.cfg.maxInflight; max > 0 && len(sess.inflight) >= max {
		return &wire.Error{Code: wire.CodeServerBusy, Message: fmt.Sprintf("Server busy: this session already has %d requests in flight", max)}
	}
	if _, dup := sess.inflight[id]; dup {
		return &wire.Error{Code: wire.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: id %s is already in use by a request in flight", id)}
	}
	if sess.closed { // ended: it would run on a quota its client may no longer hold
		return &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: the session has ended"}
	}
	sess.inflight[id] = f
	return nil
}

func (sess *Session) untrack(id wire.ID) {
	sess.mu.Lock()
	delete(sess.inflight, id)
	sess.mu.Unlock()
}

// roomFor holds a place among the session's subscriptions for a
// resources/subscribe while the handler decides, or refuses it past the
// bound: a subscription the session could not keep would be acknowledged
// and then never heard of. The place is a count, not the URI: nothing of
// a resource reaches the session before the handler accepts it. release
// gives the place back once remember has kept (or not) the URI.
func (sess *Session) roomFor(msg *jsonrpc.Message) (release func(), e *wire.Error) {
	if msg.Method != mcp.MethodSubscribe {
		return func() {}, nil
	}
	params, _ := msg.Params.(map[string]any)
	uri, _ := params["uri"].(string)
	sess.mu.Lock()
	defer sess.mu.Unlock()
	// A subscription the session has holds a place too: an unsubscribe
	// while the handler decides must not free room that remember then
	// takes back.
	_, has := sess.subscriptions[uri]
	if !has && len(sess.subscriptions)+sess.subscribing >= maxSubscriptions {
		return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: the session is subscribed to %d resources, the most it may; unsubscribe from one first", maxSubscriptions),
			Data: map[string]any{"field": "/params/uri", "reason": fmt.Sprintf("more than %d subscriptions", maxSubscriptions)}}
	}
	sess.subscribing++ // a place while the handler decides, also for one it has
	return func() {
		sess.mu.Lock()
		sess.subscribing--
		sess.mu.Unlock()
	}, nil
}

// remember keeps what a successful request set for the session: its log
// level, its resource subscriptions (the handler accepted them; the server
// keeps them, so that no app keeps subscriber maps of its own).
func (sess *Session) remember(msg *jsonrpc.Message) {
	params, _ := msg.Params.(map[string]any)
	switch msg.Method {
	case mcp.MethodSetLevel:
		level, _ := params["level"].(string)
		sess.mu.Lock()
		sess.logLevel = mcp.LoggingLevel(level)
		if sess.durable {
			sess.delta.level = level
		}
		sess.mu.Unlock()
	case mcp.MethodSubscribe, mcp.MethodUnsubscribe:
		uri, _ := params["uri"].(string)
		sess.mu.Lock()
		if sess.durable {
			sess.delta.subscribe(uri, msg.Method == mcp.MethodSubscribe)
		}
		if msg.Method == mcp.MethodUnsubscribe {
			delete(sess.subscriptions, uri)
		} else {
			if sess.subscriptions == nil {
				sess.subscriptions = map[string]struct{}{}
			}
			sess.subscriptions[uri] = struct{}{} // roomFor held its place, within maxSubscriptions
		}
		sess.mu.Unlock()
	default:
		return
	}
	sess.save(sess.ctx)
}

// rawMember is the member name of params as the client sent it (nil when
// it has none).
func rawMember(params any, name string) json.RawMessage {
	p, _ := params.(map[string]any)
	v, ok := p[name]
	if !ok {
		return nil
	}
	b, err := jsontree.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// maxSubscriptions bounds the resources one session may subscribe to.
const maxSubscriptions = 1024

// subscribed reports whether the session subscribed to uri.
func (sess *Session) subscribed(uri string) bool {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	_, ok := sess.subscriptions[uri]
	return ok
}

// initialize negotiates the revision and answers with the handler's
// capabilities.
func (sess *Session) initialize(ctx context.Context, msg *jsonrpc.Message) []byte {
	srv := sess.srv
	requested := ""
	if p, ok := msg.Params.(map[string]any); ok {
		requested, _ = p["protocolVersion"].(string)
	}
	spec := srv.negotiate(requested)
	m, _ := spec.Method(mcp.MethodInitialize)
	if err := spec.ValidateMessage(m.Request, msg); err != nil {
		return jsonrpc.EncodeError(msg.ID, wire.InvalidParams(err))
	}
	sess.mu.Lock()
	if sess.spec != nil {
		sess.mu.Unlock()
		return jsonrpc.EncodeError(msg.ID, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: the session is already initialized"})
	}
	sess.mu.Unlock()
	params := new(mcp.InitializeRequestParams)
	if err := params.DecodeValue(msg.Params, spec.Index); err != nil {
		return jsonrpc.EncodeError(msg.ID, wire.InvalidParams(jsontree.At(err, "params")))
	}
	p := &callPeer{srv: srv, sess: sess, spec: spec}
	var res *mcp.InitializeResult
	_, err := srv.guard(msg.Method, func() (wire.Encoder, error) {
		var err error
		res, err = srv.handler.Initialize(peer.With(ctx, p), params)
		return nil, err
	})
	if err != nil {
		return jsonrpc.EncodeError(msg.ID, srv.wireError(msg.Method, err))
	}
	if res == nil {
		res = &mcp.InitializeResult{}
	}
	res.ProtocolVersion = spec.Revision
	capsJSON, infoJSON := rawMember(msg.Params, "capabilities"), rawMember(msg.Params, "clientInfo")
	sess.mu.Lock()
	sess.spec = spec
	caps := params.Capabilities
	sess.clientCaps = &caps
	sess.clientInfo = &params.ClientInfo
	sess.capsJSON, sess.infoJSON = capsJSON, infoJSON
	sess.mu.Unlock()
	sess.save(ctx)
	srv.log.Debug("session initialized", "session", sessionid.Digest(sess.id), "revision", spec.Revision, "requested", requested)
	return srv.encodeResult(spec, m, msg.ID, res)
}

// notification handles one client notification; nothing is answered, so a
// bad one is logged and dropped.
func (sess *Session) notification(ctx context.Context, msg *jsonrpc.Message) {
	srv := sess.srv
	sess.mu.Lock()
	spec := sess.spec
	sess.mu.Unlock()
	revision := ""
	if spec != nil {
		revision = spec.Revision
	}
	if srv.cfg.observer != nil {
		var obs *observation
		ctx, obs = srv.observe(ctx, served(msg, revision, sess.id, sess.transport))
		defer obs.end(nil, revision)
	}
	if spec == nil {
		// A stateless revision's client sends no initialize (stdio,
		// WebSocket): its cancellation still reaches its requests.
		var sp *protocol.Spec
		if msg.Method == mcp.MethodCancelled {
			if sp = srv.statelessSpec(metaVersionOf(msg)); sp == nil {
				sp = protocol.NewestStateless(generated.Specs) // a notification's _meta is optional
			}
		}
		if sp != nil {
			if m, ok := sp.Method(msg.Method); ok && sp.ValidateMessage(m.Request, msg) == nil {
				sess.cancelHere(msg)
				return
			}
		}
		srv.log.Debug("notification before initialize dropped", "method", msg.Method)
		return
	}
	m, ok := spec.Method(msg.Method)
	if !ok || !m.ClientToServer {
		srv.log.Debug("unknown notification dropped", "method", msg.Method, "revision", spec.Revision)
		return
	}
	if err := spec.ValidateMessage(m.Request, msg); err != nil {
		noteRefused(ctx, err)
		srv.log.Debug("invalid notification dropped", "method", msg.Method, "err", err) // a batch of them costs a client nothing: no warning each
		return
	}
	switch msg.Method {
	case mcp.MethodInitialized:
		sess.mu.Lock()
		sess.initialized = true
		sess.delta.initialized = sess.durable
		sess.mu.Unlock()
		sess.save(ctx)
	case mcp.MethodCancelled:
		if !sess.cancelHere(msg) {
			sess.relayOut(msg) // the call may run in another process
		}
	}
	p := &callPeer{srv: srv, sess: sess, spec: spec}
	if _, err := srv.call(peer.With(ctx, p), msg, spec); err != nil {
		srv.log.Warn("notification handler failed", "method", msg.Method, "err", err)
	}
}

// deliver routes a client's response to the server-to-client request
// waiting for it, here or, through the relay, in another process.
func (sess *Session) deliver(msg *jsonrpc.Message) {
	if !sess.deliverHere(msg) {
		sess.relayOut(msg)
	}
}

// deliverHere hands a response to the request of this process that
// waits for it; it reports whether there was one.
func (sess *Session) deliverHere(msg *jsonrpc.Message) bool {
	sess.mu.Lock()
	pc := sess.pending[msg.ID]
	delete(sess.pending, msg.ID)
	sess.mu.Unlock()
	if pc == nil {
		sess.srv.log.Debug("response to no request of this process", "id", msg.ID.String())
		return false
	}
	if due, failed := sess.retryDue(time.Now().UnixNano()); due || !failed {
		sess.saves.run(sess.srv, func() { sess.save(sess.ctx) }) // not on the relay's goroutine
	}
	pc.reply <- msg
	return true
}

// progressToken reads params._meta.progressToken.
func progressToken(params any) wire.ID {
	if raw, ok := metaOf(params)["progressToken"]; ok {
		if id, err := wire.IDFromValue(raw); err == nil {
			return id
		}
	}
	return wire.ID{}
}

// tap hands a message of session ("": none, a stateless revision's) to the
// tap, when there is one: every path of the core records through it.
func (s *Server) tap(session string, dir Direction, msg []byte) {
	if t := s.cfg.tap; t != nil && len(msg) > 0 {
		t.Message(session, dir, msg)
	}
}
