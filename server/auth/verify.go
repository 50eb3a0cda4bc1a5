package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/internal/authtoken"
	"github.com/mcpstack/mcpstack/internal/guard"
)

// Verifier checks a raw bearer token.
type Verifier interface {
	// Verify returns the principal of a valid token. An invalid token gets
	// an error wrapping ErrInvalidToken (a *TokenError, which says why); a
	// valid token that lacks the scopes the verifier requires gets the
	// principal and an error wrapping ErrInsufficientScope (a *ScopeError).
	Verify(ctx context.Context, token string) (*Principal, error)
}

var (
	// ErrInvalidToken is wrapped by every error about a token that cannot
	// be accepted (RFC 6750 invalid_token).
	ErrInvalidToken = errors.New("invalid_token")
	// ErrInsufficientScope is wrapped by a *ScopeError (RFC 6750
	// insufficient_scope).
	ErrInsufficientScope = errors.New("insufficient_scope")
)

// TokenError says why a token was refused.
type TokenError struct {
	// Description is sent to the client as error_description: a fixed
	// sentence that never contains the token or a claim's value.
	Description string
	// Err is the cause (from the JWT or JWKS library), for logs.
	Err error
}

func (e *TokenError) Error() string {
	if e.Err != nil {
		return "invalid token: " + e.Description + ": " + e.Err.Error()
	}
	return "invalid token: " + e.Description
}

// Unwrap lets errors.Is find ErrInvalidToken and the cause.
func (e *TokenError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidToken}
	}
	return []error{ErrInvalidToken, e.Err}
}

// ScopeError is a valid token that lacks scopes.
type ScopeError struct {
	Required []string // every scope asked for: what the challenge's scope lists
	Missing  []string // the ones the token lacks
}

func (e *ScopeError) Error() string {
	return "insufficient scope: the token lacks " + strings.Join(e.Missing, " ")
}

// Is makes errors.Is(err, ErrInsufficientScope) true.
func (e *ScopeError) Is(target error) bool { return target == ErrInsufficientScope }

// Option configures a verifier.
type Option interface{ apply(*verifierConfig) }

type optionFunc func(*verifierConfig)

func (f optionFunc) apply(c *verifierConfig) { f(c) }

type verifierConfig struct {
	issuer     string
	audience   []string
	leeway     time.Duration
	scopes     []string
	now        func() time.Time
	algs       []string
	client     *http.Client
	refresh    time.Duration
	unknownKID time.Duration
	insecure   bool
	log        *slog.Logger
}

// WithIssuer requires the iss claim to be iss.
func WithIssuer(iss string) Option { return optionFunc(func(c *verifierConfig) { c.issuer = iss }) }

// WithAudience requires the aud claim to hold one of aud: in OAuth mode the
// canonical URL of this MCP endpoint (RFC 8707), e.g.
// https://mcp.example.com/mcp. NewJWKS requires it.
func WithAudience(aud ...string) Option {
	return optionFunc(func(c *verifierConfig) { c.audience = append(c.audience, aud...) })
}

// WithLeeway sets the clock skew allowed on exp, nbf and iat (default 30s).
func WithLeeway(d time.Duration) Option { return optionFunc(func(c *verifierConfig) { c.leeway = d }) }

// WithRequiredScopes makes Verify return a *ScopeError for a valid token
// that lacks any of scopes.
func WithRequiredScopes(scopes ...string) Option {
	return optionFunc(func(c *verifierConfig) { c.scopes = append(c.scopes, scopes...) })
}

// WithClock sets the time source (tests).
func WithClock(now func() time.Time) Option {
	return optionFunc(func(c *verifierConfig) { c.now = now })
}

// WithAlgorithms sets the signing algorithms NewJWKS accepts (default
// RS256 and ES256). Only asymmetric ones can be chosen: HS* and none are
// refused in JWKS mode.
func WithAlgorithms(algs ...string) Option {
	return optionFunc(func(c *verifierConfig) { c.algs = algs })
}

// WithHTTPClient sets the client that fetches the JWKS (default: one with
// a 10s timeout).
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *verifierConfig) { c.client = hc })
}

// WithRefreshInterval sets how often the JWKS is fetched again (default 1h).
func WithRefreshInterval(d time.Duration) Option {
	return optionFunc(func(c *verifierConfig) { c.refresh = d })
}

// WithUnknownKIDRefresh sets how often, at most, a token naming a key id
// the cached JWKS lacks makes the verifier fetch the JWKS at once (default
// once a minute; key rotation is picked up without waiting for the next
// refresh, and unknown key ids cannot make the server hammer the
// authorization server). It must be positive.
func WithUnknownKIDRefresh(every time.Duration) Option {
	return optionFunc(func(c *verifierConfig) { c.unknownKID = every })
}

// WithInsecureJWKS allows a JWKS URL with http:// on a non-loopback host.
func WithInsecureJWKS() Option { return optionFunc(func(c *verifierConfig) { c.insecure = true }) }

// WithJWKSLogger sets where failed JWKS refreshes are logged (default
// slog.Default()).
func WithJWKSLogger(l *slog.Logger) Option { return optionFunc(func(c *verifierConfig) { c.log = l }) }

func newVerifierConfig(opts []Option) verifierConfig {
	c := verifierConfig{
		leeway:     30 * time.Second,
		now:        time.Now,
		refresh:    time.Hour,
		unknownKID: time.Minute,
	}
	for _, o := range opts {
		o.apply(&c)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	return c
}

// JWT verifies JWTs; NewHS256 and NewJWKS make one.
type JWT struct {
	cfg    verifierConfig
	algs   []string
	parser *jwt.Parser
	key    func(ctx context.Context) jwt.Keyfunc
}

var _ Verifier = (*JWT)(nil)

// NewHS256 returns a verifier of HS256 tokens signed with secret, which
// must be at least 32 bytes long.
func NewHS256(secret []byte, opts ...Option) (*JWT, error) {
	if len(secret) < authtoken.MinSecretLen {
		return nil, fmt.Errorf("auth: the HS256 secret has %d bytes; it needs at least %d", len(secret), authtoken.MinSecretLen)
	}
	cfg := newVerifierConfig(opts)
	if cfg.algs != nil {
		return nil, errors.New("auth: WithAlgorithms applies to NewJWKS only; NewHS256 accepts HS256")
	}
	key := slices.Clone(secret)
	return newJWT(cfg, []string{"HS256"}, func(context.Context) jwt.Keyfunc {
		return func(*jwt.Token) (any, error) { return key, nil }
	}), nil
}

// asymmetric are the algorithms WithAlgorithms may choose.
var asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// unknownKIDFetch bounds how long a token with an unknown key id waits
// for its turn to have the JWKS fetched again, and for the fetch.
const unknownKIDFetch = 10 * time.Second

// NewJWKS returns a verifier of tokens signed by the keys of the JWK Set at
// jwksURL: RS256 and ES256 by default (WithAlgorithms), never HS* or none.
// The set is fetched now (an error if that fails), again every refresh
// interval, and at once when a token names an unknown key id (rate
// limited). ctx ends the background refresh. WithAudience is required.
func NewJWKS(ctx context.Context, jwksURL string, opts ...Option) (*JWT, error) {
	cfg := newVerifierConfig(opts)
	if len(cfg.audience) == 0 {
		return nil, errors.New("auth: a JWKS verifier needs an audience (WithAudience): the canonical URL of this MCP endpoint")
	}
	algs := []string{"RS256", "ES256"}
	if cfg.algs != nil {
		for _, a := range cfg.algs {
			if !slices.Contains(asymmetric, a) {
				return nil, fmt.Errorf("auth: algorithm %q cannot be used with a JWKS (use %s)", a, strings.Join(asymmetric, ", "))
			}
		}
		algs = slices.Clone(cfg.algs)
	}
	if err := checkFetchURL(jwksURL, cfg.insecure); err != nil {
		return nil, fmt.Errorf("auth: JWKS URL: %w", err)
	}
	if cfg.unknownKID <= 0 { // rate.Every of it is no limit at all
		return nil, fmt.Errorf("auth: WithUnknownKIDRefresh(%v): the interval must be positive", cfg.unknownKID)
	}
	client := cfg.client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	log := cfg.log
	remote, err := jwkset.NewStorageFromHTTP(jwksURL, jwkset.HTTPClientStorageOptions{
		Client:          client,
		Ctx:             ctx,
		HTTPTimeout:     10 * time.Second,
		RefreshInterval: cfg.refresh,
		RefreshErrorHandler: func(ctx context.Context, err error) {
			log.WarnContext(ctx, "auth: refreshing the JWKS failed; keeping the cached keys", "url", jwksURL, "err", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("auth: fetching the JWKS from %s: %w", jwksURL, err)
	}
	storage, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs: map[string]jwkset.Storage{jwksURL: remote},
		// A token with an unknown kid waits this long at most for its turn
		// to refresh (and the refresh must fit in it too); when the next
		// turn is further away, it fails at once.
		RateLimitWaitMax:  unknownKIDFetch,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(cfg.unknownKID), 1),
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS client: %w", err)
	}
	kf, err := keyfunc.New(keyfunc.Options{
		Ctx:          ctx,
		Storage:      storage,
		UseWhitelist: []jwkset.USE{jwkset.UseSig, ""}, // never an encryption key
	})
	if err != nil {
		return nil, fmt.Errorf("auth: JWKS keyfunc: %w", err)
	}
	return newJWT(cfg, algs, func(ctx context.Context) jwt.Keyfunc {
		return func(t *jwt.Token) (any, error) {
			// A fetch an unknown key id starts runs to its end, bounded by
			// its own time, whatever the request does: a client that left
			// mid-fetch would have spent the refresh's turn (one a minute),
			// and a key just added would stay unknown until the next.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unknownKIDFetch)
			defer cancel()
			key, err := kf.KeyfuncCtx(fctx)(t)
			if err != nil {
				// Whether the refresh found nothing or was not allowed
				// (rate limit), the kid is unknown: say so.
				if kid, ok := t.Header["kid"].(string); ok {
					if _, rerr := remote.KeyRead(ctx, kid); errors.Is(rerr, jwkset.ErrKeyNotFound) {
						return nil, fmt.Errorf("%w: %w", errUnknownKID, err)
					}
				}
			}
			return key, err
		}
	}), nil
}

var errUnknownKID = errors.New("unknown key id")

// checkFetchURL accepts https, and http on a loopback host (or anywhere
// when insecure).
func checkFetchURL(raw string, insecure bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	switch {
	case u.Scheme == "https" && u.Host != "":
		return nil
	case u.Scheme == "http" && u.Host != "" && (insecure || guard.IsLoopbackAddr(hostPort(u))):
		return nil
	case u.Scheme == "http" && u.Host != "":
		return fmt.Errorf("%s is plain http on a non-loopback host; use https (or --insecure)", raw)
	}
	return fmt.Errorf("%q is not an absolute http(s) URL", raw)
}

func hostPort(u *url.URL) string {
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "0")
	}
	return u.Host
}

func newJWT(cfg verifierConfig, algs []string, key func(context.Context) jwt.Keyfunc) *JWT {
	popts := []jwt.ParserOption{
		jwt.WithValidMethods(algs),
		jwt.WithLeeway(cfg.leeway),
		jwt.WithTimeFunc(cfg.now),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithJSONNumber(),
	}
	if cfg.issuer != "" {
		popts = append(popts, jwt.WithIssuer(cfg.issuer))
	}
	if len(cfg.audience) > 0 {
		popts = append(popts, jwt.WithAudience(cfg.audience...))
	}
	return &JWT{cfg: cfg, algs: algs, parser: jwt.NewParser(popts...), key: key}
}

// RequiredScopes are the scopes given with WithRequiredScopes.
func (v *JWT) RequiredScopes() []string { return slices.Clone(v.cfg.scopes) }

// Verify implements Verifier.
func (v *JWT) Verify(ctx context.Context, raw string) (*Principal, error) {
	claims := jwt.MapClaims{}
	tok, err := v.parser.ParseWithClaims(raw, claims, v.key(ctx))
	if err != nil {
		return nil, v.classify(tok, claims, err)
	}
	sub, _ := claims.GetSubject()
	if sub == "" {
		return nil, &TokenError{Description: "the token has no subject (sub)"}
	}
	iss, _ := claims.GetIssuer()
	aud, _ := claims.GetAudience()
	exp, _ := claims.GetExpirationTime()
	p := &Principal{
		Subject:   sub,
		Scopes:    scopesOf(claims),
		Issuer:    iss,
		Audience:  []string(aud),
		ExpiresAt: exp.Time,
		Claims:    map[string]any(claims),
	}
	p.ValidUntil = p.ExpiresAt.Add(v.cfg.leeway)
	if missing := p.Missing(v.cfg.scopes...); len(missing) > 0 {
		return p, &ScopeError{Required: slices.Clone(v.cfg.scopes), Missing: missing}
	}
	return p, nil
}

// classify turns a JWT library error into a TokenError whose description
// is safe to send: it never repeats what the token says.
func (v *JWT) classify(tok *jwt.Token, claims jwt.MapClaims, err error) error {
	desc := "the token is not valid"
	switch {
	case errors.Is(err, jwt.ErrTokenMalformed):
		desc = "the token is malformed (not a JWT)"
	case tok != nil && !v.algAccepted(tok):
		desc = "the token's signing algorithm is not accepted (want " + strings.Join(v.algs, " or ") + ")"
	case errors.Is(err, errUnknownKID), errors.Is(err, jwkset.ErrKeyNotFound):
		desc = "no known key has the token's key id (kid)"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		desc = "no key to check the token's signature with"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		desc = "the token's signature does not verify"
	case errors.Is(err, jwt.ErrTokenExpired):
		desc = "the token expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		desc = "the token is not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		desc = "the token was issued in the future (iat)"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		desc = "the token was not issued for this resource (aud)"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		desc = "the token's issuer is not accepted (iss)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		absent := func(c string) bool { _, ok := claims[c]; return !ok }
		switch {
		case absent("exp"):
			desc = "the token has no exp claim"
		case len(v.cfg.audience) > 0 && absent("aud"):
			desc = "the token has no aud claim"
		case v.cfg.issuer != "" && absent("iss"):
			desc = "the token has no iss claim"
		default:
			desc = "the token lacks a required claim"
		}
	case errors.Is(err, jwt.ErrInvalidType):
		desc = "a claim of the token has the wrong type"
	}
	return &TokenError{Description: desc, Err: err}
}

func (v *JWT) algAccepted(tok *jwt.Token) bool {
	alg, _ := tok.Header["alg"].(string)
	return slices.Contains(v.algs, alg)
}
