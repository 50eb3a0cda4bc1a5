package tracemeta

import (
	"crypto/sha256"
	"encoding/hex"
)

// SessionDigest is what logs and spans say of a session id: the first 12
// hex digits of its SHA-256, enough to follow one session through them
// (the client's spans and the server's agree), of no use to resume or
// hijack it: a session id is a bearer secret.
func SessionDigest(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:6])
}
