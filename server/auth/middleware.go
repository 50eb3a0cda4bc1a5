package auth

import (
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/wire"
)

// MiddlewareOption configures Middleware.
type MiddlewareOption interface{ apply(*mwConfig) }

type mwOptionFunc func(*mwConfig)

func (f mwOptionFunc) apply(c *mwConfig) { f(c) }

type mwConfig struct {
	metadataURL string
	realm       string
	scopes      []string
	log         *slog.Logger
}

// WithResourceMetadata sets the URL of the protected resource metadata
// document, sent as resource_metadata in every challenge (MetadataURL
// computes it from the resource).
func WithResourceMetadata(url string) MiddlewareOption {
	return mwOptionFunc(func(c *mwConfig) { c.metadataURL = url })
}

// WithRealm sets the challenge's realm (default "mcp").
func WithRealm(realm string) MiddlewareOption {
	return mwOptionFunc(func(c *mwConfig) { c.realm = realm })
}

// WithEndpointScopes requires scopes on every request through the
// middleware: a valid token without them gets 403 insufficient_scope, and
// 401 challenges name them in scope="...".
func WithEndpointScopes(scopes ...string) MiddlewareOption {
	return mwOptionFunc(func(c *mwConfig) { c.scopes = append(c.scopes, scopes...) })
}

// WithLogger sets where refusals are logged (never with the token):
// missing tokens at debug, everything else at info. Default: nowhere.
func WithLogger(l *slog.Logger) MiddlewareOption {
	return mwOptionFunc(func(c *mwConfig) { c.log = l })
}

// Middleware guards the MCP endpoint: each request needs a valid bearer
// token in its Authorization header (see the package documentation for
// the answers when it has none). The principal goes into the request's
// context (PrincipalFrom), and the Authorization header is removed before
// the request reaches next: a token is never passed on. The transports
// end a stream held open on the request (an SSE, listen or WebSocket
// stream) at the principal's Deadline.
func Middleware(v Verifier, opts ...MiddlewareOption) func(http.Handler) http.Handler {
	cfg := mwConfig{realm: "mcp", log: slog.New(slog.DiscardHandler)}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if rs, ok := v.(interface{ RequiredScopes() []string }); ok {
		for _, s := range rs.RequiredScopes() {
			if !slices.Contains(cfg.scopes, s) {
				cfg.scopes = append(cfg.scopes, s)
			}
		}
	}
	return func(next http.Handler) http.Handler {
		return &guarded{v: v, cfg: cfg, next: next}
	}
}

type guarded struct {
	v    Verifier
	cfg  mwConfig
	next http.Handler
}

// maxToken bounds a bearer token: a JWT of any reasonable claims is a
// few kilobytes, and the header may be a megabyte.
const maxToken = 16 << 10

func (g *guarded) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Has("access_token") {
		g.refuse(w, r, http.StatusBadRequest, "invalid_request", "send the token in the Authorization header, never in the query string", nil)
		return
	}
	values := r.Header.Values("Authorization")
	if len(values) > 1 {
		g.refuse(w, r, http.StatusBadRequest, "invalid_request", "more than one Authorization header", nil)
		return
	}
	var raw string
	if len(values) == 1 {
		scheme, rest, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
		if strings.EqualFold(scheme, "Bearer") {
			raw = strings.TrimSpace(rest)
			if raw == "" {
				g.refuse(w, r, http.StatusUnauthorized, "invalid_token", "the bearer token is empty", nil)
				return
			}
			if len(raw) > maxToken { // refused before it is decoded: anyone may send one
				g.refuse(w, r, http.StatusUnauthorized, "invalid_token", "the bearer token is longer than "+strconv.Itoa(maxToken)+" bytes", nil)
				return
			}
		}
	}
	if raw == "" { // no header, or another scheme: RFC 6750 §3.1, no error code
		g.refuse(w, r, http.StatusUnauthorized, "", "", nil)
		return
	}
	p, err := g.v.Verify(r.Context(), raw)
	var se *ScopeError
	switch {
	case errors.As(err, &se):
		scopes := slices.Clone(g.cfg.scopes)
		for _, s := range se.Required {
			if !slices.Contains(scopes, s) {
				scopes = append(scopes, s)
			}
		}
		g.refuse(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks "+strings.Join(se.Missing, " "), scopes)
		return
	case err != nil:
		desc := "the token is not valid"
		var te *TokenError
		if errors.As(err, &te) {
			desc = te.Description
		}
		g.cfg.log.Info("auth: token refused", "reason", desc, "err", err, "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
		g.refuse(w, r, http.StatusUnauthorized, "invalid_token", desc, nil)
		return
	}
	if missing := p.Missing(g.cfg.scopes...); len(missing) > 0 {
		g.refuse(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks "+strings.Join(missing, " "), g.cfg.scopes)
		return
	}
	r2 := r.WithContext(WithPrincipal(r.Context(), p))
	r2.Header = r.Header.Clone()
	r2.Header.Del("Authorization")
	g.next.ServeHTTP(w, r2)
}

// refuse answers status with a Bearer challenge and a JSON-RPC error body.
// errCode "" is the challenge without error, for a request without a token.
func (g *guarded) refuse(w http.ResponseWriter, r *http.Request, status int, errCode, desc string, scopes []string) {
	if len(scopes) == 0 {
		scopes = g.cfg.scopes
	}
	if errCode == "" || errCode == "invalid_request" {
		g.cfg.log.Debug("auth: request refused", "status", status, "reason", desc, "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	} else if status == http.StatusForbidden {
		g.cfg.log.Info("auth: insufficient scope", "reason", desc, "remote", r.RemoteAddr, "method", r.Method, "path", r.URL.Path)
	}
	w.Header().Set("WWW-Authenticate", challenge(g.cfg.realm, errCode, desc, scopes, g.cfg.metadataURL))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	e := &wire.Error{Code: CodeUnauthorized, Message: "Unauthorized: a bearer token is required"}
	switch status {
	case http.StatusForbidden:
		e = &wire.Error{Code: CodeInsufficientScope, Message: "Forbidden: insufficient scope: " + desc,
			Data: map[string]any{"error": errCode, "scope": strings.Join(scopes, " ")}}
	case http.StatusBadRequest:
		e = &wire.Error{Code: wire.CodeInvalidRequest, Message: "Bad Request: " + desc, Data: map[string]any{"error": errCode}}
	default:
		if errCode != "" {
			e = &wire.Error{Code: CodeUnauthorized, Message: "Unauthorized: " + desc, Data: map[string]any{"error": errCode}}
		}
	}
	_, _ = w.Write(jsonrpc.EncodeError(wire.ID{}, e))
}

// challenge builds a Bearer WWW-Authenticate value (RFC 6750 §3, RFC 9728 §5.1).
func challenge(realm, errCode, desc string, scopes []string, metadataURL string) string {
	var b strings.Builder
	b.WriteString("Bearer")
	sep := " "
	param := func(name, value string) {
		b.WriteString(sep)
		b.WriteString(name)
		b.WriteString(`="`)
		b.WriteString(quotable(value))
		b.WriteByte('"')
		sep = ", "
	}
	if realm != "" {
		param("realm", realm)
	}
	if errCode != "" {
		param("error", errCode)
	}
	if len(scopes) > 0 {
		param("scope", strings.Join(scopes, " "))
	}
	if desc != "" {
		param("error_description", desc)
	}
	if metadataURL != "" {
		param("resource_metadata", metadataURL)
	}
	return b.String()
}

// quotable keeps what RFC 6750 allows in a quoted value: %x20-21 / %x23-5B
// / %x5D-7E (no quote, no backslash, no control or non-ASCII character).
func quotable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s)
}
