// Package paramheader is the wire form of the Mcp-Param-{Name} headers of
// 2026-07-28 (SEP-2243): a tool argument whose input schema marks it
// x-mcp-header travels in a header too, so that proxies can route on it
// without reading the body. The client encodes what the server decodes;
// both sides use this package so that the two cannot drift.
package paramheader

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Keyword marks a property of a tool's input schema that goes in a header.
const Keyword = "x-mcp-header"

// Prefix starts the name of every such header.
const Prefix = "Mcp-Param-"

// ValidName reports whether s may follow Prefix: letters, digits, - and _
// (a server's annotation is not trusted to be a header token).
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// Text is an argument (a string, an integer or a boolean) as its header
// carries it, before any Base64.
func Text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

const (
	base64Open  = "=?base64?"
	base64Close = "?="
)

// Encode is the header value of an argument: its text where that is safe
// in a header (printable ASCII, no surrounding space, not looking like
// Base64), else =?base64?...?=.
func Encode(v any) string {
	s := Text(v)
	safe := s == strings.TrimSpace(s) && !strings.HasPrefix(s, base64Open)
	for i := 0; safe && i < len(s); i++ {
		safe = s[i] >= 0x20 && s[i] < 0x7f
	}
	if safe {
		return s
	}
	return base64Open + base64.StdEncoding.EncodeToString([]byte(s)) + base64Close
}

// Decode reads a header value back to its text: =?base64?...?= is Base64
// (strict: padding and alphabet checked), anything else the value itself.
func Decode(raw string) (string, error) {
	inner, ok := strings.CutPrefix(raw, base64Open)
	if ok {
		inner, ok = strings.CutSuffix(inner, base64Close)
	}
	if !ok {
		return raw, nil
	}
	b, err := base64.StdEncoding.Strict().DecodeString(inner)
	if err != nil {
		return "", fmt.Errorf("not Base64: %v", err)
	}
	return string(b), nil
}
