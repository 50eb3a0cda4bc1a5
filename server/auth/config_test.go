package auth_test

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/server/auth"
)

func TestMetadataDocument(t *testing.T) {
	h, err := auth.ProtectedResourceMetadata(auth.Metadata{
		Resource:             testAudience,
		AuthorizationServers: []string{testIssuer},
		ScopesSupported:      []string{"mcp", "notes:write"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource/mcp", nil))
	want := `{"resource":"https://mcp.example.com/mcp","authorization_servers":["https://as.example.com"],` +
		`"scopes_supported":["mcp","notes:write"],"bearer_methods_supported":["header"]}` + "\n"
	if rec.Code != 200 || rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" ||
		rec.Header().Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("%d %v\n%s", rec.Code, rec.Header(), rec.Body)
	}
	for method, status := range map[string]int{http.MethodHead: 200, http.MethodOptions: 204, http.MethodPost: 405} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		if rec.Code != status {
			t.Errorf("%s: %d, want %d", method, rec.Code, status)
		}
	}
	for name, md := range map[string]auth.Metadata{
		"no authorization server": {Resource: testAudience},
		"relative resource":       {Resource: "/mcp", AuthorizationServers: []string{testIssuer}},
		"resource with fragment":  {Resource: testAudience + "#x", AuthorizationServers: []string{testIssuer}},
		"relative server":         {Resource: testAudience, AuthorizationServers: []string{"as.example.com"}},
	} {
		if _, err := auth.ProtectedResourceMetadata(md); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMetadataPaths(t *testing.T) {
	for _, tc := range []struct {
		resource string
		paths    []string
		url      string
	}{
		{"https://mcp.example.com/mcp", []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"},
			"https://mcp.example.com/.well-known/oauth-protected-resource/mcp"},
		{"https://mcp.example.com", []string{"/.well-known/oauth-protected-resource"}, "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"https://mcp.example.com/", []string{"/.well-known/oauth-protected-resource"}, "https://mcp.example.com/.well-known/oauth-protected-resource"},
		{"http://127.0.0.1:8000/a/mcp", []string{"/.well-known/oauth-protected-resource/a/mcp", "/.well-known/oauth-protected-resource"},
			"http://127.0.0.1:8000/.well-known/oauth-protected-resource/a/mcp"},
	} {
		paths, err := auth.MetadataPaths(tc.resource)
		u, err2 := auth.MetadataURL(tc.resource)
		if err != nil || err2 != nil || !slices.Equal(paths, tc.paths) || u != tc.url {
			t.Errorf("%s: %q %q %v %v", tc.resource, paths, u, err, err2)
		}
	}
}

// TestConfigOAuth builds the oauth mode from flags as `serve` would, mounts
// it on chi, and checks the metadata routes and the challenge.
func TestConfigOAuth(t *testing.T) {
	js := newJWKSServer(t)
	var c auth.Config
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	c.RegisterFlags(fl)
	if err := fl.Parse([]string{"--auth", "oauth", "--auth-jwks-url", js.URL, "--auth-issuer", testIssuer,
		"--auth-audience", testAudience, "--auth-scopes", "mcp,notes:read"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, err := auth.New(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if a.Mode != auth.ModeOAuth || a.Resource != testAudience || a.MetadataURL != testMetadata {
		t.Fatalf("%+v", a)
	}
	r := chi.NewRouter()
	a.Mount(r)
	r.With(a.Middleware()).Handle("/mcp", whoami)
	ts := httptest.NewServer(r)
	defer ts.Close()
	for _, p := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var md auth.Metadata
		err = json.NewDecoder(resp.Body).Decode(&md)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || md.Resource != testAudience || !slices.Equal(md.AuthorizationServers, []string{testIssuer}) ||
			!slices.Equal(md.ScopesSupported, []string{"mcp", "notes:read"}) || !slices.Equal(md.BearerMethodsSupported, []string{"header"}) {
			t.Fatalf("%s: %d %+v %v", p, resp.StatusCode, md, err)
		}
	}
	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `Bearer realm="mcp", scope="mcp notes:read", resource_metadata="` + testMetadata + `"`
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != want {
		t.Fatalf("%d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

func TestConfigHS256(t *testing.T) {
	secret := strings.Repeat("z", 40)
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok, _ := authtoken.MintHS256([]byte(secret), authtoken.Mint{Subject: "alice", TTL: time.Hour})
	check := func(t *testing.T, c auth.Config) {
		t.Helper()
		a, err := auth.New(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if a.MetadataURL != "" || len(a.MetadataPaths()) != 0 {
			t.Fatalf("hs256 without --auth-server serves metadata: %+v", a)
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		a.Middleware()(whoami).ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Body.String() != "alice" {
			t.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
	t.Run("file", func(t *testing.T) { check(t, auth.Config{Mode: auth.ModeHS256, SecretFile: file}) })
	t.Run("env", func(t *testing.T) {
		t.Setenv(authtoken.EnvSecret, secret)
		check(t, auth.Config{Mode: auth.ModeHS256})
	})
	t.Run("with metadata", func(t *testing.T) {
		a, err := auth.New(context.Background(), auth.Config{Mode: auth.ModeHS256, Secret: []byte(secret),
			Audience: "http://127.0.0.1:8000/mcp", AuthorizationServers: []string{"https://as.example.com"}})
		if err != nil || a.MetadataURL != "http://127.0.0.1:8000/.well-known/oauth-protected-resource/mcp" {
			t.Fatalf("%+v %v", a, err)
		}
	})
}

func TestConfigOff(t *testing.T) {
	a, err := auth.New(context.Background(), auth.Config{})
	if err != nil || a.Mode != auth.ModeOff || a.Verifier != nil {
		t.Fatalf("%+v %v", a, err)
	}
	rec := httptest.NewRecorder()
	a.Middleware()(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.PrincipalFrom(r.Context()) != nil || auth.OwnerFrom(r.Context()) != "" || auth.RequireScopes(r.Context(), "x") != nil {
			t.Error("off mode has a principal or refuses scopes")
		}
		_, _ = io.WriteString(w, "open")
	})).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/mcp", nil))
	if rec.Code != 200 || rec.Body.String() != "open" {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Setenv(authtoken.EnvSecret, "")
	js := newJWKSServer(t)
	short := filepath.Join(t.TempDir(), "short")
	_ = os.WriteFile(short, []byte("tooshort\n"), 0o600)
	for _, tc := range []struct {
		name string
		c    auth.Config
		want string
	}{
		{"hs256 without secret", auth.Config{Mode: auth.ModeHS256}, "MCPSTACK_AUTH_SECRET"},
		{"hs256 short secret", auth.Config{Mode: auth.ModeHS256, SecretFile: short}, "at least 32"},
		{"hs256 missing file", auth.Config{Mode: auth.ModeHS256, SecretFile: "/nonexistent/secret"}, "secret file"},
		{"oauth without anything", auth.Config{Mode: auth.ModeOAuth}, "--auth-jwks-url, --auth-issuer, --auth-audience"},
		{"oauth without audience", auth.Config{Mode: auth.ModeOAuth, JWKSURL: js.URL, Issuer: testIssuer}, "--auth-audience"},
		{"oauth http audience", auth.Config{Mode: auth.ModeOAuth, JWKSURL: js.URL, Issuer: testIssuer, Audience: "http://mcp.example.com/mcp"}, "plain http"},
		{"off with settings", auth.Config{JWKSURL: js.URL}, "--auth is off"},
		{"hs256 server without audience", auth.Config{Mode: auth.ModeHS256, Secret: []byte(strings.Repeat("k", 32)), AuthorizationServers: []string{testIssuer}}, "--auth-audience"},
		{"bad mode", auth.Config{Mode: "basic"}, "must be off, hs256 or oauth"},
	} {
		_, err := auth.New(context.Background(), tc.c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	var c auth.Config
	c.RegisterFlags(fl)
	if err := fl.Parse([]string{"--auth", "basic"}); err == nil {
		t.Error("--auth basic accepted")
	}
}

func TestCheckBind(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		mode     auth.Mode
		insecure bool
		ok       bool
	}{
		{"127.0.0.1:8000", auth.ModeOff, false, true},
		{"localhost:8000", auth.ModeOff, false, true},
		{"[::1]:8000", auth.ModeOff, false, true},
		{"0.0.0.0:8000", auth.ModeOff, false, false},
		{":8000", auth.ModeOff, false, false},
		{"[::]:8000", auth.ModeOff, false, false},
		{"192.0.2.10:8000", auth.ModeOff, false, false},
		{"mcp.example.com:443", auth.ModeOff, false, false},
		{"0.0.0.0:8000", "", false, false},
		{"0.0.0.0:8000", auth.ModeOff, true, true},
		{"0.0.0.0:8000", auth.ModeHS256, false, true},
		{":8000", auth.ModeOAuth, false, true},
	} {
		err := auth.CheckBind(tc.addr, tc.mode, tc.insecure)
		if (err == nil) != tc.ok {
			t.Errorf("CheckBind(%q, %q, %v) = %v", tc.addr, tc.mode, tc.insecure, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "--insecure") || !strings.Contains(err.Error(), "--auth hs256")) {
			t.Errorf("the message does not say what to do: %v", err)
		}
	}
}
