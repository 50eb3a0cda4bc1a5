package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/mcpstack/mcpstack/internal/addrfile"
	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/server"
)

// maxBody bounds a request body the proxy reads to record it (larger ones
// get 413 from the proxy: a server would refuse them anyway).
const maxBody = 32 << 20

// httpConfig is how the HTTP proxy runs.
type httpConfig struct {
	upstream, addr, addrFile string
	// allowRemote lets the proxy listen on an address that is not
	// loopback (--allow-remote).
	allowRemote bool
	limits      httpLimits
}

// httpLimits bound what clients can make the HTTP proxy hold.
type httpLimits struct {
	// bodyIdle cuts a request body that sends nothing for this long (the
	// client gets 408), and an answer the client reads nothing of for
	// this long (--body-timeout).
	bodyIdle time.Duration
	// bodyDeadline cuts a request body that is not in whole this long
	// after its request's headers (--body-deadline): the client gets 408.
	// 0: none.
	bodyDeadline time.Duration
	// bodyMemory bounds the bytes all the POST bodies being read (to be
	// recorded) and forwarded hold together (--body-memory): a POST whose
	// bytes go beyond it gets 503, a body larger than it 413. The answers
	// held to be recorded hold as much again, apart: one beyond passes
	// unrecorded.
	bodyMemory int64
	// shareOf: one client (a remote address: the TCP peer's IP) holds at
	// most 1/shareOf of each of the two budgets, and one body or answer
	// no more (0: no share, first come, first served). Past its share, its
	// POST gets 503 at once, its answer passes unrecorded, while the
	// others' still get through.
	shareOf int64
}

// clientShareOf is the share of each budget one client may hold: a
// quarter. Half would let two clients shut out all others, and an eighth
// would bound one body to 16 MiB by default; at a quarter the default
// share is maxBody, the bound of one body as before. A share stops one
// address from starving the others; four together can still fill the
// budget (an IPv6 client has many addresses: the share is no defence
// against one who uses them).
const clientShareOf = 4

// shareFor is the share of a proxy listening on addr: on loopback every
// client is the same address (this machine's), so a share would only cut
// the budget for all of them; elsewhere (--allow-remote), a quarter.
func shareFor(addr string) int64 {
	if guard.IsLoopbackAddr(addr) {
		return 0
	}
	return clientShareOf
}

// defaultLimits are the flags' defaults.
var defaultLimits = httpLimits{bodyIdle: 30 * time.Second, bodyDeadline: time.Minute, bodyMemory: 128 << 20, shareOf: clientShareOf}

// The HTTP server's own timeouts: a request's headers must come within
// headerTimeout, and a kept-alive connection with no request is closed
// after idleTimeout. Neither bounds how long an answer streams.
const (
	headerTimeout = 10 * time.Second
	idleTimeout   = 2 * time.Minute
)

// checkListen refuses an address that is not loopback without
// allowRemote, as serve refuses one without authentication: the proxy
// has none, and whoever reaches its port reaches the upstream through it,
// as if from this machine (a Host naming the proxy becomes the
// upstream's, which passes a loopback upstream's DNS-rebinding guard).
func checkListen(addr string, allowRemote bool) error {
	if allowRemote || guard.IsLoopbackAddr(addr) {
		return nil
	}
	return fmt.Errorf("refusing to listen on %s: it is not a loopback address, and the proxy has no authentication, "+
		"so anyone who reaches the port would reach the upstream through it as if from this machine. "+
		"Listen on 127.0.0.1 (or localhost, ::1), or pass --allow-remote to listen there anyway", addr)
}

// serveHTTP runs the HTTP proxy until ctx ends.
func serveHTTP(ctx context.Context, c httpConfig, t *tap, errOut io.Writer) int {
	u, err := url.Parse(c.upstream)
	if err != nil || u.Scheme == "" || u.Host == "" {
		fmt.Fprintf(errOut, "mcpstack proxy: --upstream %q is not an http(s) URL\n", c.upstream)
		return 2
	}
	if err := checkListen(c.addr, c.allowRemote); err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 2
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 2
	}
	defer ln.Close()
	if !guard.IsLoopbackAddr(c.addr) {
		slog.Warn("mcpstack proxy: listening on a non-loopback address (--allow-remote): whoever reaches it reaches the upstream", "addr", ln.Addr().String())
	}
	if c.addrFile != "" {
		if err := addrfile.Write(c.addrFile, ln.Addr().String()); err != nil {
			fmt.Fprintln(errOut, "mcpstack proxy: --addr-file:", err)
			return 2
		}
	}
	hs, p := newServer(u, c, t)
	fmt.Fprintf(errOut, "mcpstack proxy: http://%s%s -> %s\n", ln.Addr(), u.Path, u)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(errOut, "mcpstack proxy:", err)
			return 1
		}
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		p.recordPending()
	}
	return 0
}

// newServer is the proxy's HTTP server for c. Listening on loopback, it
// refuses (403, as serve's guard does) a request whose Host is not a
// loopback name or address: a page that rebinds its name to 127.0.0.1
// must not reach the upstream through the proxy, which would give the
// upstream its own loopback Host (see upstreamHost).
func newServer(upstream *url.URL, c httpConfig, t *tap) (*http.Server, *proxyHandler) {
	p := newHandler(upstream, ownNames(c.addr), t, c.limits)
	var h http.Handler = p
	if guard.IsLoopbackAddr(c.addr) {
		h = loopbackHost(h)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: headerTimeout,
		// No ReadTimeout: it would bound a body however it flows; a
		// body's reads have their own deadline (bodyIdle).
		IdleTimeout: idleTimeout,
		ErrorLog:    slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}, p
}

// loopbackHost passes the requests whose Host is a loopback name or
// address, and refuses the others with 403.
func loopbackHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !guard.IsLoopbackAddr(strings.Trim(host, "[]")) {
			slog.Warn("mcpstack proxy: refused a request whose Host is not loopback (DNS rebinding?)", "host", r.Host)
			guard.Forbid(w, "Host "+r.Host+" is not allowed")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// proxyHandler is the HTTP proxy to upstream: every request goes to
// upstream's host with its own path and query, every byte both ways
// unchanged, event streams as they flow; the messages of the bodies go to
// the tap, under the session the Mcp-Session-Id header names.
type proxyHandler struct {
	rp     *httputil.ReverseProxy
	t      *tap
	limits httpLimits
	// requests holds the POST bodies read to be recorded, answers the
	// answers (limits.bodyMemory each, a client's share of it each);
	// perBody and perAnswer bound one.
	requests, answers  *budget
	perBody, perAnswer int64
	// pending are the exchanges whose requests wait for their answers'
	// headers, to be recorded (recordPending) if the proxy stops first.
	mu      sync.Mutex
	pending map[*exchange]struct{}
}

// clientOf is the client r comes from, as the budgets share them out: its
// remote address's IP, without the port (the proxy has no
// authentication to tell clients apart by; clients behind one address,
// or all local ones on loopback, share one share).
func clientOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// newHandler is the proxy to upstream within limits. names are the
// proxy's own host names (see upstreamHost).
func newHandler(upstream *url.URL, names map[string]bool, t *tap, limits httpLimits) *proxyHandler {
	share := limits.bodyMemory
	if limits.shareOf > 0 {
		share = max(limits.bodyMemory/limits.shareOf, 1)
	}
	// One body or answer is no more than a share: one larger could never
	// be held, by any client.
	p := &proxyHandler{t: t, limits: limits, pending: map[*exchange]struct{}{},
		requests: &budget{left: limits.bodyMemory, share: share}, answers: &budget{left: limits.bodyMemory, share: share},
		perBody: min(int64(maxBody), share), perAnswer: min(int64(maxLine), share)}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL.Scheme, r.Out.URL.Host = upstream.Scheme, upstream.Host
			r.Out.Host = upstreamHost(r.In.Host, names, upstream)
			// Rewrite's request lacks the forwarding headers the client
			// sent; the proxy adds none of its own, and passes theirs.
			for _, h := range forwardingHeaders {
				if v, ok := r.In.Header[h]; ok {
					r.Out.Header[h] = v
				}
			}
		},
		// An upstream that cannot be reached answers nothing: the request
		// is recorded with the proxy's 502, which answers it.
		// A client that gave up first gets nothing, and its request stays
		// open in the recording (its notifications/cancelled may follow).
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			gaveUp := r.Context().Err() != nil
			if !gaveUp {
				slog.Warn("mcpstack proxy: the upstream did not answer", "err", err)
			}
			if x, _ := r.Context().Value(exchangeKey{}).(*exchange); x != nil {
				if len(x.body) > 0 {
					facts := &record.HTTP{Method: x.method, Request: x.headers}
					if !gaveUp {
						facts.Status = http.StatusBadGateway
					}
					if x.claim() {
						t.messageHTTP(x.session, server.ClientToServer, x.body, facts)
					}
					if ids := httpfacts.RequestIDs(x.body); len(ids) > 0 && !gaveUp {
						t.refused(x.session, http.StatusBadGateway, ids)
					}
				}
				x.bodyDone()
			}
			w.WriteHeader(http.StatusBadGateway)
		},
		// The client's own Accept-Encoding goes on as it is: the default
		// transport would add gzip and undo it, changing what passes.
		Transport:      upstreamTransport(),
		FlushInterval:  -1, // every write at once: event streams stream
		ErrorLog:       slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
		ModifyResponse: p.modifyResponse,
	}
	return p
}

// modifyResponse records the request (now that its answer gives its
// session and status) and sets the answer's body to be recorded as the
// client reads it.
func (p *proxyHandler) modifyResponse(resp *http.Response) error {
	t := p.t
	x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if x == nil {
		return nil
	}
	defer x.bodyDone()
	session := resp.Header.Get("Mcp-Session-Id")
	if session == "" {
		session = x.session
	}
	respHeaders := t.headers(resp.Header)
	// The request is recorded now, under the session initialize's
	// answer opens, and before what answers it, with the facts of its
	// exchange.
	if len(x.body) > 0 && x.claim() {
		t.messageHTTP(session, server.ClientToServer, x.body, &record.HTTP{
			Method: x.method, Status: resp.StatusCode,
			Request: x.headers, Response: respHeaders,
		})
	}
	if x.method == http.MethodDelete && resp.StatusCode/100 == 2 {
		t.shutdown(session, server.ClientToServer)
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode >= 400 && mt != "application/json" && mt != "text/event-stream" {
		// No JSON-RPC answer: the status answers the requests.
		if ids := httpfacts.RequestIDs(x.body); len(ids) > 0 {
			t.refused(session, resp.StatusCode, ids)
		}
		return nil
	}
	encoding := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	if encoding != "" && encoding != "identity" && !(encoding == "gzip" && mt == "application/json") {
		if mt == "application/json" || mt == "text/event-stream" {
			slog.Warn("mcpstack proxy: an answer in a Content-Encoding the recording cannot read passes unrecorded",
				"encoding", encoding, "content_type", mt, "session", session)
		}
		return nil
	}
	switch mt {
	case "application/json":
		// The answer keeps its status: an error's is judged by it (two
		// stateless requests may share an id).
		facts := &record.HTTP{Status: resp.StatusCode, Response: respHeaders}
		resp.Body = &jsonBody{ReadCloser: resp.Body, want: resp.ContentLength, gzip: encoding == "gzip", max: int(p.perAnswer),
			hold: hold{budget: p.answers, client: x.client}, done: func(b []byte) { t.messageHTTP(session, server.ServerToClient, b, facts) }}
	case "text/event-stream":
		resp.Body = &sseBody{ReadCloser: resp.Body, events: eventSplitter{max: int(p.perAnswer), hold: hold{budget: p.answers, client: x.client}}, message: func(event string, b []byte) {
			if event == "endpoint" { // HTTP+SSE: the stream's session is in the URL it names
				if u, err := url.Parse(string(b)); err == nil && httpfacts.QuerySession(u) != "" {
					session = httpfacts.QuerySession(u)
				}
				return
			}
			t.message(session, server.ServerToClient, b)
		}}
	}
	return nil
}

func (p *proxyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if httpguts.HeaderValuesContainsToken(r.Header["Connection"], "Upgrade") {
		// A WebSocket would pass through unrecorded (httputil tunnels the
		// upgrade): a recording that misses the session's messages, and a
		// check that finds nothing in them, would say the session was clean.
		http.Error(w, "mcpstack proxy: a protocol upgrade (WebSocket) is not recorded; connect over Streamable HTTP or HTTP+SSE", http.StatusNotImplemented)
		return
	}
	t, limits := p.t, p.limits
	rc := http.NewResponseController(w)
	if limits.bodyIdle > 0 {
		// A client that reads nothing of an answer for bodyIdle is cut:
		// the write fails, the handler aborts, and what the proxy holds
		// for the answer is let go.
		w = &deadlineWriter{ResponseWriter: w, rc: rc, idle: limits.bodyIdle}
		// What the server writes once the handler returns (the end of a
		// chunked answer) has as long; it clears the deadline after.
		defer func() { _ = rc.SetWriteDeadline(time.Now().Add(limits.bodyIdle)) }()
	}
	x := &exchange{method: r.Method, session: r.Header.Get("Mcp-Session-Id"), headers: t.headers(r.Header), client: clientOf(r)}
	// HTTP+SSE (2024-11-05): POST /messages?sessionId=... is answered on
	// the session's GET stream, maybe before the POST's own 202: the
	// request is recorded before it goes on.
	sseSession := false
	if x.session == "" {
		x.session = httpfacts.QuerySession(r.URL)
		sseSession = x.session != ""
	}
	if r.Body != nil && r.Body != http.NoBody {
		// Whatever the method, a body that stalls, or comes too slowly,
		// is cut.
		ib := &idleBody{ReadCloser: r.Body, rc: rc, idle: limits.bodyIdle}
		if limits.bodyDeadline > 0 {
			ib.deadline = time.Now().Add(limits.bodyDeadline)
		}
		r.Body = ib
	}
	if r.Body != nil && r.Method == http.MethodPost {
		// The body is held to be recorded (with the session and status
		// of its answer): all together hold at most limits.bodyMemory,
		// those of one client its share of it, each what it has grown to
		// as its bytes came, until it has been recorded and forwarded.
		b, held, status, err := readBody(r, p.requests, p.perBody)
		release := sync.OnceFunc(func() { p.requests.give(x.client, held) })
		defer release()
		if status != 0 {
			// Refused: what is left of the body is not read (the server
			// would wait for it before answering), and the connection
			// closes once the answer is out.
			if status == http.StatusServiceUnavailable {
				w.Header().Set("Retry-After", "1")
			}
			w.Header().Set("Connection", "close")
			slog.Warn("mcpstack proxy: a request body refused", "status", status, "client", x.client, "err", err)
			http.Error(w, "mcpstack proxy: "+err.Error(), status)
			_ = http.NewResponseController(w).Flush()
			_ = rc.SetReadDeadline(time.Now())
			return
		}
		r.Body.Close()
		x.body = bytes.TrimSpace(b)
		x.held = &heldBody{b: b, release: release}
		r.Body = x.held // the same bytes go on
		if sseSession && len(x.body) > 0 && x.claim() {
			t.messageHTTP(x.session, server.ClientToServer, x.body, &record.HTTP{Method: x.method, SSE: true, Request: x.headers})
		}
		if len(x.body) > 0 {
			p.track(x)
			defer x.untrack()
		}
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
}

// track holds x as pending until its body is done with (bodyDone) or its
// handler returns.
func (p *proxyHandler) track(x *exchange) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pending[x] = struct{}{}
	x.untrack = func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.pending, x)
	}
}

// recordPending records the requests still waiting for their answers when
// the proxy stops (its drain over), as a client that gave up leaves them:
// open, with no status. A recording without them would hide what the
// upstream never answered.
func (p *proxyHandler) recordPending() {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for x := range p.pending { // their bodies are theirs until untracked
		if x.claim() {
			p.t.messageHTTP(x.session, server.ClientToServer, x.body, &record.HTTP{Method: x.method, Request: x.headers})
			n++
		}
	}
	if n > 0 {
		slog.Warn("mcpstack proxy: requests the upstream had not answered when the proxy stopped are recorded without answers", "requests", n)
	}
}

// readBody reads r's body whole, at most perBody bytes, into a buffer
// that grows as the bytes come (see hold.grow: doubling from 4 KiB, then
// by a quarter past growStep, never past the Content-Length): each growth is
// taken from bodies first, within the share of r's client (clientOf), so
// that what it holds (returned as held, to give back, for that client,
// once the body is done with) is the buffer's capacity, at most what the
// client sent and a quarter (at least growStep) more, whatever its
// Content-Length claims. status,
// when not 0, refuses the request with err: 413 for a body over perBody,
// 503 when bodies, or the client's share of it, has not enough left, 408
// for a body that stalled or came too slowly, 400 for one that could not
// be read.
func readBody(r *http.Request, bodies *budget, perBody int64) (b []byte, held int64, status int, err error) {
	if r.ContentLength > perBody {
		return nil, 0, http.StatusRequestEntityTooLarge, fmt.Errorf("request body too large (%d bytes; at most %d)", r.ContentLength, perBody)
	}
	limit := perBody
	if r.ContentLength >= 0 {
		limit = r.ContentLength
	}
	h := hold{budget: bodies, client: clientOf(r)}
	defer func() { held = h.n }()
	var probe [1]byte
	for {
		// A buffer of limit bytes is full: the read that finds the end,
		// or a byte too many, goes to probe, not to a larger buffer.
		dst, full := probe[:], int64(len(b)) >= limit
		if !full {
			if len(b) == cap(b) {
				nb, ok := h.grow(b, 1, int(limit))
				if !ok {
					if h.overShare {
						return nil, 0, http.StatusServiceUnavailable, fmt.Errorf("this client (%s) holds its share of the request bodies in flight (%d bytes of --body-memory); try again", h.client, bodies.share)
					}
					return nil, 0, http.StatusServiceUnavailable, errors.New("too many request bodies in flight; try again")
				}
				b = nb
			}
			dst = b[len(b):cap(b)]
		}
		n, rerr := r.Body.Read(dst)
		if full {
			if n > 0 {
				return nil, 0, http.StatusRequestEntityTooLarge, fmt.Errorf("request body too large (at most %d bytes)", perBody)
			}
		} else {
			b = b[:len(b)+n]
		}
		switch {
		case rerr == io.EOF:
			return b, 0, 0, nil
		case rerr == nil:
		case isTimeout(rerr):
			if ib, ok := r.Body.(*idleBody); ok && ib.late() {
				return nil, 0, http.StatusRequestTimeout, errors.New("the request body did not come whole within --body-deadline")
			}
			return nil, 0, http.StatusRequestTimeout, errors.New("the request body stalled")
		default:
			return nil, 0, http.StatusBadRequest, fmt.Errorf("reading the request: %w", rerr)
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// budget is a count of bytes that many take from and give back to, each
// client at most its share.
type budget struct {
	mu   sync.Mutex
	left int64
	// share bounds what one client holds (0: no bound); held is what each
	// client that holds something holds.
	share int64
	held  map[string]int64
}

// take takes n bytes for client if they are left, and within its share,
// and reports whether it did, and, when not, whether it is the share that
// lacks them.
func (b *budget) take(client string, n int64) (ok, overShare bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.share > 0 && b.held[client]+n > b.share {
		return false, true
	}
	if n > b.left {
		return false, false
	}
	b.left -= n
	if b.share > 0 && n > 0 {
		if b.held == nil {
			b.held = map[string]int64{}
		}
		b.held[client] += n
	}
	return true, false
}

// give gives back n bytes client took.
func (b *budget) give(client string, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left += n
	if b.share > 0 && n != 0 {
		if b.held[client] -= n; b.held[client] <= 0 {
			delete(b.held, client) // a client that holds nothing takes no room
		}
	}
}

// minGrow is the least a held buffer grows by, and its first size.
const minGrow = 4 << 10

// growStep is where a held buffer stops doubling: past it a buffer grows
// by a quarter of its capacity (at least growStep), so that it holds at
// most a quarter (or growStep) more than its bytes, and the copies of its growths add up
// to a few times its size, not to its size squared over growStep.
const growStep = 1 << 20

// hold is what the buffers of one body hold of a budget (nil: not
// counted), for one client: their capacity, as it grows.
type hold struct {
	budget *budget
	client string
	n      int64
	// overShare: the last growth refused was over the client's share.
	overShare bool
}

// grow is buf with room for n more bytes, at most limit in all: its
// capacity doubles (from minGrow) up to growStep, then by a quarter,
// within limit or, when the budget (or the client's share) lacks that,
// grows by what is needed (at least minGrow). The growth is taken from the
// budget first; false (buf unchanged) when limit or the budget has no
// room for it.
func (h *hold) grow(buf []byte, n, limit int) ([]byte, bool) {
	need := len(buf) + n
	if need <= cap(buf) {
		return buf, true
	}
	if need > limit {
		return buf, false
	}
	next := cap(buf) + max(cap(buf)/4, growStep)
	if cap(buf) < growStep {
		next = min(2*cap(buf), growStep)
	}
	c := min(max(next, need, minGrow), limit)
	if !h.take(c - cap(buf)) {
		c = min(max(need, cap(buf)+minGrow), limit)
		if !h.take(c - cap(buf)) {
			return buf, false
		}
	}
	nb := make([]byte, len(buf), c)
	copy(nb, buf)
	return nb, true
}

func (h *hold) take(n int) bool {
	if h.budget != nil {
		ok, over := h.budget.take(h.client, int64(n))
		if !ok {
			h.overShare = over
			return false
		}
	}
	h.n += int64(n)
	return true
}

// free gives back what buf held; the caller lets go of it.
func (h *hold) free(buf []byte) {
	if h.budget != nil {
		h.budget.give(h.client, int64(cap(buf)))
	}
	h.n -= int64(cap(buf))
}

// release gives back all that is held; the caller lets go of its buffers.
func (h *hold) release() {
	if h.budget != nil {
		h.budget.give(h.client, h.n)
	}
	h.n = 0
}

// idleBody is a request body whose every Read must bring something
// within idle, and all of it come by deadline: a client that stalls or
// trickles is cut (the Read fails with a timeout), and what the proxy
// holds for it is let go.
type idleBody struct {
	io.ReadCloser
	rc       *http.ResponseController
	idle     time.Duration
	deadline time.Time // zero: none
	eof      bool
}

func (b *idleBody) Read(p []byte) (int, error) {
	if b.eof {
		// At its end the server reads on in the background, without a
		// deadline, to see the client go: none must be set again.
		return 0, io.EOF
	}
	d := b.deadline
	if b.idle > 0 && (d.IsZero() || time.Now().Add(b.idle).Before(d)) {
		d = time.Now().Add(b.idle)
	}
	if !d.IsZero() {
		_ = b.rc.SetReadDeadline(d)
	}
	n, err := b.ReadCloser.Read(p)
	b.eof = err == io.EOF
	return n, err
}

// late reports whether the body's deadline has passed.
func (b *idleBody) late() bool {
	return !b.deadline.IsZero() && !time.Now().Before(b.deadline)
}

// heldBody is a request body read whole (to be recorded) and forwarded
// from memory. Its bytes, and what they hold of the budget (release), are
// let go once it has been both forwarded (read to its end, or closed) and
// recorded (exchange.bodyDone), or, at the latest, when the handler
// returns: not for as long as its answer streams. The transport reads it
// from a goroutine of its own.
type heldBody struct {
	mu                  sync.Mutex
	b                   []byte
	off                 int
	forwarded, recorded bool
	release             func()
}

func (h *heldBody) Read(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.off >= len(h.b) {
		h.sent()
		return 0, io.EOF
	}
	n := copy(p, h.b[h.off:])
	if h.off += n; h.off == len(h.b) {
		h.sent()
	}
	return n, nil
}

func (h *heldBody) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent()
	return nil
}

// sent lets go of the bytes, forwarded.
func (h *heldBody) sent() {
	h.b, h.off, h.forwarded = nil, 0, true
	if h.recorded {
		h.release()
	}
}

// done says the body is recorded.
func (h *heldBody) done() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recorded = true
	if h.forwarded {
		h.release()
	}
}

// deadlineWriter is a ResponseWriter each of whose writes and flushes must
// get through within idle: a client that reads nothing of an answer for
// that long is cut (the write fails, and the proxy aborts the answer).
// Each write that gets through sets the next one a new deadline; none is
// pending between writes (an event stream may be quiet for long).
type deadlineWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
	cut  bool
}

func (w *deadlineWriter) refresh() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.idle)) }

// check warns, once, of a client cut.
func (w *deadlineWriter) check(err error) error {
	if err != nil && isTimeout(err) && !w.cut {
		w.cut = true
		slog.Warn("mcpstack proxy: a client read nothing of an answer for --body-timeout: cut", "timeout", w.idle)
	}
	return err
}

func (w *deadlineWriter) WriteHeader(code int) {
	w.refresh() // a 1xx is written at once
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	w.refresh()
	n, err := w.ResponseWriter.Write(p)
	return n, w.check(err)
}

func (w *deadlineWriter) FlushError() error {
	w.refresh()
	return w.check(w.rc.Flush())
}

func (w *deadlineWriter) Flush() { _ = w.FlushError() }

func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// forwardingHeaders are the ones httputil.ReverseProxy takes out of a
// request before Rewrite.
var forwardingHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// upstreamTransport is http.DefaultTransport without transparent
// compression.
func upstreamTransport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableCompression = true
	return tr
}

// upstreamHost is the Host header the upstream gets. It passes unchanged
// unless it names the proxy itself (a loopback name, or one of names),
// which becomes the upstream's own: a server's DNS-rebinding protection
// must see the foreign Host a client sent, as it would without the
// proxy, while a server behind a virtual host must see its name where the
// client only addressed the proxy.
func upstreamHost(in string, names map[string]bool, upstream *url.URL) string {
	name := in
	if h, _, err := net.SplitHostPort(in); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	if ip := net.ParseIP(name); name == "localhost" || (ip != nil && ip.IsLoopback()) || names[name] {
		return upstream.Host
	}
	return in
}

// ownNames are the names a client may reach the proxy by at addr: its
// host, or, when it listens on every interface, the machine's host name
// and the addresses of its interfaces.
func ownNames(addr string) map[string]bool {
	names := map[string]bool{}
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host != "" && (ip == nil || !ip.IsUnspecified()) {
		names[strings.ToLower(strings.Trim(host, "[]"))] = true
		return names
	}
	if h, err := os.Hostname(); err == nil {
		names[strings.ToLower(h)] = true
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				names[n.IP.String()] = true
			}
		}
	}
	return names
}

// exchange is what the proxy keeps of a request until its answer comes.
type exchange struct {
	method, session string
	client          string            // clientOf its request
	headers         map[string]string // the recorded ones
	body            []byte
	recorded        atomic.Bool // the body is recorded already (claim)
	held            *heldBody   // the body forwarded, from memory
	untrack         func()      // ends its pending (track); nil when not
}

// claim reports whether the caller is the one to record x's request: the
// first to ask (HTTP+SSE: before it goes on; else with its answer's
// headers, or the proxy's 502, or at the proxy's stop).
func (x *exchange) claim() bool { return x.recorded.CompareAndSwap(false, true) }

// bodyDone lets go of the request body once the proxy is done recording
// it (and the requests its answer refuses): with what forwarding holds
// (heldBody), its memory goes back to the budget.
func (x *exchange) bodyDone() {
	if x.untrack != nil {
		x.untrack() // before its body goes: recordPending may be reading it
	}
	x.body = nil
	if x.held != nil {
		x.held.done()
	}
}

type exchangeKey struct{}

// jsonBody records a JSON answer as it is read through: once its
// Content-Length is in (before the client has its last bytes, so that
// what the client sends next cannot come before it in the recording), or
// at its end. It holds at most max bytes, taken from hold's budget as
// they come and given back once recorded (or the answer closed): a larger
// answer, or one the budget has no room for, passes unrecorded, with a
// warning.
type jsonBody struct {
	io.ReadCloser
	buf      []byte
	hold     hold
	want     int64  // Content-Length; -1 when not known
	gzip     bool   // Content-Encoding: gzip, undone for the recording
	max      int    // what it holds at most
	over     string // why it is not held, when it is not
	finished bool
	done     func([]byte)
}

func (b *jsonBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if b.want > int64(b.max) && b.over == "" {
		b.over = "larger than the recording's bound"
	}
	if !b.finished && b.over == "" && n > 0 {
		limit := b.max
		if b.want >= 0 && b.want <= int64(b.max) {
			limit = int(b.want)
		}
		if buf, ok := b.hold.grow(b.buf, n, limit); ok {
			b.buf = append(buf, p[:n]...)
		} else {
			b.over = "larger than the recording's bound, or than what is left of --body-memory (or of its client's share)"
			b.drop()
		}
	}
	if !b.finished && (err == io.EOF || (b.want >= 0 && b.over == "" && int64(len(b.buf)) >= b.want)) {
		b.finished = true
		b.finish()
		b.drop()
	}
	return n, err
}

func (b *jsonBody) Close() error {
	b.drop()
	return b.ReadCloser.Close()
}

// drop lets go of what the answer holds.
func (b *jsonBody) drop() {
	b.hold.release()
	b.buf = nil
}

func (b *jsonBody) finish() {
	if b.over != "" {
		slog.Warn("mcpstack proxy: an answer passes unrecorded: "+b.over, "bound", b.max)
		return
	}
	body := b.buf
	if b.gzip {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			slog.Warn("mcpstack proxy: a gzip answer that does not decode passes unrecorded", "err", err)
			return
		}
		var plain []byte
		for {
			grown, ok := b.hold.grow(plain, 1, b.max+1)
			if !ok {
				slog.Warn("mcpstack proxy: a gzip answer that does not decode within the recording's bound, or what is left of --body-memory (or of its client's share), passes unrecorded", "bound", b.max)
				return
			}
			plain = grown
			n, err := zr.Read(plain[len(plain):cap(plain)])
			plain = plain[:len(plain)+n]
			if len(plain) > b.max {
				slog.Warn("mcpstack proxy: a gzip answer that does not decode within the recording's bound passes unrecorded", "bound", b.max)
				return
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				slog.Warn("mcpstack proxy: a gzip answer that does not decode passes unrecorded", "err", err)
				return
			}
		}
		body = plain
	}
	b.done(bytes.TrimSpace(body))
}
