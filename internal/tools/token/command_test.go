package token_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/internal/tools/token"
	"github.com/mcpstack/mcpstack/server/auth"
)

func run(args ...string) (int, string, string) {
	var out, errb strings.Builder
	code := token.Command(args, &out, &errb)
	return code, out.String(), errb.String()
}

func secretFile(t *testing.T, content string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(f, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRoundTrip mints a token and verifies it as the server would.
func TestRoundTrip(t *testing.T) {
	t.Setenv(authtoken.EnvSecret, "")
	t.Setenv("MCPSTACK_AUTH_SECRET_FILE", "")
	secret := strings.Repeat("s", 44)
	file := secretFile(t, secret+"\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"secret file", nil, []string{"--secret-file", file}},
		{"secret file from the environment", map[string]string{"MCPSTACK_AUTH_SECRET_FILE": file}, nil},
		{"secret in the environment", map[string]string{authtoken.EnvSecret: secret}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := append([]string{"--sub", "alice", "--scope", "mcp notes:write", "--scope", "admin", "--ttl", "2h",
				"--aud", "https://mcp.example.com/mcp", "--iss", "mcpstack"}, tc.args...)
			code, out, errs := run(args...)
			if code != 0 || errs != "" || !strings.HasSuffix(out, "\n") || strings.Count(out, ".") != 2 {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
			v, err := auth.NewHS256([]byte(secret), auth.WithAudience("https://mcp.example.com/mcp"), auth.WithIssuer("mcpstack"))
			if err != nil {
				t.Fatal(err)
			}
			p, err := v.Verify(context.Background(), strings.TrimSpace(out))
			if err != nil {
				t.Fatal(err)
			}
			if p.Subject != "alice" || !slices.Equal(p.Scopes, []string{"mcp", "notes:write", "admin"}) ||
				p.ExpiresAt.Before(time.Now().Add(2*time.Hour-time.Minute)) || p.ExpiresAt.After(time.Now().Add(2*time.Hour+time.Minute)) {
				t.Fatalf("%+v", p)
			}
			// Another secret does not verify it.
			other, _ := auth.NewHS256([]byte(strings.Repeat("o", 32)))
			if _, err := other.Verify(context.Background(), strings.TrimSpace(out)); err == nil {
				t.Fatal("verified with another secret")
			}
		})
	}
}

func TestErrors(t *testing.T) {
	t.Setenv(authtoken.EnvSecret, "")
	t.Setenv("MCPSTACK_AUTH_SECRET_FILE", "")
	good := secretFile(t, strings.Repeat("s", 32))
	short := secretFile(t, strings.Repeat("s", 31))
	for _, tc := range []struct {
		name string
		env  string // MCPSTACK_AUTH_SECRET
		args []string
		code int
		want string // in stderr
	}{
		{"no secret", "", []string{"--sub", "alice"}, 2, "set $MCPSTACK_AUTH_SECRET or name a secret file"},
		{"short secret file", "", []string{"--sub", "alice", "--secret-file", short}, 2, "31 bytes; it needs at least 32"},
		{"short secret in env", "tooshort", []string{"--sub", "alice"}, 2, "needs at least 32"},
		{"missing secret file", "", []string{"--sub", "alice", "--secret-file", "/nonexistent/secret"}, 2, "reading the secret file"},
		{"no subject", "", []string{"--secret-file", good}, 2, "--sub is required"},
		{"zero ttl", "", []string{"--sub", "alice", "--secret-file", good, "--ttl", "0s"}, 2, "--ttl must be positive"},
		{"bad ttl", "", []string{"--sub", "alice", "--secret-file", good, "--ttl", "soon"}, 2, "invalid value"},
		{"unknown flag", "", []string{"--nope"}, 2, "flag provided but not defined"},
		{"argument", "", []string{"--sub", "alice", "--secret-file", good, "extra"}, 2, `unexpected argument "extra"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(authtoken.EnvSecret, tc.env)
			code, out, errs := run(tc.args...)
			if code != tc.code || out != "" || !strings.Contains(errs, tc.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errs, tc.code, tc.want)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	code, out, errs := run("--help")
	if code != 0 || errs != "" || !strings.Contains(out, "Usage: mcpstack token") || !strings.Contains(out, "-secret-file") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
