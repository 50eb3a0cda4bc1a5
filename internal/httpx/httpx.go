// Package httpx holds what the HTTP transports share: JSON-RPC error bodies
// with an HTTP status, reading a JSON body within the limits, who the
// caller is, and writing event streams that a client which does not read
// cannot stall.
package httpx

import (
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/httprate"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/server/auth"
	"github.com/mcpstack/mcpstack/wire"
)

// The request headers read on every request, in the canonical form
// net/http keeps them under (TestHeaderNamesAreCanonical).
const (
	HeaderContentType     = "Content-Type"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderProtocolVersion = "Mcp-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderLastEventID     = "Last-Event-Id"
)

// Get is h.Get(key) for a key in canonical form: without canonicalizing
// it again, which costs more than the lookup on every request.
func Get(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// HasToken reports whether the comma-separated header name lists token,
// in any case ("keep-alive, Upgrade" lists upgrade).
func HasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for t := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// Error answers with a status and a JSON-RPC error body without id.
func Error(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: code, Message: msg}))
}

// ReadJSON reads a POSTed JSON body of at most max bytes. When it cannot,
// it has answered already (415 for another media type, 413 above max, 400
// for a broken read) and returns false. A body may come slowly: over
// HTTP/1 those errors get writeTimeout of their own (WriteDeadline's ran
// from the request's start); what answers a body read whole is armed by
// its writer (ArmWrite), after whatever the request waited for.
func ReadJSON(w http.ResponseWriter, r *http.Request, max int64, writeTimeout time.Duration) ([]byte, bool) {
	if !isJSON(Get(r.Header, HeaderContentType)) {
		Error(w, http.StatusUnsupportedMediaType, wire.CodeInvalidRequest, "Unsupported Media Type: Content-Type must be application/json")
		return nil, false
	}
	var body []byte
	var err error
	if n := r.ContentLength; n >= 0 && n <= min(max, presize) {
		// A small size the client announced: one allocation, no growing,
		// and no bound to add (net/http's body ends at the length). A
		// larger one grows with the bytes that come, not with the claim.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
		// Closed once read, net/http does not drain the body after the
		// handler (an io.CopyN and its reader, on every request).
		r.Body.Close()
	} else {
		rd := http.MaxBytesReader(w, r.Body, max)
		defer rd.Close()
		body, err = io.ReadAll(rd)
	}
	if err != nil {
		if r.ProtoMajor == 1 { // on HTTP/2 the error ends the stream at once
			ArmWrite(w, writeTimeout)
		}
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			Error(w, http.StatusRequestEntityTooLarge, wire.CodeInvalidRequest, "Request Entity Too Large: the body exceeds "+strconv.FormatInt(max, 10)+" bytes")
			return nil, false
		}
		Error(w, http.StatusBadRequest, wire.CodeParseError, "Parse error: reading the body: "+err.Error())
		return nil, false
	}
	return body, true
}

// Accepts reports whether one of r's Accept lines lists the media type t
// or */*, compared without case and without parameters. It allocates
// nothing: it runs on every POST and every stream.
func Accepts(r *http.Request, t string) bool {
	for _, line := range r.Header.Values("Accept") {
		for line != "" {
			var part string
			part, line, _ = strings.Cut(line, ",")
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			if strings.EqualFold(mt, t) || mt == "*/*" {
				return true
			}
		}
	}
	return false
}

// presize bounds the body ReadJSON allocates on the word of Content-Length
// alone.
const presize = 64 << 10

// isJSON reports whether a Content-Type is application/json, parameters
// allowed; the usual bare value is matched without parsing.
func isJSON(contentType string) bool {
	if strings.EqualFold(contentType, "application/json") {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// Caller is who sent r: the principal that authentication put in its
// context (the sessions it opens are bound to it), or, without one, the
// client's address, which per-client quotas count instead. Behind a
// reverse proxy every client has the proxy's address unless Identify was
// told to trust the proxy's word (TrustedProxies), or authentication is on.
func Caller(r *http.Request) core.Caller {
	if c, ok := known(r, nil); ok {
		return c
	}
	return identify(r, nil)
}

// known returns the caller r's context holds, when it stands: one an
// Identify found before, or the connection's address (ConnCaller) where
// no principal and no word of one of proxies names another.
func known(r *http.Request, proxies *TrustedProxies) (core.Caller, bool) {
	ctx := r.Context()
	c := core.CallerFrom(ctx)
	if c.Key == "" {
		return c, false
	}
	if conn, fromConn := ctx.Value(connCallerKey{}).(core.Caller); fromConn && c == conn {
		return c, auth.PrincipalFrom(ctx) == nil && proxies.clientIP(r) == ""
	}
	return c, true
}

// identify finds r's caller.
func identify(r *http.Request, proxies *TrustedProxies) core.Caller {
	if p := auth.PrincipalFrom(r.Context()); p != nil {
		return core.Caller{Owner: p.Owner(), Key: "principal:" + p.Owner(), Expires: p.Deadline()}
	}
	host := proxies.clientIP(r)
	if host == "" {
		return addressCaller(r.RemoteAddr)
	}
	return core.Caller{Key: "addr:" + httprate.CanonicalizeIP(host)}
}

// addressCaller is the caller of a client known by its address alone.
func addressCaller(remoteAddr string) core.Caller {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	// An IPv6 client usually has a /64 to itself: count the /64.
	return core.Caller{Key: "addr:" + httprate.CanonicalizeIP(host)}
}

// WithCaller returns r's context carrying Caller(r), for the calls the
// server makes on r's behalf (r's own context when it carries it already).
func WithCaller(r *http.Request) context.Context {
	if core.CallerFrom(r.Context()).Key != "" {
		return r.Context()
	}
	return core.WithCaller(r.Context(), Caller(r))
}

type connCallerKey struct{}

// ConnCaller is an http.Server's ConnContext: a connection's requests
// carry the caller its address makes, found once for the connection. A
// request that nothing else names a caller for (no principal, no trusted
// proxy's word) keeps it, and Identify copies no request for it.
func ConnCaller(ctx context.Context, c net.Conn) context.Context {
	return connContext(ctx, c.RemoteAddr().String())
}

func connContext(ctx context.Context, remoteAddr string) context.Context {
	caller := addressCaller(remoteAddr)
	return core.WithCaller(context.WithValue(ctx, connCallerKey{}, caller), caller)
}

// Identify finds the caller of each request once, after authentication,
// for the rate limits and the transports behind it; the client address
// of a request from one of proxies is the one it forwarded.
func Identify(proxies *TrustedProxies) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if _, ok := known(r, proxies); ok {
				next.ServeHTTP(w, r) // no copy of the request
				return
			}
			next.ServeHTTP(w, r.WithContext(core.WithCaller(r.Context(), identify(r, proxies))))
		})
	}
}

// Busy answers a session or request over a limit: 429 with Retry-After
// when the caller is over its own quota, 503 when the server is full.
func Busy(w http.ResponseWriter, err error) {
	w.Header().Set("Retry-After", "5")
	status := http.StatusServiceUnavailable
	msg := "Service Unavailable: "
	if errors.Is(err, core.ErrQuota) {
		status, msg = http.StatusTooManyRequests, "Too Many Requests: "
	}
	Error(w, status, wire.CodeServerBusy, msg+strings.TrimPrefix(err.Error(), "server: "))
}
