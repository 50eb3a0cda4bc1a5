package auth_test

import (
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/server/auth"
)

// whoami answers the subject of the principal, and fails when the token
// reached it.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "the Authorization header was passed on", http.StatusInternalServerError)
		return
	}
	p := auth.PrincipalFrom(r.Context())
	if p == nil {
		http.Error(w, "no principal", http.StatusInternalServerError)
		return
	}
	_, _ = io.WriteString(w, p.Subject)
})

type authCase struct {
	name    string
	headers []string // Authorization values
	query   string
	status  int
	params  map[string]string // exact WWW-Authenticate parameters; nil: no header
	code    int               // JSON-RPC error code of the body
	subject string            // body of a 200
}

func runCases(t *testing.T, h http.Handler, cases []authCase) {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, ts.URL+"/mcp"+tc.query, strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range tc.headers {
				req.Header.Add("Authorization", v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d, want %d; WWW-Authenticate %q; body %s", resp.StatusCode, tc.status, resp.Header.Get("WWW-Authenticate"), b)
			}
			wa := resp.Header.Values("WWW-Authenticate")
			if tc.params == nil {
				if len(wa) != 0 {
					t.Fatalf("WWW-Authenticate %q, want none", wa)
				}
				b, _ := io.ReadAll(resp.Body)
				if string(b) != tc.subject {
					t.Fatalf("body %q, want %q", b, tc.subject)
				}
				return
			}
			if len(wa) != 1 {
				t.Fatalf("WWW-Authenticate %q, want one", wa)
			}
			if got := parseChallenge(t, wa[0]); !maps.Equal(got, tc.params) {
				t.Fatalf("WWW-Authenticate %q\n got %v\nwant %v", wa[0], got, tc.params)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Fatalf("Content-Type %q", ct)
			}
			code, data := rpcError(t, resp.Body)
			if code != tc.code {
				t.Fatalf("body code %d, want %d", code, tc.code)
			}
			if e := tc.params["error"]; e != "" && data["error"] != e {
				t.Fatalf("body data %v, want error %q", data, e)
			}
		})
	}
}

// challenge parameters.
func params(kv ...string) map[string]string {
	m := map[string]string{"realm": "mcp", "scope": "mcp", "resource_metadata": testMetadata}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(m, kv[i])
		} else {
			m[kv[i]] = kv[i+1]
		}
	}
	return m
}

func invalid(desc string) map[string]string {
	return params("error", "invalid_token", "error_description", desc)
}

func bearer(tok string) []string { return []string{"Bearer " + tok} }

func TestMiddlewareJWKS(t *testing.T) {
	k := keys()
	js := newJWKSServer(t)
	v := newJWKSVerifier(t, js)
	h := auth.Middleware(v, auth.WithResourceMetadata(testMetadata), auth.WithEndpointScopes("mcp"))(whoami)
	rs := func(c jwt.MapClaims) []string { return bearer(sign(t, jwt.SigningMethodRS256, k.rsa, "rsa1", c)) }
	hs := sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("s", 32)), "rsa1", claims())
	// The classic key confusion: the RSA public key as an HMAC secret.
	confused := sign(t, jwt.SigningMethodHS256, k.rsa.N.Bytes(), "rsa1", claims())
	none := sign(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, "rsa1", claims())
	runCases(t, h, []authCase{
		{name: "valid RS256", headers: rs(claims()), status: 200, subject: "alice"},
		{name: "valid ES256", headers: bearer(sign(t, jwt.SigningMethodES256, k.ec, "ec1", claims(set("sub", "bob")))), status: 200, subject: "bob"},
		{name: "valid RS256 without kid", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsa, "", claims())), status: 200, subject: "alice"},
		{name: "valid, scheme in lower case", headers: []string{"bearer " + rs(claims())[0][len("Bearer "):]}, status: 200, subject: "alice"},
		{name: "valid, audience in a list", headers: rs(claims(set("aud", []string{"https://other.example.com", testAudience}))), status: 200, subject: "alice"},
		{name: "valid, expired within the leeway", headers: rs(claims(set("exp", now.Add(-10*time.Second).Unix()))), status: 200, subject: "alice"},
		{name: "valid, scopes in scp", headers: rs(claims(del("scope"), set("scp", []string{"mcp"}))), status: 200, subject: "alice"},

		{name: "missing", status: 401, params: params(), code: auth.CodeUnauthorized},
		{name: "other scheme", headers: []string{"Basic YWxpY2U6c2VjcmV0"}, status: 401, params: params(), code: auth.CodeUnauthorized},
		{name: "empty bearer", headers: []string{"Bearer "}, status: 401, params: invalid("the bearer token is empty"), code: auth.CodeUnauthorized},
		{name: "a token of 20 KB", headers: bearer(strings.Repeat("a", 20<<10)), status: 401, params: invalid("the bearer token is longer than 16384 bytes"), code: auth.CodeUnauthorized},
		{name: "malformed", headers: bearer("not-a-jwt"), status: 401, params: invalid("the token is malformed (not a JWT)"), code: auth.CodeUnauthorized},
		{name: "malformed segments", headers: bearer("a.b.c"), status: 401, params: invalid("the token is malformed (not a JWT)"), code: auth.CodeUnauthorized},
		{name: "expired", headers: rs(claims(set("exp", now.Add(-time.Hour).Unix()))), status: 401, params: invalid("the token expired"), code: auth.CodeUnauthorized},
		{name: "not yet valid", headers: rs(claims(set("nbf", now.Add(time.Hour).Unix()))), status: 401, params: invalid("the token is not valid yet (nbf)"), code: auth.CodeUnauthorized},
		{name: "issued in the future", headers: rs(claims(set("iat", now.Add(time.Hour).Unix()))), status: 401, params: invalid("the token was issued in the future (iat)"), code: auth.CodeUnauthorized},
		{name: "wrong audience", headers: rs(claims(set("aud", "https://other.example.com/mcp"))), status: 401, params: invalid("the token was not issued for this resource (aud)"), code: auth.CodeUnauthorized},
		{name: "no audience", headers: rs(claims(del("aud"))), status: 401, params: invalid("the token has no aud claim"), code: auth.CodeUnauthorized},
		{name: "wrong issuer", headers: rs(claims(set("iss", "https://evil.example.com"))), status: 401, params: invalid("the token's issuer is not accepted (iss)"), code: auth.CodeUnauthorized},
		{name: "no expiry", headers: rs(claims(del("exp"))), status: 401, params: invalid("the token has no exp claim"), code: auth.CodeUnauthorized},
		{name: "no subject", headers: rs(claims(del("sub"))), status: 401, params: invalid("the token has no subject (sub)"), code: auth.CodeUnauthorized},
		{name: "wrong signature (other RSA key)", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsaOther, "rsa1", claims())), status: 401, params: invalid("the token's signature does not verify"), code: auth.CodeUnauthorized},
		{name: "wrong signature (other EC key)", headers: bearer(sign(t, jwt.SigningMethodES256, k.ecOther, "ec1", claims())), status: 401, params: invalid("the token's signature does not verify"), code: auth.CodeUnauthorized},
		{name: "wrong signature, no kid", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsaOther, "", claims())), status: 401, params: invalid("the token's signature does not verify"), code: auth.CodeUnauthorized},
		{name: "key of another algorithm", headers: bearer(sign(t, jwt.SigningMethodRS256, k.rsa, "ec1", claims())), status: 401, params: invalid("no key to check the token's signature with"), code: auth.CodeUnauthorized},
		{name: "alg none", headers: bearer(none), status: 401, params: invalid("the token's signing algorithm is not accepted (want RS256 or ES256)"), code: auth.CodeUnauthorized},
		{name: "HS256 against JWKS", headers: bearer(hs), status: 401, params: invalid("the token's signing algorithm is not accepted (want RS256 or ES256)"), code: auth.CodeUnauthorized},
		{name: "HS256 with the RSA key as secret", headers: bearer(confused), status: 401, params: invalid("the token's signing algorithm is not accepted (want RS256 or ES256)"), code: auth.CodeUnauthorized},
		{name: "RS384 not accepted", headers: bearer(sign(t, jwt.SigningMethodRS384, k.rsa, "rsa1", claims())), status: 401, params: invalid("the token's signing algorithm is not accepted (want RS256 or ES256)"), code: auth.CodeUnauthorized},

		{name: "wrong scope", headers: rs(claims(set("scope", "notes:read"))), status: 403,
			params: params("error", "insufficient_scope", "error_description", "the token lacks mcp"), code: auth.CodeInsufficientScope},
		{name: "no scope", headers: rs(claims(del("scope"))), status: 403,
			params: params("error", "insufficient_scope", "error_description", "the token lacks mcp"), code: auth.CodeInsufficientScope},

		{name: "token in the query string", query: "?access_token=" + rs(claims())[0][len("Bearer "):], status: 400,
			params: params("error", "invalid_request", "error_description", "send the token in the Authorization header, never in the query string"), code: -32600},
		{name: "token in the query string and the header", headers: rs(claims()), query: "?access_token=x", status: 400,
			params: params("error", "invalid_request", "error_description", "send the token in the Authorization header, never in the query string"), code: -32600},
		{name: "two Authorization headers", headers: append(rs(claims()), rs(claims())...), status: 400,
			params: params("error", "invalid_request", "error_description", "more than one Authorization header"), code: -32600},
	})
}

func TestMiddlewareHS256(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, err := auth.NewHS256(secret, auth.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	// No metadata document, no endpoint scopes: the challenges are bare.
	h := auth.Middleware(v)(whoami)
	hs := func(key []byte, c jwt.MapClaims) []string { return bearer(sign(t, jwt.SigningMethodHS256, key, "", c)) }
	p := func(kv ...string) map[string]string {
		m := map[string]string{"realm": "mcp"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	minted, err := authtoken.MintHS256(secret, authtoken.Mint{Subject: "carol", Scopes: []string{"a"}, TTL: time.Hour, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, h, []authCase{
		{name: "valid", headers: hs(secret, claims()), status: 200, subject: "alice"},
		{name: "minted", headers: bearer(minted), status: 200, subject: "carol"},
		{name: "missing", status: 401, params: p(), code: auth.CodeUnauthorized},
		{name: "expired", headers: hs(secret, claims(set("exp", now.Add(-time.Minute).Unix()))), status: 401,
			params: p("error", "invalid_token", "error_description", "the token expired"), code: auth.CodeUnauthorized},
		{name: "wrong secret", headers: hs([]byte(strings.Repeat("x", 32)), claims()), status: 401,
			params: p("error", "invalid_token", "error_description", "the token's signature does not verify"), code: auth.CodeUnauthorized},
		{name: "RS256 against HS256", headers: bearer(sign(t, jwt.SigningMethodRS256, keys().rsa, "", claims())), status: 401,
			params: p("error", "invalid_token", "error_description", "the token's signing algorithm is not accepted (want HS256)"), code: auth.CodeUnauthorized},
		{name: "HS512 not accepted", headers: bearer(sign(t, jwt.SigningMethodHS512, secret, "", claims())), status: 401,
			params: p("error", "invalid_token", "error_description", "the token's signing algorithm is not accepted (want HS256)"), code: auth.CodeUnauthorized},
	})
}

// TestChallengeFormat pins the exact header text, parameter order included.
func TestChallengeFormat(t *testing.T) {
	v, err := auth.NewHS256([]byte(strings.Repeat("k", 32)), auth.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	h := auth.Middleware(v, auth.WithResourceMetadata(testMetadata), auth.WithEndpointScopes("mcp", "notes:read"))(whoami)
	for _, tc := range []struct{ auth, want string }{
		{"", `Bearer realm="mcp", scope="mcp notes:read", resource_metadata="` + testMetadata + `"`},
		{"Bearer x", `Bearer realm="mcp", error="invalid_token", scope="mcp notes:read", error_description="the token is malformed (not a JWT)", resource_metadata="` + testMetadata + `"`},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		h.ServeHTTP(rec, req)
		if got := rec.Header().Get("WWW-Authenticate"); got != tc.want {
			t.Errorf("Authorization %q:\n got %s\nwant %s", tc.auth, got, tc.want)
		}
		if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
			t.Errorf("Cache-Control %q", cc)
		}
	}
}

// TestTokenNeverLogged: refusals are logged with their reason, never with
// the token.
func TestTokenNeverLogged(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, _ := auth.NewHS256(secret, auth.WithClock(clock))
	var logs strings.Builder
	h := auth.Middleware(v, auth.WithLogger(newTextLogger(&logs)))(whoami)
	expired := sign(t, jwt.SigningMethodHS256, secret, "", claims(set("exp", now.Add(-time.Hour).Unix())))
	forged := sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("x", 32)), "", claims())
	for _, tok := range []string{expired, forged, "garbage.tokenxyz.sigqwerty"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp?x=1", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		h.ServeHTTP(rec, req)
		if rec.Code != 401 {
			t.Fatalf("status %d", rec.Code)
		}
		sig := tok[strings.LastIndex(tok, ".")+1:]
		if strings.Contains(logs.String(), tok) || strings.Contains(logs.String(), sig) {
			t.Fatalf("the token was logged: %s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "the token expired") {
		t.Fatalf("the reason was not logged: %s", logs.String())
	}
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestOptions: WithRealm changes the realm.
func TestOptions(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	v, _ := auth.NewHS256(secret)
	rec := httptest.NewRecorder()
	auth.Middleware(v, auth.WithRealm("notes"))(whoami).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if rec.Header().Get("WWW-Authenticate") != `Bearer realm="notes"` {
		t.Errorf("realm: %q", rec.Header().Get("WWW-Authenticate"))
	}
}
