package tracemeta

import "github.com/mcpstack/mcpstack/internal/sessionid"

// SessionDigest is what logs and spans say of a session id
// (sessionid.Digest).
func SessionDigest(id string) string { return sessionid.Digest(id) }
