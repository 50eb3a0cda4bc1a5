package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"go/token"
	"strings"
	"unicode"
)

type hasher struct{ h []byte }

func newHasher() *hasher { return &hasher{} }

func (h *hasher) add(name string, data []byte) {
	h.h = append(h.h, name...)
	h.h = append(h.h, 0)
	h.h = append(h.h, data...)
	h.h = append(h.h, 0)
}

func (h *hasher) sum() string {
	s := sha256.Sum256(h.h)
	return hex.EncodeToString(s[:8])
}

func asSyntax(err error, se **json.SyntaxError) bool { return errors.As(err, se) }

func isGoIdent(s string) bool {
	return token.IsIdentifier(s) && !token.IsKeyword(s)
}

// initialisms are written in upper case in Go names, as golint wants.
var initialisms = map[string]string{
	"id": "ID", "uri": "URI", "url": "URL", "json": "JSON", "jsonrpc": "JSONRPC",
	"http": "HTTP", "ttl": "TTL", "mime": "MIME", "ms": "Ms",
}

// goName turns a JSON property name into an exported Go identifier:
// "_meta" -> Meta, "io.modelcontextprotocol/protocolVersion" -> ProtocolVersion,
// "conversation_id" -> ConversationID, "uriTemplate" -> URITemplate.
func goName(prop string) string {
	if i := strings.LastIndexByte(prop, '/'); i >= 0 {
		prop = prop[i+1:]
	}
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range prop {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '$' || r == ' ':
			flush()
		case unicode.IsUpper(r) && i > 0:
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	var b strings.Builder
	for _, w := range words {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]) + w[1:])
	}
	name := b.String()
	if name == "" || !unicode.IsLetter(rune(name[0])) {
		name = "X" + name
	}
	return name
}
