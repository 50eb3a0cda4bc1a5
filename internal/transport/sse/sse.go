// Package sse is the HTTP+SSE transport of MCP 2024-11-05, deprecated since
// 2025-03-26 and kept for clients that still speak it: a GET on the stream
// endpoint opens a session whose server-to-client messages travel on that
// event stream, and the client POSTs its messages to the URL announced in
// the stream's first event.
//
//	GET  /sse                        -> 200 text/event-stream
//	     event: endpoint
//	     data: messages?sessionId=<id>        (relative to the GET's URL)
//
//	     event: message
//	     data: {"jsonrpc":"2.0","id":1,"result":{...}}
//
//	     : keepalive
//
//	POST /messages?sessionId=<id>    -> 202 Accepted, empty body; the answer
//	                                    comes as a message event on the stream
//
// Errors get an HTTP status and a JSON-RPC error body without id: on the
// stream endpoint 405 (not GET), 406 (Accept lacks text/event-stream), 503
// (shutting down, session cap); on the messages endpoint 405 (not POST),
// 400 (no sessionId), 404 (unknown or ended session), 415 (not
// application/json), 413 (body over the limit), 400 with -32700 or -32600
// (not JSON, empty batch). An invalid message inside a valid body is
// answered on the stream, like any answer. Requests are served
// concurrently; initialize, notifications and responses are handled before
// the 202, in the order they are POSTed.
//
// The session lives as long as its stream: when the client disconnects the
// session ends, and its calls in flight are cancelled. Like the other
// transports, this one frames bytes and maps errors to HTTP statuses;
// everything MCP is done by the server.Server.
package sse

import (
	"context"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// Option configures the handler.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	maxBody      int64
	keepAlive    time.Duration
	endpoint     string
	writeTimeout time.Duration
}

// WithWriteTimeout bounds one write to the stream (default 10s): a client
// that takes nothing for that long loses its stream and its session.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithMaxBody bounds a POSTed body (default 4 MiB); a larger one gets 413.
func WithMaxBody(n int64) Option { return optionFunc(func(c *config) { c.maxBody = n }) }

// WithKeepAlive sets the interval of comments on idle streams (default
// 25s; 0 sends none).
func WithKeepAlive(d time.Duration) Option { return optionFunc(func(c *config) { c.keepAlive = d }) }

// WithEndpoint sets where Messages is mounted (default "/messages"), in the
// same path space as the request paths the handler sees. The endpoint
// event announces it relative to the stream's own path (for /sse and
// /messages: "messages?sessionId=..."), so that it still resolves behind a
// proxy that mounts the server under a prefix. A relative path is announced
// as it is.
func WithEndpoint(p string) Option { return optionFunc(func(c *config) { c.endpoint = p }) }

// Handler serves the two endpoints of the transport; mount Stream and
// Messages on their routes.
type Handler struct {
	srv *core.Server
	cfg config

	mu       sync.Mutex
	sessions map[string]*session // the sessions whose stream this handler holds

	shutdown chan struct{}
	once     sync.Once
}

// transportName marks the sessions opened here: other transports cannot
// use them.
const transportName = "sse"

// session is a core.Session with the stream it lives on.
type session struct {
	sess   *core.Session
	stream *stream
	calls  core.InFlight
}

// New returns the handler.
func New(srv *server.Server, opts ...Option) *Handler {
	cfg := config{maxBody: 4 << 20, keepAlive: 25 * time.Second, endpoint: "/messages"}
	for _, o := range opts {
		o.apply(&cfg)
	}
	return &Handler{srv: core.Of(srv), cfg: cfg, sessions: map[string]*session{}, shutdown: make(chan struct{})}
}

// Shutdown drains the transport, for an http.Server's Shutdown: new streams
// get 503, and each open stream ends (and its session with it) as soon as
// the session has no call in flight. POSTs are still taken while a stream
// is open: they carry the answers to the server's own requests that the
// calls in flight may be waiting for.
func (h *Handler) Shutdown() { h.once.Do(func() { close(h.shutdown) }) }

func (h *Handler) shuttingDown() bool {
	select {
	case <-h.shutdown:
		return true
	default:
		return false
	}
}

// Stream is the GET endpoint (e.g. /sse): it opens a session and carries
// its server-to-client messages until the client goes away.
func (h *Handler) Stream() http.Handler { return http.HandlerFunc(h.stream) }

// Messages is the POST endpoint (e.g. /messages) that the endpoint event
// announces.
func (h *Handler) Messages() http.Handler { return http.HandlerFunc(h.messages) }

func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		httpx.Error(w, http.StatusMethodNotAllowed, wire.CodeInvalidRequest, "Method Not Allowed: open the stream with GET")
		return
	}
	if !httpx.Accepts(r, "text/event-stream") {
		httpx.Error(w, http.StatusNotAcceptable, wire.CodeInvalidRequest, "Not Acceptable: Accept must list text/event-stream")
		return
	}
	if h.shuttingDown() {
		w.Header().Set("Retry-After", "5")
		httpx.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Service Unavailable: the server is shutting down")
		return
	}
	st := newStream(h.srv, w, r, h.cfg.writeTimeout)
	caller := httpx.Caller(r)
	sess, err := h.srv.NewSession("", st, core.Transport(transportName), core.OpenedBy(caller))
	if err != nil {
		st.close()
		httpx.Busy(w, err)
		return
	}
	s := &session{sess: sess, stream: st}
	h.mu.Lock()
	h.sessions[sess.ID()] = s
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.sessions, sess.ID())
		h.mu.Unlock()
		st.close()
		sess.Close()
	}()

	st.start()
	if st.Event("", "endpoint", []byte(endpointURL(r.URL.Path, h.cfg.endpoint, sess.ID())), false) != nil {
		return
	}
	var tick <-chan time.Time
	if h.cfg.keepAlive > 0 {
		t := time.NewTicker(h.cfg.keepAlive)
		defer t.Stop()
		tick = t.C
	}
	shutdown := h.shutdown
	var drained <-chan struct{}
	expired, stop := caller.Expiry()
	defer stop()
	for {
		select {
		case <-r.Context().Done(): // the client left
			return
		case <-expired: // the stream (and the session) end with the token that opened it
			return
		case <-sess.Done():
			return
		case <-st.Dead(): // the client does not read
			return
		case <-shutdown:
			shutdown = nil
			drained = s.calls.Idle()
		case <-drained:
			return
		case <-tick:
			if st.KeepAlive() != nil {
				return
			}
		}
	}
}

// endpointURL is the URL the endpoint event announces: the messages
// endpoint relative to the stream's path, with the session id.
func endpointURL(streamPath, endpoint, id string) string {
	return relative(streamPath, endpoint) + "?sessionId=" + id
}

// relative returns a relative reference that resolves, against a URL with
// path from, to the absolute path to. A relative to is returned as it is.
func relative(from, to string) string {
	if !strings.HasPrefix(to, "/") {
		return to
	}
	dir := strings.Split(strings.TrimPrefix(path.Dir("/"+strings.TrimPrefix(from, "/")+"x"), "/"), "/")
	if len(dir) == 1 && dir[0] == "" {
		dir = nil
	}
	target := strings.Split(strings.TrimPrefix(to, "/"), "/")
	common := 0
	for common < len(dir) && common < len(target)-1 && dir[common] == target[common] {
		common++
	}
	ref := strings.Repeat("../", len(dir)-common) + strings.Join(target[common:], "/")
	first, _, _ := strings.Cut(ref, "/")
	if ref == "" || strings.Contains(first, ":") {
		ref = "./" + ref // "" would be the base itself; "a:b" would read as a scheme
	}
	return ref
}

func (h *Handler) messages(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpx.Error(w, http.StatusMethodNotAllowed, wire.CodeInvalidRequest, "Method Not Allowed: POST messages here")
		return
	}
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, "Bad Request: missing sessionId query parameter; POST to the URL of the stream's endpoint event")
		return
	}
	rctx := httpx.WithCaller(r) // who posts: found once, for the check and the calls
	h.mu.Lock()
	s := h.sessions[id]
	h.mu.Unlock()
	if s != nil {
		// The session id is in the URL, which is easily learnt (logs,
		// referrers): only the principal that opened the stream may post.
		if _, mine := h.srv.SessionFor(id, transportName, core.CallerFrom(rctx).Owner); !mine {
			s = nil
		}
	}
	if s == nil {
		httpx.Error(w, http.StatusNotFound, wire.CodeInvalidRequest, "Session not found: its stream ended or it never existed; open a new stream")
		return
	}

	body, ok := httpx.ReadJSON(w, r, h.cfg.maxBody, h.cfg.writeTimeout)
	if !ok {
		return
	}
	// What answers the POST (202, or a refusal) is written at once from
	// here: it has the write timeout from now, whatever the body and the
	// request's auth took.
	httpx.ArmWrite(w, h.cfg.writeTimeout)
	in := h.srv.Parse(body)
	if in.Err() != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(in.ErrorReply())
		return
	}
	if in.HasRequests() && s.stream.out.Backlogged() {
		// Answers already wait for the client to read its stream: more
		// requests would only wait too (or, for a client that never reads,
		// burn the server's time until the stream is dropped). Responses
		// and notifications are always taken: a call may wait for them.
		w.Header().Set("Retry-After", "1")
		httpx.Error(w, http.StatusTooManyRequests, wire.CodeServerBusy, "Too Many Requests: the answers on this session's stream are not read yet; retry when they are")
		return
	}
	// Calls outlive the POST (its answer goes on the stream); they end with
	// the session.
	ctx := context.WithoutCancel(rctx)
	switch {
	case !in.HasRequests():
		// Notifications and responses are handled before the 202, so a
		// client that waits for it knows they took effect in order.
		s.sess.Serve(ctx, in, nil)
	case in.InitializeAlone():
		// Nothing can be served before initialize is answered: a client
		// that sends notifications/initialized right after must not race it.
		if reply := s.sess.Serve(ctx, in, nil); reply != nil {
			_ = s.stream.Send(reply)
		}
	default:
		s.calls.Add()
		h.srv.Go(func() {
			defer s.calls.Done()
			if reply := s.sess.Serve(ctx, in, nil); reply != nil {
				if err := s.stream.Send(reply); err != nil {
					h.srv.Logger().Debug("sse: answer not delivered", "session", id, "err", err)
				}
			}
		})
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusAccepted)
}
