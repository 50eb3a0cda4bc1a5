package app

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// headerKeyword marks a tool argument that a Streamable HTTP request of
// 2026-07-28 repeats in an Mcp-Param-{Name} header (SEP-2243), so that
// proxies can route on it without reading the body.
const headerKeyword = "x-mcp-header"

// paramHeader is one argument a tool mirrors in a header.
type paramHeader struct {
	prop, name string // the property; the header is Mcp-Param-{name}
}

// paramHeaders reads the x-mcp-header annotations of an input schema and
// refuses the ones the spec forbids: on a property that is not a string,
// an integer or a boolean, anywhere but directly under properties, or
// with a name another one has already (ignoring case).
func paramHeaders(schema map[string]any) ([]paramHeader, error) {
	var out []paramHeader
	seen := map[string]string{}
	props, _ := schema["properties"].(map[string]any)
	for prop, v := range props {
		p, _ := v.(map[string]any)
		raw, ok := p[headerKeyword]
		if !ok {
			continue
		}
		name, _ := raw.(string)
		if !validHeaderName(name) {
			return nil, fmt.Errorf("property %q: %s %v is not a header name (letters, digits, - and _)", prop, headerKeyword, raw)
		}
		switch p["type"] {
		case "string", "integer", "boolean":
		default:
			return nil, fmt.Errorf("property %q: %s needs a string, integer or boolean, not %v", prop, headerKeyword, p["type"])
		}
		if other, dup := seen[strings.ToLower(name)]; dup {
			return nil, fmt.Errorf("properties %q and %q both use the header Mcp-Param-%s (names are equal ignoring case)", other, prop, name)
		}
		seen[strings.ToLower(name)] = prop
		out = append(out, paramHeader{prop: prop, name: name})
	}
	// Anywhere else the annotation means nothing a client could send.
	rest := make(map[string]any, len(schema))
	for k, v := range schema {
		if k != "properties" {
			rest[k] = v
		}
	}
	for prop, v := range props {
		p, _ := v.(map[string]any)
		for k, sub := range p {
			if k != headerKeyword && mentions(sub) {
				return nil, fmt.Errorf("property %q: %s below a property's top level", prop, headerKeyword)
			}
		}
	}
	if mentions(rest) {
		return nil, fmt.Errorf("%s outside properties", headerKeyword)
	}
	return out, nil
}

// mentions reports whether a schema tree uses the header annotation.
func mentions(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == headerKeyword || mentions(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if mentions(e) {
				return true
			}
		}
	}
	return false
}

func validHeaderName(s string) bool {
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

// checkHeaders compares the Mcp-Param headers of a request with its
// arguments: a value in one and not the other, a bad encoding, or two
// different values is -32020 (the core answers it with HTTP 400).
func (t *tool) checkHeaders(h *server.RequestHeaders, args map[string]any) error {
	for _, ph := range t.headers {
		header := "Mcp-Param-" + ph.name
		raw, sent := h.Params[strings.ToLower(ph.name)]
		v, has := args[ph.prop]
		switch {
		case !sent && !has:
			continue
		case !sent:
			return headerMismatch(header, fmt.Sprintf("%s header is missing; the body has %q", header, ph.prop))
		case !has:
			return headerMismatch(header, fmt.Sprintf("%s header is sent; the body has no %q", header, ph.prop))
		}
		got, err := decodeHeader(raw)
		if err != nil {
			return headerMismatch(header, fmt.Sprintf("%s header: %v", header, err))
		}
		if want := headerValue(v); got != want {
			return headerMismatch(header, fmt.Sprintf("%s header is %q, the body says %q", header, got, want))
		}
	}
	return nil
}

func headerMismatch(header, reason string) *wire.Error {
	return &wire.Error{Code: wire.CodeHeaderMismatch, Message: "Header mismatch: " + reason, Data: map[string]any{"header": header, "reason": reason}}
}

// decodeHeader reads a header value: =?base64?...?= is Base64 (strict:
// padding and alphabet checked), anything else the value itself.
func decodeHeader(raw string) (string, error) {
	inner, ok := strings.CutPrefix(raw, "=?base64?")
	if ok {
		inner, ok = strings.CutSuffix(inner, "?=")
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

// headerValue is an argument as its header carries it.
func headerValue(v any) string {
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
