package auth

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/internal/guard"
)

// Mode is how the HTTP endpoint authenticates its callers.
type Mode string

// The modes.
const (
	ModeOff   Mode = "off"   // nobody is asked for a token
	ModeHS256 Mode = "hs256" // HS256 tokens with a shared secret (mcpstack token)
	ModeOAuth Mode = "oauth" // RS256/ES256 tokens of an authorization server, checked with its JWKS
)

// String implements flag.Value.
func (m *Mode) String() string { return string(*m) }

// Set implements flag.Value.
func (m *Mode) Set(s string) error {
	switch Mode(strings.ToLower(s)) {
	case ModeOff, ModeHS256, ModeOAuth:
		*m = Mode(strings.ToLower(s))
		return nil
	}
	return fmt.Errorf("must be off, hs256 or oauth, not %q", s)
}

// Config is what `mcpstack serve` can be told about authentication.
type Config struct {
	Mode Mode
	// SecretFile holds the HS256 secret; "" reads $MCPSTACK_AUTH_SECRET.
	SecretFile string
	// Secret, when set, is used instead of SecretFile and the environment.
	Secret []byte
	// JWKSURL is the authorization server's JWK Set (oauth).
	JWKSURL string
	// Issuer is the iss tokens must carry (required in oauth mode).
	Issuer string
	// Audience is the canonical URL of the MCP endpoint, e.g.
	// https://mcp.example.com/mcp: the aud tokens must carry and the
	// resource of the metadata document (required in oauth mode).
	Audience string
	// AuthorizationServers are listed in the metadata document (oauth
	// default: Issuer). In hs256 mode, the document is served only when
	// there is one, together with an Audience.
	AuthorizationServers []string
	// Scopes are required of every request to the endpoint (403 without).
	Scopes []string
	// ScopesSupported are listed in the metadata document (default: Scopes).
	ScopesSupported []string
	// Leeway is the clock skew allowed on exp, nbf and iat (0: the default
	// 30s; negative: none).
	Leeway time.Duration
	// Insecure allows serving a non-loopback address without
	// authentication (CheckBind), and http URLs on non-loopback hosts.
	Insecure bool
	// Logger receives refusals and failed JWKS refreshes (never a token).
	Logger *slog.Logger
}

// RegisterFlags defines the --auth* and --insecure flags on fl.
func (c *Config) RegisterFlags(fl *flag.FlagSet) {
	if c.Mode == "" {
		c.Mode = ModeOff
	}
	if c.Leeway == 0 {
		c.Leeway = 30 * time.Second
	}
	fl.Var(&c.Mode, "auth", "authentication `MODE` of HTTP requests: off, hs256 (tokens that mcpstack token mints) or oauth (tokens of an authorization server)")
	fl.StringVar(&c.SecretFile, "auth-secret-file", "", "hs256: read the secret (at least 32 bytes) from `FILE` (default: $"+authtoken.EnvSecret+")")
	fl.StringVar(&c.JWKSURL, "auth-jwks-url", "", "oauth: the authorization server's JWK Set `URL`")
	fl.StringVar(&c.Issuer, "auth-issuer", "", "the iss tokens must carry (required with oauth)")
	fl.StringVar(&c.Audience, "auth-audience", "", "the canonical `URL` of this MCP endpoint, e.g. https://mcp.example.com/mcp: the aud tokens must carry (required with oauth)")
	fl.Var((*listValue)(&c.AuthorizationServers), "auth-server", "authorization server `URLs` for the metadata document, comma-separated (oauth default: the issuer)")
	fl.Var((*listValue)(&c.Scopes), "auth-scopes", "`scopes` every request needs, space- or comma-separated (403 without)")
	fl.DurationVar(&c.Leeway, "auth-leeway", c.Leeway, "clock skew allowed on exp, nbf and iat (negative: none)")
	fl.BoolVar(&c.Insecure, "insecure", c.Insecure, "allow serving a non-loopback address without authentication, and http:// URLs on non-loopback hosts")
}

// listValue is a flag of values separated by commas or spaces; each Set
// replaces the list (so a flag wins over its environment variable).
type listValue []string

func (l *listValue) String() string { return strings.Join(*l, ",") }

func (l *listValue) Set(s string) error {
	*l = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' })
	return nil
}

// Auth is a Config made ready to serve.
type Auth struct {
	Mode     Mode
	Verifier Verifier // nil when off
	// Resource is the canonical URL of the endpoint ("" when not known).
	Resource string
	// MetadataURL is the resource_metadata of challenges ("" when no
	// metadata document is served).
	MetadataURL string

	metadata http.Handler
	paths    []string
	mw       []MiddlewareOption
}

// New checks c and builds what it describes: in oauth mode it fetches the
// JWKS (ctx ends its refreshes). opts go to the middleware (e.g.
// WithLogger).
func New(ctx context.Context, c Config, opts ...MiddlewareOption) (*Auth, error) {
	if c.Mode == "" {
		c.Mode = ModeOff
	}
	a := &Auth{Mode: c.Mode}
	var vopts []Option
	switch {
	case c.Leeway < 0:
		vopts = append(vopts, WithLeeway(0))
	case c.Leeway > 0:
		vopts = append(vopts, WithLeeway(c.Leeway))
	}
	if c.Issuer != "" {
		vopts = append(vopts, WithIssuer(c.Issuer))
	}
	if c.Audience != "" {
		u, err := resourceURL(c.Audience)
		if err != nil {
			return nil, fmt.Errorf("--auth-audience: %w", err)
		}
		if u.Scheme == "http" && !c.Insecure && !guard.IsLoopbackAddr(hostPort(u)) {
			return nil, fmt.Errorf("--auth-audience %s is plain http on a non-loopback host: tokens would cross the network in clear; use https (or --insecure)", c.Audience)
		}
		vopts = append(vopts, WithAudience(c.Audience))
		a.Resource = c.Audience
	}
	switch c.Mode {
	case ModeOff:
		if c.SecretFile != "" || c.JWKSURL != "" || c.Issuer != "" || c.Audience != "" || len(c.AuthorizationServers) > 0 || len(c.Scopes) > 0 {
			return nil, errors.New("authentication settings are given but --auth is off; add --auth hs256 or --auth oauth")
		}
		return a, nil
	case ModeHS256:
		if c.JWKSURL != "" {
			return nil, errors.New("--auth-jwks-url is for --auth oauth, not hs256")
		}
		secret := c.Secret
		if secret == nil {
			var err error
			if secret, err = authtoken.LoadSecret(c.SecretFile); err != nil {
				return nil, fmt.Errorf("--auth hs256: %w", err)
			}
		}
		v, err := NewHS256(secret, vopts...)
		if err != nil {
			return nil, err
		}
		a.Verifier = v
		if len(c.AuthorizationServers) > 0 && c.Audience == "" {
			return nil, errors.New("--auth-server needs --auth-audience: the metadata document names the resource")
		}
	case ModeOAuth:
		var missing []string
		for _, f := range []struct{ name, v string }{{"--auth-jwks-url", c.JWKSURL}, {"--auth-issuer", c.Issuer}, {"--auth-audience", c.Audience}} {
			if f.v == "" {
				missing = append(missing, f.name)
			}
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("--auth oauth needs %s (the audience is the canonical URL of this MCP endpoint, e.g. https://mcp.example.com/mcp)", strings.Join(missing, ", "))
		}
		if len(c.AuthorizationServers) == 0 {
			c.AuthorizationServers = []string{c.Issuer}
		}
		if c.Insecure {
			vopts = append(vopts, WithInsecureJWKS())
		}
		if c.Logger != nil {
			vopts = append(vopts, WithJWKSLogger(c.Logger))
		}
		v, err := NewJWKS(ctx, c.JWKSURL, vopts...)
		if err != nil {
			return nil, err
		}
		a.Verifier = v
	default:
		return nil, fmt.Errorf("--auth must be off, hs256 or oauth, not %q", c.Mode)
	}
	if len(c.AuthorizationServers) > 0 {
		supported := c.ScopesSupported
		if supported == nil {
			supported = slices.Clone(c.Scopes)
		}
		h, err := ProtectedResourceMetadata(Metadata{
			Resource:             c.Audience,
			AuthorizationServers: c.AuthorizationServers,
			ScopesSupported:      supported,
			ResourceName:         "mcpstack",
		})
		if err != nil {
			return nil, err
		}
		a.metadata = h
		a.paths, _ = MetadataPaths(c.Audience)
		a.MetadataURL, _ = MetadataURL(c.Audience)
	}
	a.mw = append(a.mw, WithEndpointScopes(c.Scopes...), WithResourceMetadata(a.MetadataURL))
	if c.Logger != nil {
		a.mw = append(a.mw, WithLogger(c.Logger))
	}
	a.mw = append(a.mw, opts...)
	return a, nil
}

// Middleware guards the MCP endpoint; with authentication off it lets
// everything through.
func (a *Auth) Middleware() func(http.Handler) http.Handler {
	if a.Verifier == nil {
		return func(next http.Handler) http.Handler { return next }
	}
	return Middleware(a.Verifier, a.mw...)
}

// Mount registers the metadata document at MetadataPaths (nothing when no
// document is served). chi.Router and *http.ServeMux both fit.
func (a *Auth) Mount(mux interface{ Handle(string, http.Handler) }) {
	for _, p := range a.paths {
		mux.Handle(p, a.metadata)
	}
}

// MetadataPaths are the paths Mount registers.
func (a *Auth) MetadataPaths() []string { return slices.Clone(a.paths) }

// CheckBind refuses to serve addr without authentication unless addr is a
// loopback address or insecure is set: anyone who can reach the port could
// otherwise use the server.
func CheckBind(addr string, mode Mode, insecure bool) error {
	if guard.IsLoopbackAddr(addr) || (mode != ModeOff && mode != "") || insecure {
		return nil
	}
	return fmt.Errorf("refusing to serve %s without authentication: it is not a loopback address, so anyone who reaches the port could use the server. "+
		"Use --auth hs256 (secret from --auth-secret-file FILE or $%s; mint tokens with `mcpstack token`) or --auth oauth "+
		"(--auth-jwks-url, --auth-issuer, --auth-audience), bind 127.0.0.1, or pass --insecure to serve without authentication anyway", addr, authtoken.EnvSecret)
}
