package ws

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// Subprotocol is the WebSocket subprotocol a client must offer.
const Subprotocol = "mcp"

// Close codes the server sends, besides those of the WebSocket library
// (1002 protocol errors; 1009 is sent by the library when the read limit is
// hit).
const (
	CloseSessionEnded    = websocket.StatusNormalClosure   // 1000
	CloseShutdown        = websocket.StatusGoingAway       // 1001
	CloseBinaryFrame     = websocket.StatusUnsupportedData // 1003
	CloseInvalidUTF8     = websocket.StatusInvalidFramePayloadData
	CloseMessageTooBig   = websocket.StatusMessageTooBig // 1009
	CloseKeepAliveFailed = websocket.StatusInternalError // 1011
	// CloseTokenExpired: the credentials the socket was opened with expired;
	// reconnect with a fresh token.
	CloseTokenExpired = websocket.StatusPolicyViolation // 1008
	// CloseNotReading: the client left more unsent output than the server
	// holds for one socket (it does not read what it asked for).
	CloseNotReading = websocket.StatusTryAgainLater // 1013
)

// DefaultMaxConcurrent is how many requests of one socket are served (and
// their answers sent) at once by default. A request past it is answered
// -32000 at once, by a write on the socket: a client that floods a socket
// without reading its answers is pushed back by TCP instead of growing the
// server, and one that reads gets its answers (and can send the responses
// its calls in flight wait for).
const DefaultMaxConcurrent = 256

// DefaultOriginPatterns are the origins accepted by default besides the
// request's own host: loopback ones, any port. Patterns follow path.Match,
// matched against the origin's host[:port].
var DefaultOriginPatterns = []string{
	"localhost", "localhost:*",
	"127.0.0.1", "127.0.0.1:*",
	`\[::1\]`, `\[::1\]:*`,
}

// Option configures the handler.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	readLimit    int64
	keepAlive    time.Duration
	pingTimeout  time.Duration
	writeTimeout time.Duration
	closeTimeout time.Duration
	origins      []string
	concurrent   int
	rateRequests int
	rateWindow   time.Duration
	rateBytes    int
	byteWindow   time.Duration
}

// WithMaxConcurrent sets how many messages of one socket are served at
// once (default DefaultMaxConcurrent).
func WithMaxConcurrent(n int) Option { return optionFunc(func(c *config) { c.concurrent = n }) }

// WithReadLimit bounds one incoming message (default 4 MiB; n <= 0 keeps
// the default); a larger one closes the socket with 1009.
func WithReadLimit(n int64) Option { return optionFunc(func(c *config) { c.readLimit = n }) }

// WithKeepAlive sets how often the server pings (default 25s; 0: never) and
// how long it waits for the pong (default 15s; 0: the interval) before it
// closes with 1011.
func WithKeepAlive(every, timeout time.Duration) Option {
	return optionFunc(func(c *config) { c.keepAlive, c.pingTimeout = every, timeout })
}

// WithWriteTimeout bounds the sending of one message (default 10s): a client
// that does not read is dropped.
func WithWriteTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.writeTimeout = d })
}

// WithCloseTimeout bounds the closing handshake (default 2s; 0 keeps the
// default): a peer that does not answer the close frame in time has its TCP
// connection closed.
func WithCloseTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.closeTimeout = d })
}

// WithOriginPatterns replaces DefaultOriginPatterns: the browser origins
// (host[:port] patterns of path.Match, or scheme://host[:port] when the
// pattern has "://") allowed besides the request's own host. Requests
// without Origin (non-browser clients) are always allowed; "*" allows every
// origin and exposes the server to any web page the user opens.
func WithOriginPatterns(patterns ...string) Option {
	return optionFunc(func(c *config) { c.origins = append([]string(nil), patterns...) })
}

// Handler serves MCP over WebSocket; mount it at /mcp/ws.
type Handler struct {
	srv *core.Server
	cfg config

	mu      sync.Mutex
	closing bool
	conns   sync.WaitGroup

	limiters *clientLimiters

	shutdown  chan struct{} // drain: close each socket once its calls are done
	force     chan struct{} // close now
	shutOnce  sync.Once
	forceOnce sync.Once
}

// New returns the handler.
func New(srv *server.Server, opts ...Option) *Handler {
	cfg := config{
		readLimit:    4 << 20,
		keepAlive:    25 * time.Second,
		pingTimeout:  15 * time.Second,
		writeTimeout: 10 * time.Second,
		closeTimeout: 2 * time.Second,
		origins:      DefaultOriginPatterns,
		concurrent:   DefaultMaxConcurrent,
	}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if cfg.pingTimeout <= 0 {
		cfg.pingTimeout = cfg.keepAlive
	}
	if cfg.closeTimeout <= 0 {
		cfg.closeTimeout = 2 * time.Second
	}
	if cfg.readLimit <= 0 {
		cfg.readLimit = 4 << 20
	}
	if cfg.writeTimeout <= 0 {
		cfg.writeTimeout = 10 * time.Second
	}
	if cfg.concurrent <= 0 {
		cfg.concurrent = DefaultMaxConcurrent
	}
	return &Handler{srv: core.Of(srv), cfg: cfg, limiters: newClientLimiters(cfg.rateRequests, cfg.rateWindow, cfg.rateBytes, cfg.byteWindow),
		shutdown: make(chan struct{}), force: make(chan struct{})}
}

// Shutdown drains the sockets: new upgrades get 503, and each socket is
// closed with 1001 once its session has no call in flight (messages are
// still read meanwhile: the calls may wait for the client's answers). When
// ctx ends first, the remaining sockets are closed with 1001 at once and
// their calls cancelled. It returns when every socket is closed (ctx.Err()
// when it had to force them). Call it before (*server.Server).Close: http.Server's
// Shutdown does not wait for hijacked connections.
func (h *Handler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.closing = true
	h.mu.Unlock()
	h.shutOnce.Do(func() { close(h.shutdown) })
	done := make(chan struct{})
	go func() {
		h.conns.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	h.forceOnce.Do(func() { close(h.force) })
	select {
	case <-done:
	case <-time.After(2 * h.cfg.closeTimeout): // a handler that ignores cancellation
	}
	return ctx.Err()
}

// ServeHTTP upgrades the request and serves one session on the socket until
// it closes.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		httpx.Error(w, http.StatusMethodNotAllowed, wire.CodeInvalidRequest, "Method Not Allowed: open the WebSocket with a GET upgrade request")
		return
	}
	if !httpx.HasToken(r.Header, "Connection", "upgrade") || !httpx.HasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		httpx.Error(w, http.StatusUpgradeRequired, wire.CodeInvalidRequest, "Upgrade Required: this endpoint speaks WebSocket (subprotocol mcp)")
		return
	}
	if o := r.Header.Get("Origin"); o != "" && !originAllowed(r.Host, o, h.cfg.origins) {
		guard.Forbid(w, "Origin "+o+" is not allowed")
		return
	}
	if !httpx.HasToken(r.Header, "Sec-WebSocket-Protocol", Subprotocol) {
		httpx.Error(w, http.StatusBadRequest, wire.CodeInvalidRequest, `Bad Request: the WebSocket subprotocol "mcp" is required (Sec-WebSocket-Protocol: mcp)`)
		return
	}
	h.mu.Lock()
	if h.closing {
		h.mu.Unlock()
		w.Header().Set("Retry-After", "5")
		httpx.Error(w, http.StatusServiceUnavailable, wire.CodeInternalError, "Service Unavailable: the server is shutting down")
		return
	}
	h.conns.Add(1)
	h.mu.Unlock()
	defer h.conns.Done()

	caller := httpx.Caller(r)
	if !caller.Expires.IsZero() && !time.Now().Before(caller.Expires) {
		httpx.Error(w, http.StatusUnauthorized, wire.CodeInvalidRequest, "Unauthorized: the token has expired")
		return
	}
	c := &conn{h: h, log: h.srv.Logger(), caller: caller, done: make(chan struct{})}
	sess, err := h.srv.NewSession("", c, core.Transport("websocket"), core.OpenedBy(caller))
	if err != nil {
		httpx.Busy(w, err)
		return
	}
	c.out = h.srv.NewOutput(func() { go c.closeWith(CloseNotReading, "the client does not read its messages") })
	defer c.out.Close()
	hj := &hijackRecorder{ResponseWriter: w}
	wsc, err := websocket.Accept(hj, r, &websocket.AcceptOptions{
		Subprotocols:   []string{Subprotocol},
		OriginPatterns: h.cfg.origins,
	})
	if err != nil { // Accept has answered
		sess.Close()
		h.srv.Logger().Debug("ws: upgrade failed", "err", err)
		return
	}
	if wsc.Subprotocol() != Subprotocol { // cannot happen: checked above
		sess.Close()
		_ = wsc.Close(websocket.StatusProtocolError, `subprotocol "mcp" required`)
		return
	}
	wsc.SetReadLimit(h.cfg.readLimit)
	c.ws, c.netConn, c.sess = wsc, hj.conn, sess
	// Calls keep the request's values (e.g. what authentication put there),
	// not its lifetime: after the hijack the socket is what ends them.
	c.run(context.WithoutCancel(core.WithCaller(r.Context(), caller)))
}

// originAllowed applies the rule of the WebSocket library's Accept (which
// checks again): the request's own host, or a pattern.
func originAllowed(host, origin string, patterns []string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if strings.EqualFold(host, u.Host) {
		return true
	}
	for _, p := range patterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, err := path.Match(strings.ToLower(p), strings.ToLower(target)); err == nil && ok {
			return true
		}
	}
	return false
}

// hijackRecorder keeps the connection the WebSocket library hijacks, so
// that a peer that never completes the closing handshake can be cut off.
type hijackRecorder struct {
	http.ResponseWriter
	conn net.Conn
}

func (h *hijackRecorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(h.ResponseWriter).Hijack()
	h.conn = c
	return c, rw, err
}

func (h *hijackRecorder) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// conn is one socket and its session; it is the session's core.Outbox.
type conn struct {
	h       *Handler
	log     *slog.Logger
	ws      *websocket.Conn
	netConn net.Conn
	sess    *core.Session
	calls   core.InFlight
	caller  core.Caller
	out     *core.Output

	closeOnce sync.Once
	done      chan struct{} // closed when the socket is being closed

	// heard counts the messages read, and throttled is set while the
	// next one waits for the rate limits: the socket is not read then,
	// so a pong goes unseen, but the client has shown it is there.
	heard     atomic.Int64
	throttled atomic.Bool
}

// errNotReading is returned by Send past the socket's output bound.
var errNotReading = errors.New("ws: the client does not read its messages")

// Send writes one message as a text frame, within the write timeout. The
// library serializes concurrent writers; a frame is never interleaved with
// another. Past the socket's output bound a message waits for the ones
// before it; a socket that takes nothing for the write timeout, or holds
// the most of a process over its output total, is closed (1013).
func (c *conn) Send(msg []byte) error {
	if !c.out.Take(len(msg), c.h.cfg.writeTimeout, c.done) {
		go c.closeWith(CloseNotReading, "the client does not read its messages")
		return errNotReading
	}
	defer c.out.Give(len(msg))
	ctx, cancel := context.WithTimeout(context.Background(), c.h.cfg.writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, msg)
}

// expired reports whether the socket's credentials have expired.
func (c *conn) expired() bool {
	return !c.caller.Expires.IsZero() && !time.Now().Before(c.caller.Expires)
}

// run reads frames until the socket closes. Requests are served
// concurrently; initialize, notifications, responses and bodies that do
// not parse are served in order, before the next frame is read.
func (c *conn) run(ctx context.Context) {
	srv := c.h.srv
	stop := make(chan struct{})
	go c.watch(stop)
	if c.h.cfg.keepAlive > 0 {
		go c.keepAlive(stop)
	}
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		c.closeWith(0, "") // frees the socket if nothing closed it
		c.sess.Close()     // cancels the calls in flight
		wg.Wait()
	}()
	slots := make(chan struct{}, c.h.cfg.concurrent)
	wait, release := c.h.limiters.acquire(c.caller.Key)
	defer release()
	waitCtx, cancelWait := context.WithCancel(context.Background())
	go func() {
		select {
		case <-stop:
		case <-c.done:
		case <-c.sess.Done():
		}
		cancelWait()
	}()
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err == nil {
			c.heard.Add(1)
			c.throttled.Store(true)
			err := wait(waitCtx, len(data)) // the rate limits: the next frames wait in TCP
			c.throttled.Store(false)
			if err != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, websocket.ErrMessageTooBig) {
				// The library has sent 1009; this completes the handshake.
				c.closeWith(CloseMessageTooBig, "message too big")
			}
			c.log.Debug("ws: read ended", "session", c.sess.ID(), "err", err)
			return
		}
		if typ != websocket.MessageText {
			c.closeWith(CloseBinaryFrame, "binary frames are not supported: send JSON-RPC as text frames")
			return
		}
		if !utf8.Valid(data) {
			c.closeWith(CloseInvalidUTF8, "text frame is not valid UTF-8")
			return
		}
		if c.expired() { // a frame that raced the expiry timer
			c.closeWith(CloseTokenExpired, "token expired")
			return
		}
		in := srv.Parse(data)
		if in.Err() != nil || !in.HasRequests() || in.InitializeAlone() {
			if reply := c.sess.Serve(ctx, in, c); reply != nil {
				c.send(reply)
			}
			continue
		}
		select {
		case slots <- struct{}{}:
		default:
			// Refused at once (answers in the body still count), and the
			// next frame is read: it may be the answer a call in flight
			// waits for. The refusal is written before that, so a client
			// that does not read is pushed back by TCP.
			if reply := c.sess.ServeBusy(ctx, in, c); reply != nil {
				c.send(reply)
			}
			continue
		}
		c.calls.Add()
		wg.Add(1)
		c.h.srv.Go(func() {
			defer wg.Done()
			defer func() { <-slots }()
			defer c.calls.Done()
			if reply := c.sess.Serve(ctx, in, c); reply != nil {
				c.send(reply)
			}
		})
	}
}

func (c *conn) send(msg []byte) {
	if err := c.Send(msg); err != nil {
		c.log.Debug("ws: answer not delivered", "session", c.sess.ID(), "err", err)
	}
}

// watch closes the socket when the session ends (1000), its token expires
// (1008) or the server shuts down (1001, once the calls in flight are
// done).
func (c *conn) watch(stop <-chan struct{}) {
	var expiry <-chan time.Time
	if !c.caller.Expires.IsZero() {
		t := time.NewTimer(time.Until(c.caller.Expires))
		defer t.Stop()
		expiry = t.C
	}
	select {
	case <-stop:
		return
	case <-expiry:
		c.closeWith(CloseTokenExpired, "token expired")
	case <-c.sess.Done():
		c.closeWith(CloseSessionEnded, "session ended")
	case <-c.h.shutdown:
		select {
		case <-stop:
			return
		case <-c.calls.Idle():
		case <-c.h.force:
		case <-c.sess.Done():
		}
		c.closeWith(CloseShutdown, "server shutting down")
	}
}

// keepAlive pings; a peer that does not answer in time is closed with
// 1011, unless a message of its came meanwhile or waits for the rate
// limits (its pong is read after that).
func (c *conn) keepAlive(stop <-chan struct{}) {
	t := time.NewTicker(c.h.cfg.keepAlive)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		heard := c.heard.Load()
		ctx, cancel := context.WithTimeout(context.Background(), c.h.cfg.pingTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) && (c.throttled.Load() || c.heard.Load() != heard) {
			continue // answered, or its pong waits behind the rate limits, after a message
		}
		select {
		case <-stop:
		default:
			if !errors.Is(err, net.ErrClosed) {
				c.closeWith(CloseKeepAliveFailed, "keepalive ping timeout")
			}
		}
		return
	}
}

// closeWith closes the socket once: with a close frame and the handshake
// (bounded by the close timeout), or, for code 0, without one.
func (c *conn) closeWith(code websocket.StatusCode, reason string) {
	c.closeOnce.Do(func() {
		close(c.done)
		if code == 0 {
			_ = c.ws.CloseNow()
			return
		}
		cut := time.AfterFunc(c.h.cfg.closeTimeout, func() {
			if c.netConn != nil {
				_ = c.netConn.Close()
			}
		})
		defer cut.Stop()
		if err := c.ws.Close(code, reason); err != nil {
			c.log.Debug("ws: close", "session", c.sess.ID(), "code", int(code), "err", err)
		}
	})
}
