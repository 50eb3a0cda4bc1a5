package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpstack/mcpstack/server/auth"
)

func TestVerifyPrincipal(t *testing.T) {
	k := keys()
	v := newJWKSVerifier(t, newJWKSServer(t))
	tok := sign(t, jwt.SigningMethodES256, k.ec, "ec1", claims(set("scp", []any{"notes:write", "mcp"}), set("tenant", "acme")))
	p, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if p.Subject != "alice" || p.Issuer != testIssuer || !slices.Equal(p.Audience, []string{testAudience}) ||
		!p.ExpiresAt.Equal(now.Add(time.Hour)) || p.Claims["tenant"] != "acme" {
		t.Fatalf("principal %+v", p)
	}
	if want := []string{"mcp", "notes:read", "notes:write"}; !slices.Equal(p.Scopes, want) {
		t.Fatalf("scopes %q, want %q", p.Scopes, want)
	}
	if p.Owner() != testIssuer+"#alice" {
		t.Fatalf("owner %q", p.Owner())
	}
	if !p.HasScopes("mcp", "notes:write") || p.HasScopes("admin") {
		t.Fatal("HasScopes")
	}
}

func TestVerifyErrors(t *testing.T) {
	k := keys()
	v := newJWKSVerifier(t, newJWKSServer(t))
	for _, tc := range []struct {
		name  string
		tok   string
		cause error
	}{
		{"expired", sign(t, jwt.SigningMethodRS256, k.rsa, "rsa1", claims(set("exp", now.Add(-time.Hour).Unix()))), jwt.ErrTokenExpired},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, k.rsa, "rsa1", claims(set("aud", "x"))), jwt.ErrTokenInvalidAudience},
		{"wrong signature", sign(t, jwt.SigningMethodRS256, k.rsaOther, "rsa1", claims()), jwt.ErrTokenSignatureInvalid},
	} {
		p, err := v.Verify(context.Background(), tc.tok)
		var te *auth.TokenError
		if p != nil || !errors.Is(err, auth.ErrInvalidToken) || !errors.Is(err, tc.cause) || !errors.As(err, &te) || te.Description == "" {
			t.Errorf("%s: %v, %v", tc.name, p, err)
		}
		if strings.Contains(err.Error(), tc.tok) {
			t.Errorf("%s: the error repeats the token", tc.name)
		}
	}
}

func TestVerifyRequiredScopes(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, err := auth.NewHS256(secret, auth.WithClock(clock), auth.WithRequiredScopes("mcp", "admin"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodHS256, secret, "", claims()))
	var se *auth.ScopeError
	if p == nil || !errors.Is(err, auth.ErrInsufficientScope) || !errors.As(err, &se) ||
		!slices.Equal(se.Missing, []string{"admin"}) || !slices.Equal(se.Required, []string{"mcp", "admin"}) {
		t.Fatalf("%v, %v", p, err)
	}
	// Through the middleware: 403 naming every required scope.
	h := auth.Middleware(v)(whoami)
	runCases(t, h, []authCase{
		{name: "verifier scopes", headers: bearer(sign(t, jwt.SigningMethodHS256, secret, "", claims())), status: 403,
			params: map[string]string{"realm": "mcp", "error": "insufficient_scope", "scope": "mcp admin", "error_description": "the token lacks admin"}, code: auth.CodeInsufficientScope},
		{name: "missing names them", status: 401, params: map[string]string{"realm": "mcp", "scope": "mcp admin"}, code: auth.CodeUnauthorized},
	})
}

// TestUnknownKID: a token naming a key id the cache lacks makes the
// verifier fetch the JWKS again at once; the key is still unknown, so 401.
// A second unknown key id right after does not fetch again (rate limit),
// and is refused at once.
func TestUnknownKID(t *testing.T) {
	k := keys()
	js := newJWKSServer(t)
	v := newJWKSVerifier(t, js)
	h := auth.Middleware(v, auth.WithResourceMetadata(testMetadata))(whoami)
	if n := js.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches at start, want 1", n)
	}
	p := map[string]string{"realm": "mcp", "error": "invalid_token", "error_description": "no known key has the token's key id (kid)", "resource_metadata": testMetadata}
	runCases(t, h, []authCase{{name: "unknown kid", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsa, "nope", claims())), status: 401, params: p, code: auth.CodeUnauthorized}})
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after an unknown kid, want 2", n)
	}
	start := time.Now()
	runCases(t, h, []authCase{{name: "second unknown kid", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsa, "nope2", claims())), status: 401, params: p, code: auth.CodeUnauthorized}})
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after a second unknown kid, want still 2", n)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the rate-limited refusal took %s", d)
	}
}

// TestKeyRotation: a key the authorization server adds is found by the
// refresh an unknown key id triggers.
func TestKeyRotation(t *testing.T) {
	k := keys()
	js := newJWKSServer(t)
	v := newJWKSVerifier(t, js)
	js.add(rsaJWK("rsa2", k.rsaOther))
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsaOther, "rsa2", claims(set("sub", "dave"))))
	if err != nil || p.Subject != "dave" {
		t.Fatalf("%v, %v", p, err)
	}
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
}

// A request whose client leaves while its unknown key id has the JWKS
// fetched again does not cut the fetch short: it would have spent the
// refresh's turn (one a minute), and a key the authorization server has
// just added would stay unknown until the next turn.
func TestKeyRotationSurvivesAGoneClient(t *testing.T) {
	k := keys()
	js := newJWKSServer(t)
	v := newJWKSVerifier(t, js)
	js.add(rsaJWK("rsa2", k.rsaOther))
	js.delay.Store(int64(200 * time.Millisecond))
	gone, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := v.Verify(gone, sign(t, jwt.SigningMethodRS256, k.rsa, "bogus", claims())); err == nil {
		t.Fatal("a token of an unknown key id verified")
	}
	p, err := v.Verify(context.Background(), sign(t, jwt.SigningMethodRS256, k.rsaOther, "rsa2", claims(set("sub", "erin"))))
	if err != nil || p.Subject != "erin" {
		t.Fatalf("a token of the key added before the gone client's refresh: %v, %v", p, err)
	}
}

// TestPeriodicRefresh: the JWKS is fetched again on its interval.
func TestPeriodicRefresh(t *testing.T) {
	js := newJWKSServer(t)
	newJWKSVerifier(t, js, auth.WithRefreshInterval(20*time.Millisecond))
	deadline := time.Now().Add(5 * time.Second)
	for js.fetches.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d fetches in 5s with a 20ms interval", js.fetches.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestNewErrors(t *testing.T) {
	js := newJWKSServer(t)
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"short secret": func() error { _, err := auth.NewHS256([]byte("short")); return err },
		"HS256 with algorithms": func() error {
			_, err := auth.NewHS256([]byte(strings.Repeat("k", 32)), auth.WithAlgorithms("HS512"))
			return err
		},
		"JWKS without audience": func() error { _, err := auth.NewJWKS(ctx, js.URL); return err },
		"JWKS with HS256": func() error {
			_, err := auth.NewJWKS(ctx, js.URL, auth.WithAudience(testAudience), auth.WithAlgorithms("RS256", "HS256"))
			return err
		},
		"JWKS with none": func() error {
			_, err := auth.NewJWKS(ctx, js.URL, auth.WithAudience(testAudience), auth.WithAlgorithms("none"))
			return err
		},
		"JWKS over http on a public host": func() error {
			_, err := auth.NewJWKS(ctx, "http://as.example.com/jwks", auth.WithAudience(testAudience))
			return err
		},
		"JWKS not reachable": func() error {
			dead := httptest.NewServer(http.NotFoundHandler())
			dead.Close()
			_, err := auth.NewJWKS(ctx, dead.URL, auth.WithAudience(testAudience))
			return err
		},
		"relative JWKS URL": func() error { _, err := auth.NewJWKS(ctx, "/jwks", auth.WithAudience(testAudience)); return err },
		"no bound on refreshes for unknown key ids": func() error {
			_, err := auth.NewJWKS(ctx, js.URL, auth.WithAudience(testAudience), auth.WithUnknownKIDRefresh(0))
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := auth.NewJWKS(ctx, js.URL, auth.WithAudience(testAudience), auth.WithAlgorithms("ES256")); err != nil {
		t.Errorf("ES256 only: %v", err)
	}
}

// TestDeadlineHasLeeway: a token is honoured until exp plus the leeway the
// verifier allows for clock skew, so a stream opened with a token the
// verifier just accepted is not cut at once (found in review).
func TestDeadlineHasLeeway(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	exp := now.Add(-10 * time.Second) // expired, within the default 30s leeway
	v, _ := auth.NewHS256(secret, auth.WithClock(clock))
	tok := sign(t, jwt.SigningMethodHS256, secret, "", claims(set("exp", exp.Unix())))
	p, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("a token within the leeway: %v", err)
	}
	if !p.Deadline().After(now) || !p.Deadline().Equal(exp.Add(30*time.Second)) {
		t.Errorf("deadline %v, want exp+30s = %v", p.Deadline(), exp.Add(30*time.Second))
	}
}
