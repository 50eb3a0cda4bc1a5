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
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/internal/addrfile"
	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/record"
)

// maxBody bounds a request body the proxy reads to record it (larger ones
// get 413 from the proxy: a server would refuse them anyway).
const maxBody = 32 << 20

// serveHTTP runs the HTTP proxy until interrupted.
func serveHTTP(upstream, addr, addrFile string, t *tap, errOut io.Writer) int {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme == "" || u.Host == "" {
		fmt.Fprintf(errOut, "mcpstack proxy: --upstream %q is not an http(s) URL\n", upstream)
		return 2
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 2
	}
	defer ln.Close()
	if addrFile != "" {
		if err := addrfile.Write(addrFile, ln.Addr().String()); err != nil {
			fmt.Fprintln(errOut, "mcpstack proxy: --addr-file:", err)
			return 2
		}
	}
	hs := &http.Server{Handler: handler(u, ownNames(addr), t), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(errOut, "mcpstack proxy: http://%s%s -> %s\n", ln.Addr(), u.Path, u)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
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
	}
	return 0
}

// handler is the HTTP proxy to upstream: every request goes to
// upstream's host with its own path and query, every byte both ways
// unchanged, event streams as they flow; the messages of the bodies go to
// the tap, under the session the Mcp-Session-Id header names. names are
// the proxy's own host names (see upstreamHost).
func handler(upstream *url.URL, names map[string]bool, t *tap) http.Handler {
	rp := &httputil.ReverseProxy{
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
			if x, _ := r.Context().Value(exchangeKey{}).(*exchange); x != nil && len(x.body) > 0 {
				facts := &record.HTTP{Method: x.method, Request: x.headers}
				if !gaveUp {
					facts.Status = http.StatusBadGateway
				}
				if !x.recorded {
					t.messageHTTP(x.session, server.ClientToServer, x.body, facts)
				}
				if ids := httpfacts.RequestIDs(x.body); len(ids) > 0 && !gaveUp {
					t.refused(x.session, http.StatusBadGateway, ids)
				}
			}
			w.WriteHeader(http.StatusBadGateway)
		},
		// The client's own Accept-Encoding goes on as it is: the default
		// transport would add gzip and undo it, changing what passes.
		Transport:     upstreamTransport(),
		FlushInterval: -1, // every write at once: event streams stream
		ErrorLog:      slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
		ModifyResponse: func(resp *http.Response) error {
			x, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
			if x == nil {
				return nil
			}
			session := resp.Header.Get("Mcp-Session-Id")
			if session == "" {
				session = x.session
			}
			respHeaders := t.headers(resp.Header)
			// The request is recorded now, under the session initialize's
			// answer opens, and before what answers it, with the facts of
			// its exchange.
			if len(x.body) > 0 && !x.recorded {
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
				// The answer keeps its status: an error's is judged by it
				// (two stateless requests may share an id).
				facts := &record.HTTP{Status: resp.StatusCode, Response: respHeaders}
				resp.Body = &jsonBody{ReadCloser: resp.Body, want: resp.ContentLength, gzip: encoding == "gzip", max: maxLine,
					done: func(b []byte) { t.messageHTTP(session, server.ServerToClient, b, facts) }}
			case "text/event-stream":
				resp.Body = &sseBody{ReadCloser: resp.Body, events: eventSplitter{max: maxLine}, message: func(event string, b []byte) {
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
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := &exchange{method: r.Method, session: r.Header.Get("Mcp-Session-Id"), headers: t.headers(r.Header)}
		// HTTP+SSE (2024-11-05): POST /messages?sessionId=... is answered
		// on the session's GET stream, maybe before the POST's own 202: the
		// request is recorded before it goes on.
		sseSession := false
		if x.session == "" {
			x.session = httpfacts.QuerySession(r.URL)
			sseSession = x.session != ""
		}
		if r.Body != nil && r.Method == http.MethodPost {
			b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
			r.Body.Close()
			if err != nil {
				http.Error(w, "mcpstack proxy: reading the request: "+err.Error(), http.StatusBadGateway)
				return
			}
			if len(b) > maxBody {
				http.Error(w, "mcpstack proxy: request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			x.body = bytes.TrimSpace(b)
			r.Body = io.NopCloser(bytes.NewReader(b)) // the same bytes go on
			if sseSession && len(x.body) > 0 {
				t.messageHTTP(x.session, server.ClientToServer, x.body, &record.HTTP{Method: x.method, SSE: true, Request: x.headers})
				x.recorded = true
			}
		}
		rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), exchangeKey{}, x)))
	})
}

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
	headers         map[string]string // the recorded ones
	body            []byte
	recorded        bool // the body is recorded already (HTTP+SSE: before it went on)
}

type exchangeKey struct{}

// jsonBody records a JSON answer as it is read through: once its
// Content-Length is in (before the client has its last bytes, so that
// what the client sends next cannot come before it in the recording), or
// at its end. It holds at most maxLine bytes: a larger answer passes
// unrecorded, with a warning.
type jsonBody struct {
	io.ReadCloser
	buf  bytes.Buffer
	want int64 // Content-Length; -1 when not known
	gzip bool  // Content-Encoding: gzip, undone for the recording
	max  int   // what it holds at most (maxLine)
	over bool  // larger than max
	once sync.Once
	done func([]byte)
}

func (b *jsonBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.over {
		if b.buf.Len()+n > b.max {
			b.over = true
			b.buf = bytes.Buffer{}
		} else {
			b.buf.Write(p[:n])
		}
	}
	if err == io.EOF || (b.want >= 0 && !b.over && int64(b.buf.Len()) >= b.want) {
		b.once.Do(b.finish)
	}
	return n, err
}

func (b *jsonBody) finish() {
	if b.over {
		slog.Warn("mcpstack proxy: an answer larger than the recording's bound passes unrecorded", "bound", b.max)
		return
	}
	body := b.buf.Bytes()
	if b.gzip {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			slog.Warn("mcpstack proxy: a gzip answer that does not decode passes unrecorded", "err", err)
			return
		}
		plain, err := io.ReadAll(io.LimitReader(zr, int64(b.max)+1))
		if err != nil || len(plain) > b.max {
			slog.Warn("mcpstack proxy: a gzip answer that does not decode within the bound passes unrecorded", "err", err)
			return
		}
		body = plain
	}
	b.done(bytes.TrimSpace(body))
}
