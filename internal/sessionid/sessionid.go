// Package sessionid says what logs and spans may say of a session id. It
// imports nothing but the standard library's hashing, so that the core
// (and a stdio server) can use it without linking the tracing packages.
package sessionid

import (
	"crypto/sha256"
	"encoding/hex"
)

// Digest is what logs and spans say of a session id: the first 12 hex
// digits of its SHA-256, enough to follow one session through them (the
// client's spans and the server's agree), of no use to resume or hijack
// it: a session id is a bearer secret.
func Digest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:6])
}
