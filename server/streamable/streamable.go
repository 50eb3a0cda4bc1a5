// Package streamable is the Streamable HTTP transport of MCP (2025-03-26 to
// 2025-11-25): one endpoint taking POST (client messages), GET (a stream
// for server messages not related to a request) and DELETE (end of the
// session). It frames bytes and maps errors to HTTP statuses; everything
// MCP is done by the server.Session it hands the messages to.
package streamable

import (
	"context"
	"errors"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/httpx"
	"github.com/mcpstack/mcpstack/wire"
)

// ResponseMode says how a POST carrying requests is answered.
type ResponseMode string

const (
	// SSE answers with an event stream: notifications and server requests
	// about the call come first, the response last.
	SSE ResponseMode = "sse"
	// JSON answers with one JSON body; messages about the call go to the
	// session's GET stream, if one is open.
	JSON ResponseMode = "json"
)

// Option configures the handler.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	stateless bool
	mode      ResponseMode
	maxBody   int64
	keepAlive time.Duration
	retry     time.Duration
	store     EventStore

	writeTimeout time.Duration
}

// WithResponseMode chooses SSE (default) or JSON answers.
func WithResponseMode(m ResponseMode) Option { return optionFunc(func(c *config) { c.mode = m }) }

// WithMaxBody bounds a POST body (default 4 MiB); a larger one gets 413.
func WithMaxBody(n int64) Option { return optionFunc(func(c *config) { c.maxBody = n }) }

// WithStateless keeps no session state for the session revisions either:
// initialize is answered without Mcp-Session-Id, every POST is served on
// its own in the revision its MCP-Protocol-Version header names (2025-03-26
// when absent, as the spec says), and GET and DELETE get 405. What that
// loses: the server cannot send requests to the client (sampling,
// elicitation and roots fail with a clear error), the log level does not
// carry over from logging/setLevel, and streams cannot be resumed.
func WithStateless(on bool) Option { return optionFunc(func(c *config) { c.stateless = on }) }

// defaultRevision is the revision a stateless server assumes for a request
// without MCP-Protocol-Version (2025-06-18 transports: "SHOULD assume
// 2025-03-26").
const defaultRevision = "2025-03-26"

// WithEventStore sets where stream events are kept for resumption (default:
// a MemoryEventStore with the Default* bounds: 1024 events, 5 minutes and 8
// MiB per session, 64 MiB in all).
func WithEventStore(es EventStore) Option { return optionFunc(func(c *config) { c.store = es }) }

// WithRetry sets the reconnection delay announced to clients (default 2s).
func WithRetry(d time.Duration) Option { return optionFunc(func(c *config) { c.retry = d }) }

// WithWriteTimeout bounds one write to an event stream (default 10s): a
// client that takes nothing for that long loses its response, and resumes
// with Last-Event-ID.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithKeepAlive sets the interval of comments on idle GET streams (default 25s).
func WithKeepAlive(d time.Duration) Option { return optionFunc(func(c *config) { c.keepAlive = d }) }

// transportName is what sessions opened here are marked with: other
// transports cannot use them.
const transportName = "streamable"

// primeDelay is how long the headers and priming event of a call's stream
// may wait for its first message before they are sent alone.
const primeDelay = 10 * time.Millisecond

// primingSince is the first revision whose clients expect the priming
// event (an id with empty data) at the start of a stream. It is a transport
// rule, not a schema difference, so it lives here, in one place.
const primingSince = "2025-11-25"

// Handler serves the MCP endpoint.
type Handler struct {
	srv      *server.Server
	cfg      config
	streams  atomic.Int64
	live     sync.Map // stream name -> *eventStream, while events may still come
	shutdown chan struct{}
	once     sync.Once
}

// New returns the endpoint handler; mount it at the MCP path (e.g. /mcp).
func New(srv *server.Server, opts ...Option) *Handler {
	cfg := config{mode: SSE, maxBody: 4 << 20, keepAlive: 25 * time.Second, retry: 2 * time.Second}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.store == nil {
		cfg.store = NewMemoryEventStore(DefaultEventsPerSession, DefaultEventAge)
	}
	h := &Handler{srv: srv, cfg: cfg, shutdown: make(chan struct{})}
	srv.OnSessionClosed(h.sessionClosed)
	return h
}

// sessionClosed drops what the handler keeps for an ended session.
func (h *Handler) sessionClosed(session string) {
	// The streams end first, so that no event of theirs is stored after
	// the store forgot the session.
	h.live.Range(func(_, v any) bool {
		if es := v.(*eventStream); es.session == session {
			es.abort()
		}
		return true
	})
	h.cfg.store.Forget(session)
}

// Shutdown ends the GET streams, so that an http.Server can drain: POSTs in
// flight still finish.
func (h *Handler) Shutdown() { h.once.Do(func() { close(h.shutdown) }) }

// ServeHTTP dispatches on the method.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if ctx := httpx.WithCaller(r); ctx != r.Context() {
		r = r.WithContext(ctx)
	}
	if h.cfg.stateless && r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpx.Error(w, http.StatusMethodNotAllowed, wire.CodeInvalidRequest, "Method Not Allowed: this server is stateless; it has no sessions to stream or delete")
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.post(w, r)
	case http.MethodGet:
		h.get(w, r)
	case http.MethodDelete:
		h.delete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpx.Error(w, http.StatusMethodNotAllowed, wire.CodeInvalidRequest, "method "+r.Method+" not allowed")
	}
}

func accepts(r *http.Request, types ...string) bool {
	accept := r.Header.Values("Accept")
	for _, t := range types {
		found := false
		for _, line := range accept {
			for _, part := range strings.Split(line, ",") {
				mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
				if err == nil && (mt == t || mt == "*/*") {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// checkVersion refuses a MCP-Protocol-Version the server cannot speak. Any
// supported one is accepted, also one older than negotiated.
func (h *Handler) checkVersion(w http.ResponseWriter, r *http.Request) bool {
	v := r.Header.Get("MCP-Protocol-Version")
	if v == "" || h.srv.SessionSpec(v) != nil || h.srv.StatelessSpec(v) != nil {
		return true
	}
	supported := append(h.srv.SessionRevisions(), h.srv.StatelessRevisions()...)
	httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: unsupported MCP-Protocol-Version "+strconv.Quote(v)+"; supported: "+strings.Join(supported, ", "))
	return false
}

// session finds the session a request names; it answers 400 when the
// header is missing and 404 when the session is unknown or ended.
func (h *Handler) session(w http.ResponseWriter, r *http.Request) (*server.Session, bool) {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: missing Mcp-Session-Id header; send initialize first")
		return nil, false
	}
	sess, ok := h.srv.SessionFor(sid, transportName, server.CallerFrom(r.Context()).Owner)
	if !ok {
		httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Session not found: it ended or never existed; initialize again")
		return nil, false
	}
	return sess, true
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "application/json", "text/event-stream") {
		httpx.Error(w, http.StatusNotAcceptable, wire.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream")
		return
	}
	body, ok := httpx.ReadJSON(w, r, h.cfg.maxBody)
	if !ok {
		return
	}
	in := h.srv.Parse(body)
	if in.Err() != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(in.ErrorReply())
		return
	}
	// A client's disconnect is not a cancellation (it sends
	// notifications/cancelled for that): calls go on without the request's
	// context, until they end or the session does.
	ctx := context.WithoutCancel(r.Context())
	if r.Header.Get("Mcp-Session-Id") == "" && (h.srv.StatelessSpec(r.Header.Get("MCP-Protocol-Version")) != nil ||
		!in.IsInitialize() && in.MetaVersion() != "") {
		h.stateless(w, r, in)
		return
	}
	if h.cfg.stateless {
		if !h.checkVersion(w, r) {
			return
		}
		h.ephemeral(w, ctx, r, in)
		return
	}
	if in.IsInitialize() {
		h.initialize(w, ctx, in)
		return
	}
	if !h.checkVersion(w, r) {
		return
	}
	sess, ok := h.session(w, r)
	if !ok {
		return
	}
	if !in.HasRequests() {
		sess.Serve(ctx, in, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.cfg.mode == JSON || in.IsBatch() {
		writeJSON(w, sess.Serve(ctx, in, nil))
		return
	}
	h.serveCall(w, r, ctx, sess, in)
}

// serveCall answers a POST of requests on a resumable event stream. The
// call runs on by itself: when the client drops the response, or the
// method ends it early (CloseStream), its events wait in the event store
// for a GET with Last-Event-ID.
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, ctx context.Context, sess *server.Session, in *server.Incoming) {
	es := h.newEventStream(sess.ID())
	if es.ended() {
		httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Session not found: it ended or never existed; initialize again")
		return
	}
	sw := h.newSSEWriter(w)
	sw.Start()
	primed := sess.Revision() >= primingSince
	es.attach(sw, int(h.cfg.retry/time.Millisecond), primed)
	closeReq := es.closeReq
	if !primed {
		closeReq = nil // without an event id the client could not resume: keep the response
	}
	// Headers and the priming event wait for the first message, unless the
	// call takes longer than primeDelay: then they go out on their own.
	primeTimer := time.AfterFunc(primeDelay, sw.Flush)
	defer primeTimer.Stop()
	expired, stop := server.CallerFrom(r.Context()).Expiry()
	defer stop()
	done := make(chan []byte, 1)
	go func() { done <- sess.Serve(ctx, in, es) }()
	finish := func(reply []byte) {
		if reply != nil {
			_ = es.Send(reply)
		}
		es.finish()
	}
	select {
	case reply := <-done:
		// The response still carries the stream: its last event goes out
		// with the end of the response, in one write.
		if reply != nil {
			_ = es.sendLast(reply)
		}
		es.finish()
	case <-closeReq:
		es.detach(sw)
		go func() { finish(<-done) }()
	case <-r.Context().Done():
		es.detach(sw)
		go func() { finish(<-done) }()
	case <-sw.Dead(): // the client does not read: it can resume with Last-Event-ID
		es.detach(sw)
		go func() { finish(<-done) }()
	case <-expired: // the response ends with its token; the call goes on, resumable with a fresh one
		es.detach(sw)
		go func() { finish(<-done) }()
	}
	sw.close()
}

// ephemeral serves a body of a session revision without keeping a session.
func (h *Handler) ephemeral(w http.ResponseWriter, ctx context.Context, r *http.Request, in *server.Incoming) {
	if in.IsInitialize() {
		writeJSON(w, h.srv.DetachedSession().Serve(ctx, in, nil))
		return
	}
	rev := r.Header.Get("MCP-Protocol-Version")
	if rev == "" {
		rev = defaultRevision
	}
	sess, err := h.srv.EphemeralSession(rev)
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: "+err.Error())
		return
	}
	if !in.HasRequests() {
		sess.Serve(ctx, in, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.cfg.mode == JSON || in.IsBatch() {
		writeJSON(w, sess.Serve(ctx, in, nil))
		return
	}
	stream := h.newLazySSE(w)
	defer stream.close()
	stop := context.AfterFunc(r.Context(), stream.close)
	defer stop()
	reply := sess.Serve(ctx, in, stream)
	if !stream.started() {
		writeJSON(w, reply)
		return
	}
	if reply != nil {
		_ = stream.Send(reply)
	}
	stream.close()
}

// stateless serves a request of a revision without sessions (2026-07-28):
// its headers must agree with its body, closing the stream cancels it, and
// errors about the request itself carry an HTTP status too.
func (h *Handler) stateless(w http.ResponseWriter, r *http.Request, in *server.Incoming) {
	if exp := server.CallerFrom(r.Context()).Expires; !exp.IsZero() {
		// A stateless call is its request: it ends with its token.
		ctx, cancel := context.WithDeadline(r.Context(), exp)
		defer cancel()
		r = r.WithContext(ctx)
	}
	headers := &server.RequestHeaders{
		ProtocolVersion: strings.TrimSpace(r.Header.Get("MCP-Protocol-Version")),
		Method:          strings.TrimSpace(r.Header.Get("Mcp-Method")),
		Name:            strings.TrimSpace(r.Header.Get("Mcp-Name")),
	}
	if !in.HasRequests() {
		h.srv.ServeStateless(r.Context(), in, nil, headers)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.cfg.mode == JSON {
		reply, code := h.srv.ServeStateless(r.Context(), in, nil, headers)
		writeStateless(w, reply, code)
		return
	}
	// Errors found before the handler runs are answered as JSON with their
	// status; a call that runs answers on an event stream, which starts with
	// the first message the handler sends.
	stream := h.newLazySSE(w)
	defer stream.close()
	stop := context.AfterFunc(r.Context(), stream.close)
	defer stop()
	reply, code := h.srv.ServeStateless(r.Context(), in, stream, headers)
	if !stream.started() {
		writeStateless(w, reply, code)
		return
	}
	if reply != nil {
		_ = stream.Send(reply)
	}
	stream.close()
}

// writeStateless answers a stateless request with a JSON body, its status
// from the error code.
func writeStateless(w http.ResponseWriter, reply []byte, code int) {
	status := statusOf(code)
	if status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(reply)
}

// statusOf maps the error code of a stateless answer to its HTTP status.
func statusOf(code int) int {
	switch code {
	case wire.CodeMethodNotFound:
		return http.StatusNotFound
	case wire.CodeParseError, wire.CodeInvalidRequest, wire.CodeInvalidParams, wire.CodeHeaderMismatch,
		wire.CodeMissingRequiredClientCapability, wire.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	case wire.CodeServerBusy:
		return http.StatusTooManyRequests
	}
	return http.StatusOK
}

// initialize opens a session; its id is sent only when initialize
// succeeded, otherwise the session is dropped again.
func (h *Handler) initialize(w http.ResponseWriter, ctx context.Context, in *server.Incoming) {
	sess, err := h.srv.NewSession("", nil, server.Transport(transportName), server.OpenedBy(server.CallerFrom(ctx)))
	if err != nil {
		httpx.Busy(w, err)
		return
	}
	reply := sess.Serve(ctx, in, nil)
	if sess.Revision() == "" {
		sess.Close()
	} else {
		w.Header().Set("Mcp-Session-Id", sess.ID())
	}
	writeJSON(w, reply)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		httpx.Error(w, http.StatusNotAcceptable, wire.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	if !h.checkVersion(w, r) {
		return
	}
	sess, ok := h.session(w, r)
	if !ok {
		return
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		h.resume(w, r, sess, last)
		return
	}
	// The GET stream outlives its responses: when the client drops one,
	// messages wait in the event store, a GET with Last-Event-ID replays
	// them, and a plain GET picks the stream up again.
	es, _ := sess.Stream().(*eventStream)
	if es == nil {
		es = h.newEventStream(sess.ID())
		if es.ended() {
			httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Session not found: it ended or never existed; initialize again")
			return
		}
		if _, ok := sess.Attach(es); !ok {
			es.finish()
			httpx.Error(w, http.StatusConflict, wire.CodeInvalidRequest, "Conflict: this session already has a GET stream open")
			return
		}
	} else if es.attached() {
		httpx.Error(w, http.StatusConflict, wire.CodeInvalidRequest, "Conflict: this session already has a GET stream open")
		return
	}
	sw := h.newSSEWriter(w)
	sw.Start()
	es.attach(sw, int(h.cfg.retry/time.Millisecond), sess.Revision() >= primingSince)
	sw.Flush()
	h.hold(r, sess, es, sw)
}

// hold keeps a response open while it carries a stream, with keep-alive
// comments, until the client leaves, its token expires, the stream or
// session ends, or the server shuts down.
func (h *Handler) hold(r *http.Request, sess *server.Session, es *eventStream, sw *sseWriter) {
	defer sw.close()
	defer es.detach(sw)
	tick := time.NewTicker(h.cfg.keepAlive)
	defer tick.Stop()
	expired, stop := server.CallerFrom(r.Context()).Expiry()
	defer stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-expired: // the stream ends with its token; the client resumes with a fresh one
			return
		case <-sess.Done():
			return
		case <-h.shutdown:
			return
		case <-es.finished:
			return
		case <-sw.Dead():
			return
		case <-tick.C:
			if sw.KeepAlive() != nil {
				return
			}
		}
	}
}

// resume replays the events of a stream after Last-Event-ID, then carries
// what is still to come on this response (2025-11-25: resumption is always
// a GET, whatever started the stream).
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, sess *server.Session, last string) {
	sw := h.newSSEWriter(w)
	defer sw.close() // every path: the writer's output account goes with it
	var es *eventStream
	started := false
	replay := func(id string, data []byte) error {
		if !started {
			sw.Start()
			started = true
		}
		if len(data) == 0 {
			return nil // a priming event
		}
		return sw.event(id, data)
	}
	name, ok := streamOf(last)
	if ok {
		if v, live := h.live.Load(name); live && v.(*eventStream).session == sess.ID() {
			es = v.(*eventStream)
		}
	}
	var err error
	if es != nil {
		es.mu.Lock()     // no event may slip in between the replay and the attach
		es.cur.Store(sw) // so that the end of the session aborts the replay too
		_, err = h.cfg.store.Replay(sess.ID(), last, replay)
		if err == nil && !es.done {
			if es.w != nil {
				es.w.Abort() // the stream moves to this response
			}
			es.setWriter(sw)
		} else {
			es.cur.Store(es.w)
		}
		es.mu.Unlock()
	} else {
		_, err = h.cfg.store.Replay(sess.ID(), last, replay)
	}
	switch {
	case errors.Is(err, ErrEventsGone):
		httpx.Error(w, http.StatusGone, wire.CodeInvalidRequest, "Gone: the events after Last-Event-ID "+strconv.Quote(last)+" are no longer kept; the stream cannot be resumed")
		return
	case errors.Is(err, ErrUnknownEvent):
		httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Not Found: Last-Event-ID "+strconv.Quote(last)+" names no stream of this session")
		return
	case err != nil:
		return
	}
	if !started {
		sw.Start()
	}
	sw.Flush()
	if es == nil || !es.attached() {
		return // the stream had ended: everything is replayed
	}
	h.hold(r, sess, es, sw)
}

// streamOf is the stream name of an event id "<stream>-<seq>".
func streamOf(id string) (string, bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return "", false
	}
	return id[:i], true
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) {
	sess, ok := h.session(w, r)
	if !ok {
		return
	}
	sess.Close()
	w.WriteHeader(http.StatusNoContent)
}

func writeJSON(w http.ResponseWriter, reply []byte) {
	if reply == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(reply)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(reply)
}
