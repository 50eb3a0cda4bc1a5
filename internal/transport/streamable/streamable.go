// Package streamable is the Streamable HTTP transport of MCP (2025-03-26 to
// 2025-11-25): one endpoint taking POST (client messages), GET (a stream
// for server messages not related to a request) and DELETE (end of the
// session). It frames bytes and maps errors to HTTP statuses; everything
// MCP is done by the server.Server it hands the messages to.
package streamable

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// ResponseMode says how a POST carrying requests is answered.
type ResponseMode string

const (
	// Auto answers with one JSON body when the call ends before it sends
	// anything else, and with SSE's resumable event stream from its first
	// notification or server request on (or once it has run primeDelay,
	// so that a long call can be resumed).
	Auto ResponseMode = "auto"
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

// WithResponseMode chooses Auto (default), SSE or JSON answers.
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

// WithEventStore sets where stream events are kept for resumption (default:
// a MemoryEventStore with the Default* bounds: 1024 events, 5 minutes and 8
// MiB per session, 64 MiB in all).
func WithEventStore(es EventStore) Option { return optionFunc(func(c *config) { c.store = es }) }

// WithRetry sets the reconnection delay announced to clients (default 2s).
func WithRetry(d time.Duration) Option { return optionFunc(func(c *config) { c.retry = d }) }

// WithWriteTimeout bounds one write to an event stream, and the write of
// each 64 KB of a JSON answer over 2 KB (default 10s): a client that takes
// nothing for that long loses its response, and resumes a stream with
// Last-Event-ID.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithKeepAlive sets the interval of comments on idle GET streams (default 25s).
func WithKeepAlive(d time.Duration) Option { return optionFunc(func(c *config) { c.keepAlive = d }) }

// transportName is what sessions opened here are marked with: other
// transports cannot use them.
const transportName = "streamable"

// primeDelay is how long the headers and priming event of a call's stream
// wait at least for its first message before they are sent alone (the
// primer sends them at its next tick but one, up to 1.5 primeDelay in).
const primeDelay = 10 * time.Millisecond

// Handler serves the MCP endpoint.
type Handler struct {
	srv     *core.Server
	cfg     config
	streams atomic.Int64
	// epoch starts this handler's stream names, so that an event id
	// another process made (a replica behind the same load balancer)
	// names no stream here and its resumption is refused, not mistaken.
	epoch    string
	live     sync.Map // stream name -> *eventStream, while events may still come
	listen   sync.Map // session id -> its GET *eventStream
	shutdown chan struct{}
	once     sync.Once
	dates    httpx.Dates // the Date header of JSON answers
	primer   primer      // starts the streams of calls that run primeDelay
}

// New returns the endpoint handler; mount it at the MCP path (e.g. /mcp).
func New(srv *server.Server, opts ...Option) *Handler {
	cfg := config{mode: Auto, maxBody: 4 << 20, keepAlive: 25 * time.Second, retry: 2 * time.Second}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.store == nil {
		cfg.store = NewMemoryEventStore(DefaultEventsPerSession, DefaultEventAge)
	}
	if cfg.writeTimeout <= 0 {
		cfg.writeTimeout = httpx.DefaultWriteTimeout
	}
	h := &Handler{srv: core.Of(srv), cfg: cfg, shutdown: make(chan struct{}), epoch: newEpoch()}
	h.primer.fire = (*callStream).prime
	h.srv.OnSessionEnded(h.sessionClosed)
	return h
}

// sessionClosed drops what the handler keeps for a session that ended
// here, and its stored events when it ended everywhere or the store is
// this process's own: a process that closes leaves the events of a store
// that processes share to those that serve the session on.
func (h *Handler) sessionClosed(session string, everywhere bool) {
	// The streams end first, so that no event of theirs is stored after
	// the store forgot the session.
	h.live.Range(func(_, v any) bool {
		if es := v.(*eventStream); es.session == session {
			es.abort()
		}
		return true
	})
	h.listen.Delete(session)
	if _, shared := h.cfg.store.(StreamHolder); everywhere || !shared {
		h.cfg.store.Forget(session)
	}
}

// Shutdown ends the GET streams, so that an http.Server can drain: POSTs in
// flight still finish.
func (h *Handler) Shutdown() { h.once.Do(func() { close(h.shutdown) }) }

// closing reports whether Shutdown was called.
func (h *Handler) closing() bool {
	select {
	case <-h.shutdown:
		return true
	default:
		return false
	}
}

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

// bothTypes is the Accept line the specification has clients send; the
// types accepts is asked for are both in it, so it needs no parsing.
const bothTypes = "application/json, text/event-stream"

// accepts reports whether r's Accept lists every one of types
// (application/json, text/event-stream or both).
func accepts(r *http.Request, types ...string) bool {
	if vs := r.Header["Accept"]; len(vs) == 1 && vs[0] == bothTypes {
		return true // what clients send, whole: every type asked for here is in it
	}
	for _, t := range types {
		if !httpx.Accepts(r, t) {
			return false
		}
	}
	return true
}

// route is what the core needs of a request besides its body.
func (h *Handler) route(r *http.Request) core.Route {
	route := core.Route{
		Transport: transportName,
		SessionID: httpx.Get(r.Header, httpx.HeaderSessionID),
		Headers: core.RequestHeaders{
			ProtocolVersion: strings.TrimSpace(httpx.Get(r.Header, httpx.HeaderProtocolVersion)),
			Method:          strings.TrimSpace(httpx.Get(r.Header, httpx.HeaderMethod)),
			Name:            strings.TrimSpace(httpx.Get(r.Header, httpx.HeaderName)),
		},
		Stateless: h.cfg.stateless,
	}
	route.Headers.Params, route.Headers.Repeated = mcpHeaders(r.Header)
	return route
}

// mcpHeaders goes once over a request's headers for the
// Mcp-Param-{Name} ones, by Name in lower case (nil when there are none),
// and for an MCP header that came more than once (repeated; "": none).
func mcpHeaders(h http.Header) (params map[string]string, repeated string) {
	for k, vs := range h {
		if len(k) < len("mcp-") || k[0]|0x20 != 'm' || k[1]|0x20 != 'c' || k[2]|0x20 != 'p' || k[3] != '-' {
			continue // most headers, told at their first byte
		}
		param := isParamHeader(k)
		if len(vs) > 1 && (param || strings.EqualFold(k, "mcp-protocol-version") || strings.EqualFold(k, "mcp-method") || strings.EqualFold(k, "mcp-name")) {
			repeated = k
		}
		if !param || len(vs) == 0 {
			continue
		}
		if params == nil {
			params = map[string]string{}
		}
		params[strings.ToLower(k[len(paramPrefix):])] = strings.TrimSpace(vs[0])
	}
	return params, repeated
}

// paramPrefix starts the name of an Mcp-Param-{Name} header.
const paramPrefix = "mcp-param-"

func isParamHeader(k string) bool {
	return len(k) > len(paramPrefix) && strings.EqualFold(k[:len(paramPrefix)], paramPrefix)
}

func (h *Handler) post(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "application/json", "text/event-stream") {
		httpx.Error(w, http.StatusNotAcceptable, wire.CodeInvalidRequest, "Not Acceptable: Accept must list application/json and text/event-stream")
		return
	}
	body, ok := httpx.ReadJSON(w, r, h.cfg.maxBody, h.cfg.writeTimeout)
	if !ok {
		return
	}
	call := h.srv.Route(r.Context(), body, h.route(r))
	if reply, refused := call.Refused(); refused {
		h.writeReply(w, reply)
		return
	}
	switch {
	case !call.Streams() || h.cfg.mode == JSON:
		h.writeReply(w, call.Run(r.Context(), nil, nil))
	case call.SessionID() != "":
		h.serveCall(w, r, call)
	default:
		h.serveAlone(w, r, call)
	}
}

// serveCall answers a call of a session on a resumable event stream. The
// call runs on a worker by itself: when the client drops the response, or
// the method ends it early (CloseStream), its events wait in the event
// store for a GET with Last-Event-ID. In Auto mode the stream starts with
// the call's first message, its request to end the response, or
// primeDelay; a call that ends before all three is answered as JSON.
//
// Until then the handler waits on one channel (cs.wake), not on the
// request's context or the credential's expiry: a quick call, the common
// one, pays for no select, and a client that left, or a credential that
// expired, is seen once the call streams, from primeDelay to 1.5 primeDelay
// in. A call that has ended is
// answered, on its stream too, whatever ended the response meanwhile: it
// was authorized when it came, and the answer is ready.
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, call *core.Call) {
	cs := &callStream{h: h, w: w, r: r, call: call, wake: make(chan struct{}, 1), primeSlot: -1}
	if call.Ended() { // ended between the lookup and now (DELETE, expiry): the client must initialize again
		httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Session not found: it ended or never existed; initialize again")
		return
	}
	if h.cfg.mode != Auto {
		if es, sw := cs.stream(); es.ended() { // ended since, with the stream's headers sent: the stream ends empty
			sw.close()
			return
		}
	}
	if call.Prime() {
		cs.closeEarly = cs
	} // else without an event id the client could not resume: keep the response
	ctx := r.Context()
	cs.ctx = ctx
	h.srv.GoTask(cs)
	// The headers and the priming event go out with the first message, or
	// alone once the call has run primeDelay, so that the client can resume.
	h.primer.add(cs)
	defer h.primer.remove(cs)
	if h.cfg.mode == Auto {
		<-cs.wake
		if reply, ok := cs.answerAsJSON(); ok {
			h.writeReply(w, reply)
			return
		}
	}
	expired, stop := core.CallerFrom(ctx).Expiry()
	defer stop()
	es, sw := cs.stream()
	defer sw.close()
	closeReq := es.closeReq
	if cs.closeEarly == nil {
		closeReq = nil
	}
	for {
		if reply, ok := cs.ended(); ok {
			// The response still carries the stream: its last event goes
			// out with the end of the response, in one write.
			if reply.Body != nil {
				_ = es.sendLast(reply.Body)
			}
			es.finish()
			return
		}
		select {
		case <-cs.wake: // the call ended, or its stream started, or primeDelay passed
			continue
		case <-closeReq:
		case <-ctx.Done():
		case <-sw.Dead(): // the client does not read: it can resume with Last-Event-ID
		case <-expired: // the response ends with its token; the call goes on, resumable with a fresh one
		}
		cs.orphan(es, sw)
		return
	}
}

// callStream is what a session's call sends its messages to: the
// response's resumable event stream, started on first use (at once in SSE
// mode), unless the call was answered as JSON first (Auto mode). It is
// also where the call's worker leaves its reply for the handler.
type callStream struct {
	h    *Handler
	w    http.ResponseWriter
	r    *http.Request // w's: the stream's deadlines depend on its protocol
	call *core.Call
	wake chan struct{} // one token: the call ended, its stream started, or primeDelay passed

	// What the worker runs the call with (RunTask): the request's
	// context, and the stream itself when the call may end it early.
	ctx        context.Context
	closeEarly core.StreamCloser

	primeSlot int    // index in h.primer's list, -1 when off it; guarded by the primer
	primeTick uint64 // the primer's tick when it listed the call; guarded by the primer

	mu       sync.Mutex
	es       *eventStream
	sw       *sseWriter
	json     bool       // answered as JSON: there is no stream
	reply    core.Reply // the call's, once done
	done     bool
	orphaned bool // the response ended first: the worker stores the reply
}

// RunTask runs the call on a worker of the core (Server.GoTask): the
// stream is the task, so the hand-over allocates nothing more.
func (cs *callStream) RunTask() { cs.end(cs.call.Run(cs.ctx, cs, cs.closeEarly)) }

// signal wakes the handler, without waiting: one token is enough, the
// handler reads the state under mu.
func (cs *callStream) signal() {
	select {
	case cs.wake <- struct{}{}:
	default:
	}
}

// end is the worker's last step: the reply goes to the handler, or, when
// the response has ended meanwhile, to the event store.
func (cs *callStream) end(reply core.Reply) {
	cs.mu.Lock()
	cs.reply, cs.done = reply, true
	orphaned, es := cs.orphaned, cs.es
	cs.mu.Unlock()
	if orphaned {
		finish(es, reply)
		return
	}
	cs.signal()
}

// ended returns the call's reply, once it has one.
func (cs *callStream) ended() (core.Reply, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.reply, cs.done
}

// orphan ends the response before the call: the stream goes on without
// it, and its last event waits in the event store.
func (cs *callStream) orphan(es *eventStream, sw *sseWriter) {
	es.detach(sw)
	cs.mu.Lock()
	done, reply := cs.done, cs.reply
	cs.orphaned = !done
	cs.mu.Unlock()
	if done {
		finish(es, reply)
	}
}

// finish stores a call's last message on its stream and ends the stream.
// It is the answer (sendLast): a store that holds the stream's epitaph
// for a process that dies mid-call lets it go with it, as when the
// response carries the answer.
func finish(es *eventStream, reply core.Reply) {
	if reply.Body != nil {
		_ = es.sendLast(reply.Body)
	}
	es.finish()
}

// prime runs primeDelay into the call: its stream starts, unless it was
// answered as JSON, and its headers and priming event go out now.
func (cs *callStream) prime() {
	if _, sw := cs.stream(); sw != nil {
		sw.Flush()
	}
	cs.signal()
}

// stream starts the event stream, once, and returns it with the writer of
// the response that carries it; nil after the call was answered as JSON.
func (cs *callStream) stream() (*eventStream, *sseWriter) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.es == nil && !cs.json {
		cs.es = cs.h.newEventStream(cs.call.SessionID(), "")
		if holder, ok := cs.h.cfg.store.(StreamHolder); ok && cs.call.SessionID() != "" {
			if epitaph := cs.call.Epitaph(); len(epitaph) > 0 {
				release := holder.Hold(cs.es.session, cs.es.name, epitaph)
				cs.es.mu.Lock()
				if cs.es.done { // the session ended at once
					defer release(false)
				} else {
					cs.es.release = release
				}
				cs.es.mu.Unlock()
			}
		}
		cs.sw = cs.h.newSSEWriter(cs.w, cs.r)
		cs.sw.Start()
		cs.es.attach(cs.sw, int(cs.h.cfg.retry/time.Millisecond), cs.call.Prime())
		cs.signal()
	}
	return cs.es, cs.sw
}

// answerAsJSON returns the call's reply when it may be its response's
// JSON body: the call has ended and its stream has not started, and now
// never will.
func (cs *callStream) answerAsJSON() (core.Reply, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.es != nil || !cs.done {
		return core.Reply{}, false
	}
	cs.json = true
	return cs.reply, true
}

// Send stores a message of the call and writes it to the response.
func (cs *callStream) Send(msg []byte) error {
	es, _ := cs.stream()
	if es == nil {
		return errStreamClosed
	}
	return es.Send(msg)
}

// CloseStream ends the response before the call ends (SEP-1699 polling),
// starting it first when nothing was sent: the client needs the priming
// event's id to resume.
func (cs *callStream) CloseStream() {
	if es, _ := cs.stream(); es != nil {
		es.CloseStream()
	}
}

// serveAlone answers a call without a session (stateless mode, or a
// stateless revision) on an event stream that starts with the first
// message the call sends; a call that sends none, or that was refused
// before it ran, is answered as JSON with its status. Closing the
// response closes the stream.
func (h *Handler) serveAlone(w http.ResponseWriter, r *http.Request, call *core.Call) {
	stream := h.newLazySSE(w, r)
	defer stream.close()
	stop := context.AfterFunc(r.Context(), stream.close)
	defer stop()
	expired, stopExpiry := core.CallerFrom(r.Context()).Expiry()
	defer stopExpiry()
	if expired != nil {
		go func() { // the response ends with its credential
			select {
			case <-expired:
				stream.close()
			case <-r.Context().Done():
			}
		}()
	}
	reply := call.Run(r.Context(), stream, nil)
	if !stream.started() {
		h.writeReply(w, reply)
		return
	}
	if reply.Body != nil {
		_ = stream.Send(reply.Body)
	}
	stream.close()
}

// contentTypeJSON is the Content-Type of every JSON answer, one slice for
// all (net/http reads header values and never writes them; Add appends
// past its length, so into a new array).
var contentTypeJSON = []string{"application/json"}

// chunkingSize is net/http's buffer before it chunks a response: an answer
// that fits is sent with a Content-Length net/http counts.
const chunkingSize = 2048

// writeReply writes the core's reply as JSON (202 without a body). A
// body up to chunkingSize gets its Content-Length from net/http when the
// handler returns (a middleware that flushes after it makes it chunked).
func (h *Handler) writeReply(w http.ResponseWriter, r core.Reply) {
	httpx.ArmWrite(w, h.cfg.writeTimeout) // the call may have outlasted its request's deadline
	if r.SessionID != "" {
		w.Header().Set("Mcp-Session-Id", r.SessionID)
	}
	if r.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(r.RetryAfter))
	}
	if r.Body == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	hdr := w.Header()
	hdr["Content-Type"] = contentTypeJSON
	hdr["Date"] = h.dates.Now()
	if len(r.Body) > chunkingSize {
		h.writeLarge(w, r)
		return
	}
	w.WriteHeader(status(r)) // net/http sets the length itself, without allocating
	_, _ = w.Write(r.Body)
}

// errOutputFull refuses a large JSON answer the output budget has no room for.
var errOutputFull = errors.New("the server holds too much output for clients that read slowly; try again")

// largeChunk is how much of a large JSON answer one write deadline covers.
const largeChunk = 64 << 10

// writeLarge writes a JSON answer larger than net/http's buffer, which
// the handler waits on while the client reads it. Like a stream's
// message it counts against the server's output budget, from before its
// headers (a server over its total answers 503 rather than a truncated
// body), and a client that takes nothing of it for the write timeout
// loses it: each chunk of largeChunk has the timeout (net/http lifts the
// deadline when the response ends).
func (h *Handler) writeLarge(w http.ResponseWriter, r core.Reply) {
	rc := http.NewResponseController(w)
	var life sync.Mutex // orders the writes' deadlines, the budget's abort and the end
	aborted, ended := false, false
	out := h.srv.NewOutput(func() {
		go func() { // it must not block, and a deadline can wait on an HTTP/2 connection
			life.Lock()
			defer life.Unlock()
			if !ended { // after the end the deadline would be the next response's
				aborted = true
				_ = rc.SetWriteDeadline(time.Now())
			}
		}()
	})
	defer out.Close()
	defer func() { life.Lock(); ended = true; life.Unlock() }()
	if !out.Take(len(r.Body), h.cfg.writeTimeout, nil) {
		httpx.Busy(w, errOutputFull)
		return
	}
	defer out.Give(len(r.Body))
	w.Header().Set("Content-Length", strconv.Itoa(len(r.Body)))
	w.WriteHeader(status(r))
	for b := r.Body; len(b) > 0; {
		n := min(len(b), largeChunk)
		life.Lock()
		if !aborted {
			_ = rc.SetWriteDeadline(time.Now().Add(h.cfg.writeTimeout))
		}
		life.Unlock()
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		b = b[n:]
	}
	_ = rc.Flush()
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r, "text/event-stream") {
		httpx.Error(w, http.StatusNotAcceptable, wire.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	if h.closing() {
		// This process is going away: the stream is another's to carry
		// (a replica's, from the session's state), not this one's to
		// refuse as unknown.
		w.Header().Set("Retry-After", "1")
		httpx.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Service Unavailable: this server is shutting down; open the stream again")
		return
	}
	sess, refusal, ok := h.srv.SessionOf(r.Context(), h.route(r))
	if !ok {
		h.writeReply(w, refusal)
		return
	}
	if last := httpx.Get(r.Header, httpx.HeaderLastEventID); last != "" {
		h.resume(w, r, sess, last)
		return
	}
	// The GET stream outlives its responses: when the client drops one,
	// messages wait in the event store, a GET with Last-Event-ID replays
	// them, and a plain GET picks the stream up again.
	es, status, why := h.listenStream(sess)
	if es == nil {
		httpx.Error(w, status, wire.CodeInvalidRequest, why)
		return
	}
	sw := h.newSSEWriter(w, r)
	if !es.attachIfFree(sw, int(h.cfg.retry/time.Millisecond), sess.Priming()) {
		sw.close()
		httpx.Error(w, http.StatusConflict, wire.CodeInvalidRequest, "Conflict: this session already has a GET stream open")
		return
	}
	sw.Flush()
	h.hold(r, sess, es, sw, h.shutdown)
}

// listenStream is the session's GET stream in this process, made when the
// session has none here yet; without one, status and refusal say why.
func (h *Handler) listenStream(sess *core.Session) (es *eventStream, status int, refusal string) {
	if v, ok := h.listen.Load(sess.ID()); ok {
		return v.(*eventStream), 0, ""
	}
	es = h.newEventStream(sess.ID(), listenMark)
	if es.ended() {
		return nil, http.StatusNotFound, "Session not found: it ended or never existed; initialize again"
	}
	// Before Attach: a session that ends from here on drops it
	// (sessionClosed). Of two first GETs at once, one stores its stream
	// and the other is refused, rather than both attaching or the
	// second's store replacing the first's.
	if _, raced := h.listen.LoadOrStore(sess.ID(), es); raced {
		es.finish()
		return nil, http.StatusConflict, "Conflict: this session already has a GET stream open"
	}
	if _, ok := sess.Attach(es); !ok {
		h.listen.CompareAndDelete(sess.ID(), es)
		es.finish()
		return nil, http.StatusConflict, "Conflict: this session already has a GET stream open"
	}
	return es, 0, ""
}

// listenMark starts the names of GET streams, which no call stream's name
// starts with: a resumption tells from the name alone a GET stream that
// another process carried.
const listenMark = "_"

// hold keeps a response open while it carries a stream, with keep-alive
// comments, until the client leaves, its token expires, the stream or
// session ends, or shutdown closes: the server's for the GET stream; nil
// for a call's stream, which ends with the call, as a POST's does.
func (h *Handler) hold(r *http.Request, sess *core.Session, es *eventStream, sw *sseWriter, shutdown <-chan struct{}) {
	defer sw.close()
	defer es.detach(sw)
	tick := time.NewTicker(h.cfg.keepAlive)
	defer tick.Stop()
	expired, stop := core.CallerFrom(r.Context()).Expiry()
	defer stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-expired: // the stream ends with its token; the client resumes with a fresh one
			return
		case <-sess.Done():
			return
		case <-shutdown:
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
func (h *Handler) resume(w http.ResponseWriter, r *http.Request, sess *core.Session, last string) {
	sw := h.newSSEWriter(w, r)
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
			if !started { // the headers go out before the stream's next event can
				sw.Start()
				started = true
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
		// Not 404: that tells a client its session is gone, and the
		// session is here.
		httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: Last-Event-ID "+strconv.Quote(last)+" names no stream of this session; open the stream without it")
		return
	case err != nil && !started: // the store failed before anything was sent
		h.srv.Logger().Warn("resuming a stream: replaying its events", "err", err)
		w.Header().Set("Retry-After", "1")
		httpx.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Service Unavailable: the stream's events cannot be read now; try again")
		return
	case err != nil: // part replayed: the client resumes after what it got
		return
	}
	if !started {
		sw.Start()
	}
	if es == nil && ok {
		h.bury(sess.ID(), name, last, sw)
	}
	sw.Flush()
	if es == nil && ok && strings.HasPrefix(name, listenMark) {
		// The session's GET stream, carried by a process that went away
		// (a replica): with its events replayed, this response goes on
		// as the session's GET stream here, a new one whose first id
		// (primed) the client resumes from next. Without it, what the
		// session gets outside its calls would have no way to it here.
		h.adoptListen(r, sess, sw)
		return
	}
	if es == nil || !es.attached() {
		return // the stream ended, or goes on in another process: everything stored is replayed
	}
	var shutdown <-chan struct{} // a call's stream: it ends with the call
	if v, ok := h.listen.Load(sess.ID()); ok && v.(*eventStream) == es {
		shutdown = h.shutdown
	}
	h.hold(r, sess, es, sw, shutdown)
}

// adoptListen carries the session's GET stream on sw, a response already
// started, unless another response carries it here.
func (h *Handler) adoptListen(r *http.Request, sess *core.Session, sw *sseWriter) {
	es, _, _ := h.listenStream(sess)
	if es == nil {
		return
	}
	es.mu.Lock()
	free := es.w == nil
	if free {
		es.attachLocked(sw, int(h.cfg.retry/time.Millisecond), sess.Priming())
	}
	es.mu.Unlock()
	if !free {
		return
	}
	sw.Flush()
	h.hold(r, sess, es, sw, h.shutdown)
}

// bury ends a stream whose process died before its call answered: the
// store gives its epitaph (an error for each request), stored as its last
// event past the last event the client saw, once.
func (h *Handler) bury(session, stream, last string, sw *sseWriter) {
	holder, ok := h.cfg.store.(StreamHolder)
	if !ok {
		return
	}
	seq, err := strconv.ParseInt(last[strings.LastIndexByte(last, '-')+1:], 10, 64)
	if err != nil {
		return
	}
	if id, epitaph, buried := holder.Bury(session, stream, seq); buried {
		_ = sw.event(id, epitaph)
	}
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
	sess, refusal, ok := h.srv.SessionOf(r.Context(), h.route(r))
	if !ok {
		h.writeReply(w, refusal)
		return
	}
	sess.Close()
	w.WriteHeader(http.StatusNoContent)
}

// OpenStreams is the number of event streams the handler has open (for
// metrics).
func (h *Handler) OpenStreams() int {
	n := 0
	h.live.Range(func(any, any) bool { n++; return true })
	return n
}

// newEpoch is a random prefix of stream names: 5 base-36 digits, a
// replica's streams unlike another's but for one chance in 60 million.
func newEpoch() string {
	return strconv.FormatUint(36*36*36*36+rand.Uint64N(35*36*36*36*36), 36) + "."
}
