// Package authtoken holds what mcpstack's CLI and tests do with HS256
// secrets and tokens: read the secret, mint a token. Package auth checks
// tokens; it does not make them.
package authtoken

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// MinSecretLen is the shortest HS256 secret accepted, in bytes (RFC 7518
// §3.2: a key of the same size as the hash output).
const MinSecretLen = 32

// EnvSecret is the environment variable that holds the HS256 secret when
// no secret file is given.
const EnvSecret = "MCPSTACK_AUTH_SECRET"

// ErrNoSecret is returned when hs256 mode has no secret.
var ErrNoSecret = errors.New("no HS256 secret: set $" + EnvSecret + " or name a secret file " +
	"(serve: --auth-secret-file, token: --secret-file); make one with: head -c 32 /dev/urandom | base64 > secret && chmod 600 secret")

// LoadSecret reads the HS256 secret from file, or when file is "" from
// $MCPSTACK_AUTH_SECRET. Trailing line breaks are dropped (the file is
// usually written by a shell). It fails when the secret is missing or
// shorter than MinSecretLen bytes.
func LoadSecret(file string) ([]byte, error) {
	secret, err := ReadSecret(file, EnvSecret, "HS256 secret")
	if err == nil && secret == nil {
		return nil, ErrNoSecret
	}
	return secret, err
}

// ReadSecret reads a secret (what names it in errors) from file, or when
// file is "" from the environment variable env, without trailing line
// breaks: nil when neither holds one, an error when it is shorter than
// MinSecretLen bytes. The HS256 secret and serve's requestState secrets
// are read with it.
func ReadSecret(file, env, what string) ([]byte, error) {
	var secret []byte
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading the secret file: %w", err)
		}
		secret = bytes.TrimRight(b, "\r\n")
		if len(secret) == 0 {
			return nil, fmt.Errorf("the secret file %s is empty", file)
		}
	} else {
		secret = []byte(strings.TrimRight(os.Getenv(env), "\r\n"))
		if len(secret) == 0 {
			return nil, nil
		}
	}
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("the %s has %d bytes; it needs at least %d (make one with: head -c 32 /dev/urandom | base64)", what, len(secret), MinSecretLen)
	}
	return secret, nil
}

// Mint says what MintHS256 puts in a token.
type Mint struct {
	Subject  string        // sub, required
	Scopes   []string      // scope, space-separated
	Audience []string      // aud, optional
	Issuer   string        // iss, optional
	TTL      time.Duration // exp = now + TTL, required
	Now      time.Time     // iat; zero means time.Now()
}

// MintHS256 signs an HS256 token: what `mcpstack token` prints, and what
// tests use.
func MintHS256(secret []byte, m Mint) (string, error) {
	if len(secret) < MinSecretLen {
		return "", fmt.Errorf("authtoken: the HS256 secret has %d bytes; it needs at least %d", len(secret), MinSecretLen)
	}
	if m.Subject == "" {
		return "", errors.New("authtoken: a token needs a subject")
	}
	if m.TTL <= 0 {
		return "", errors.New("authtoken: a token needs a positive lifetime")
	}
	now := m.Now
	if now.IsZero() {
		now = time.Now()
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	claims := jwt.MapClaims{
		"sub": m.Subject,
		"iat": now.Unix(),
		"exp": now.Add(m.TTL).Unix(),
		"jti": hex.EncodeToString(jti[:]),
	}
	if len(m.Scopes) > 0 {
		claims["scope"] = strings.Join(m.Scopes, " ")
	}
	switch len(m.Audience) {
	case 0:
	case 1:
		claims["aud"] = m.Audience[0]
	default:
		claims["aud"] = m.Audience
	}
	if m.Issuer != "" {
		claims["iss"] = m.Issuer
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(secret)
}
