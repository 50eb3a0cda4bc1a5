package app

import (
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/paramheader"
	"github.com/mcpstack/mcpstack/wire"
)

// paramHeader is one argument a tool mirrors in a header.
type paramHeader struct {
	prop, name string // the property; the header is paramheader.Prefix+name
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
		raw, ok := p[paramheader.Keyword]
		if !ok {
			continue
		}
		name, _ := raw.(string)
		if !paramheader.ValidName(name) {
			return nil, fmt.Errorf("property %q: %s %v is not a header name (letters, digits, - and _)", prop, paramheader.Keyword, raw)
		}
		switch p["type"] {
		case "string", "integer", "boolean":
		default:
			return nil, fmt.Errorf("property %q: %s needs a string, integer or boolean, not %v", prop, paramheader.Keyword, p["type"])
		}
		if other, dup := seen[strings.ToLower(name)]; dup {
			return nil, fmt.Errorf("properties %q and %q both use the header %s%s (names are equal ignoring case)", other, prop, paramheader.Prefix, name)
		}
		seen[strings.ToLower(name)] = prop
		out = append(out, paramHeader{prop: prop, name: name})
	}
	// Anywhere else the annotation means nothing a client could send.
	for prop, v := range props {
		p, _ := v.(map[string]any)
		for k, sub := range p {
			if k != paramheader.Keyword && mentions(sub) {
				return nil, fmt.Errorf("property %q: %s below a property's top level", prop, paramheader.Keyword)
			}
		}
	}
	for k, v := range schema {
		if k != "properties" && (k == paramheader.Keyword || mentions(v)) {
			return nil, fmt.Errorf("%s outside properties", paramheader.Keyword)
		}
	}
	return out, nil
}

// mentions reports whether a schema tree uses the header annotation.
func mentions(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == paramheader.Keyword || mentions(e) {
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

// checkHeaders compares the Mcp-Param headers of a request with its
// arguments: a value in one and not the other, a bad encoding, or two
// different values is -32020 (the core answers it with HTTP 400).
func (t *tool) checkHeaders(h *core.RequestHeaders, args map[string]any) error {
	for _, ph := range t.headers {
		header := paramheader.Prefix + ph.name
		raw, sent := h.Params[strings.ToLower(ph.name)]
		v, has := args[ph.prop]
		switch {
		case !sent && !has:
			continue
		case !sent:
			return wire.HeaderMismatch(header, fmt.Sprintf("%s header is missing; the body has %q", header, ph.prop))
		case !has:
			return wire.HeaderMismatch(header, fmt.Sprintf("%s header is sent; the body has no %q", header, ph.prop))
		}
		got, err := paramheader.Decode(raw)
		if err != nil {
			return wire.HeaderMismatch(header, fmt.Sprintf("%s header: %v", header, err))
		}
		if want := paramheader.Text(v); got != want {
			return wire.HeaderMismatch(header, fmt.Sprintf("%s header is %q, the body says %q", header, got, want))
		}
	}
	return nil
}
