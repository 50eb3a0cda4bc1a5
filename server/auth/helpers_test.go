package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcpstack/mcpstack/server/auth"
)

const (
	testIssuer   = "https://as.example.com"
	testAudience = "https://mcp.example.com/mcp"
	testMetadata = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
)

// now is the fixed clock of the verifiers under test.
var now = time.Unix(1_900_000_000, 0)

func clock() time.Time { return now }

// keys are generated once per test binary: RSA generation is slow.
var keys = sync.OnceValue(func() struct {
	rsa, rsaOther *rsa.PrivateKey
	ec, ecOther   *ecdsa.PrivateKey
} {
	var k struct {
		rsa, rsaOther *rsa.PrivateKey
		ec, ecOther   *ecdsa.PrivateKey
	}
	var err error
	for _, p := range []**rsa.PrivateKey{&k.rsa, &k.rsaOther} {
		if *p, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
	}
	for _, p := range []**ecdsa.PrivateKey{&k.ec, &k.ecOther} {
		if *p, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	}
	return k
})

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// rsaJWK and ecJWK write public keys as JWKs by hand, independently of the
// JWKS library under test.
func rsaJWK(kid string, k *rsa.PrivateKey) map[string]any {
	return map[string]any{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
		"n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
}

func ecJWK(kid string, k *ecdsa.PrivateKey) map[string]any {
	pub, err := k.PublicKey.ECDH()
	if err != nil {
		panic(err)
	}
	raw := pub.Bytes() // 0x04 || X || Y, fixed length
	return map[string]any{"kty": "EC", "kid": kid, "use": "sig", "alg": "ES256", "crv": "P-256",
		"x": b64(raw[1:33]), "y": b64(raw[33:65])}
}

// jwksServer serves a JWK Set on 127.0.0.1 and counts the fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []map[string]any
	fetches atomic.Int64
	delay   atomic.Int64 // nanoseconds each fetch takes
}

func newJWKSServer(t *testing.T) *jwksServer {
	t.Helper()
	k := keys()
	s := &jwksServer{keys: []map[string]any{rsaJWK("rsa1", k.rsa), ecJWK("ec1", k.ec)}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.fetches.Add(1)
		time.Sleep(time.Duration(s.delay.Load()))
		s.mu.Lock()
		b, _ := json.Marshal(map[string]any{"keys": s.keys})
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *jwksServer) add(jwk map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys = append(s.keys, jwk)
}

func newJWKSVerifier(t *testing.T, s *jwksServer, opts ...auth.Option) *auth.JWT {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	v, err := auth.NewJWKS(ctx, s.URL+"/jwks.json", append([]auth.Option{
		auth.WithIssuer(testIssuer), auth.WithAudience(testAudience), auth.WithClock(clock),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// claims are valid claims, changed by edits.
func claims(edits ...func(jwt.MapClaims)) jwt.MapClaims {
	c := jwt.MapClaims{
		"sub":   "alice",
		"iss":   testIssuer,
		"aud":   testAudience,
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"scope": "mcp notes:read",
	}
	for _, e := range edits {
		e(c)
	}
	return c
}

func set(k string, v any) func(jwt.MapClaims) { return func(c jwt.MapClaims) { c[k] = v } }
func del(k string) func(jwt.MapClaims)        { return func(c jwt.MapClaims) { delete(c, k) } }

func sign(t *testing.T, m jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var paramRE = regexp.MustCompile(`([a-z_]+)="([^"]*)"`)

// parseChallenge splits a Bearer WWW-Authenticate value into its
// parameters, and checks its syntax on the way.
func parseChallenge(t *testing.T, h string) map[string]string {
	t.Helper()
	rest, ok := strings.CutPrefix(h, "Bearer")
	if !ok {
		t.Fatalf("challenge %q is not Bearer", h)
	}
	out := map[string]string{}
	for _, m := range paramRE.FindAllStringSubmatch(rest, -1) {
		if _, dup := out[m[1]]; dup {
			t.Fatalf("challenge %q repeats %s", h, m[1])
		}
		out[m[1]] = m[2]
	}
	if rebuilt := rebuild(out, rest); rebuilt != rest {
		t.Fatalf("challenge %q is not of the form Bearer k=\"v\", k=\"v\"", h)
	}
	return out
}

func rebuild(params map[string]string, rest string) string {
	var parts []string
	for _, m := range paramRE.FindAllStringSubmatch(rest, -1) {
		parts = append(parts, m[1]+`="`+params[m[1]]+`"`)
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, ", ")
}

// rpcError decodes a JSON-RPC error body that answers no request.
func rpcError(t *testing.T, body io.Reader) (code int, data map[string]any) {
	t.Helper()
	var msg map[string]any
	if err := json.NewDecoder(body).Decode(&msg); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	// No id member (jsonrpc.EncodeError's way for an error that answers no
	// known request); a null one would do too.
	e, _ := msg["error"].(map[string]any)
	if id, ok := msg["id"]; ok && id != nil || msg["jsonrpc"] != "2.0" || e == nil || e["message"] == "" {
		t.Fatalf("body %v is not a JSON-RPC error without id", msg)
	}
	c, _ := e["code"].(float64)
	data, _ = e["data"].(map[string]any)
	return int(c), data
}
