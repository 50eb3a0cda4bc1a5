package auth

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/wire"
)

// JSON-RPC error codes of this package, from the implementation-defined
// server error range.
const (
	// CodeUnauthorized is the body code of a 401: no token, or an invalid one.
	CodeUnauthorized = -32001
	// CodeInsufficientScope is the body code of a 403, and the error of a
	// call whose tool needs a scope the token lacks.
	CodeInsufficientScope = -32003
)

// Principal is who a verified token speaks for.
type Principal struct {
	Subject   string         // sub: never empty
	Scopes    []string       // from the scope (space-separated) and scp claims
	Issuer    string         // iss, "" when the token has none
	Audience  []string       // aud
	ExpiresAt time.Time      // exp
	Claims    map[string]any // every claim; numbers are json.Number
	// ValidUntil is when the server stops honouring the token: exp plus
	// the verifier's leeway for clock skew. A stream held open on the
	// token ends then. Zero: ExpiresAt.
	ValidUntil time.Time
}

// Deadline is when the server stops honouring p's token (zero: never).
func (p *Principal) Deadline() time.Time {
	if !p.ValidUntil.IsZero() {
		return p.ValidUntil
	}
	return p.ExpiresAt
}

// HasScopes reports whether p holds every one of scopes.
func (p *Principal) HasScopes(scopes ...string) bool { return len(p.Missing(scopes...)) == 0 }

// Missing returns the scopes among want that p does not hold.
func (p *Principal) Missing(want ...string) []string {
	var out []string
	for _, s := range want {
		if s != "" && !slices.Contains(p.Scopes, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Owner is the key that per-user records are stored under: the subject,
// qualified by the issuer when the token has one ("iss#sub"), so that two
// issuers' subjects never collide.
//
// Two principals never share a key. Where a '#' would make "iss#sub"
// ambiguous (in the issuer, or in the subject of a token without one:
// {iss: a, sub: b} against {sub: "a#b"}), the key is '#' followed by both
// parts escaped, a form the others never take; every other principal keeps
// the key it always had, so stored sessions, tasks and conversations keep
// their owners.
func (p *Principal) Owner() string {
	switch {
	case p.Issuer == "" && !strings.Contains(p.Subject, "#"):
		return p.Subject
	case p.Issuer != "" && !strings.Contains(p.Issuer, "#"):
		return p.Issuer + "#" + p.Subject
	}
	return "#" + url.PathEscape(p.Issuer) + "#" + url.PathEscape(p.Subject)
}

type ctxKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// PrincipalFrom returns the principal of the current request, or nil when
// authentication is off (or over stdio).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// OwnerFrom returns the owner key of the current request's principal, or ""
// when there is none (authentication off, stdio): the one local user.
func OwnerFrom(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil {
		return p.Owner()
	}
	return ""
}

// RequireScopes returns nil when the caller holds every one of scopes, or
// when there is no principal (authentication off, stdio). Otherwise it
// returns a *wire.Error with CodeInsufficientScope, which a method returns
// as is:
//
//	if err := auth.RequireScopes(ctx, "notes:write"); err != nil {
//		return nil, err
//	}
func RequireScopes(ctx context.Context, scopes ...string) error {
	p := PrincipalFrom(ctx)
	if p == nil {
		return nil
	}
	missing := p.Missing(scopes...)
	if len(missing) == 0 {
		return nil
	}
	return insufficientScope(missing)
}

func insufficientScope(missing []string) *wire.Error {
	quoted := make([]string, len(missing))
	for i, s := range missing {
		quoted[i] = `"` + s + `"`
	}
	return &wire.Error{
		Code:    CodeInsufficientScope,
		Message: "Forbidden: insufficient scope: this needs " + strings.Join(quoted, ", "),
		Data: map[string]any{
			"error":   "insufficient_scope",
			"scope":   strings.Join(missing, " "),
			"missing": missing,
		},
	}
}

// Allowed reports whether the caller holds every one of scopes (always
// true without a principal). Use it to leave out of a list what the caller
// may not call.
func Allowed(ctx context.Context, scopes ...string) bool {
	p := PrincipalFrom(ctx)
	return p == nil || p.HasScopes(scopes...)
}

// ScopeMap maps names (of tools, prompts, resources) to the scopes calling
// them needs; a name that is not in the map needs none.
//
//	var toolScopes = auth.ScopeMap{"delete_conversation": {"conversations:write"}}
//	...
//	if err := toolScopes.Check(ctx, p.Name); err != nil {
//		return nil, err
//	}
type ScopeMap map[string][]string

// Check is RequireScopes with the scopes of name.
func (m ScopeMap) Check(ctx context.Context, name string) error {
	return RequireScopes(ctx, m[name]...)
}

// Allowed is Allowed with the scopes of name.
func (m ScopeMap) Allowed(ctx context.Context, name string) bool {
	return Allowed(ctx, m[name]...)
}

// Scopes lists every scope in the map once, sorted: what the protected
// resource metadata lists as scopes_supported.
func (m ScopeMap) Scopes() []string {
	var out []string
	for _, ss := range m {
		for _, s := range ss {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	slices.Sort(out)
	return out
}

// scopesOf reads the scope claim (RFC 8693/9068: one space-separated
// string) and the scp claim some servers send (a string or an array).
func scopesOf(claims map[string]any) []string {
	var out []string
	add := func(s string) {
		for _, f := range strings.Fields(s) {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	for _, name := range []string{"scope", "scp"} {
		switch v := claims[name].(type) {
		case string:
			add(v)
		case []any:
			for _, e := range v {
				if s, ok := e.(string); ok {
					add(s)
				}
			}
		}
	}
	return out
}
