// Package instance synthesizes JSON values that satisfy a JSON Schema: the
// smallest one (required members only) and a full one (every member). Tests
// use them to drive every definition of every revision through the
// generated code without hand-written fixtures for each.
package instance

import (
	"fmt"
	"sort"
)

// Resolver loads the schema a $ref names, relative to the document at base,
// and returns it with its own base.
type Resolver func(base, ref string) (schema map[string]any, newBase string, err error)

// Mode chooses which members an object gets.
type Mode int

const (
	Minimal Mode = iota // required members only, empty arrays
	Full                // every member, one element per array
)

const maxDepth = 14

// Generate returns a value valid against schema s (at base).
func Generate(s map[string]any, base string, r Resolver, mode Mode) (any, error) {
	g := &gen{r: r, mode: mode}
	return g.value(s, base, 0)
}

type gen struct {
	r    Resolver
	mode Mode
}

func (g *gen) value(s map[string]any, base string, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("schema nests deeper than %d", maxDepth)
	}
	mode := g.mode
	if depth > 6 {
		mode = Minimal
	}
	if ref, ok := s["$ref"].(string); ok {
		t, nb, err := g.r(base, ref)
		if err != nil {
			return nil, err
		}
		return g.value(t, nb, depth+1)
	}
	if c, ok := s["const"]; ok {
		return c, nil
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], nil
	}
	if all, ok := s["allOf"].([]any); ok {
		out := map[string]any{}
		for _, b := range all {
			v, err := g.value(b.(map[string]any), base, depth+1)
			if err != nil {
				return nil, err
			}
			if m, ok := v.(map[string]any); ok {
				for k, x := range m {
					out[k] = x
				}
			}
		}
		if props, ok := s["properties"].(map[string]any); ok {
			v, err := g.object(s, props, base, depth, mode)
			if err != nil {
				return nil, err
			}
			for k, x := range v {
				out[k] = x
			}
		}
		return out, nil
	}
	if branches, ok := s["anyOf"].([]any); ok && len(branches) > 0 {
		return g.value(branches[0].(map[string]any), base, depth+1)
	}
	typ := ""
	switch t := s["type"].(type) {
	case string:
		typ = t
	case []any:
		for _, x := range t {
			if x != "null" {
				typ = x.(string)
				break
			}
		}
	}
	if typ == "" && s["properties"] != nil {
		typ = "object"
	}
	switch typ {
	case "object":
		props, _ := s["properties"].(map[string]any)
		return g.object(s, props, base, depth, mode)
	case "array":
		if mode == Minimal {
			if n, ok := s["minItems"].(float64); !ok || n == 0 {
				return []any{}, nil
			}
		}
		items, _ := s["items"].(map[string]any)
		if items == nil {
			return []any{"x"}, nil
		}
		v, err := g.value(items, base, depth+1)
		if err != nil {
			return nil, err
		}
		return []any{v}, nil
	case "string":
		switch s["format"] {
		case "uri":
			return "https://example.com/item", nil
		case "uri-template":
			return "https://example.com/{id}", nil
		case "byte":
			return "aGVsbG8=", nil
		case "date-time":
			return "2026-01-02T03:04:05Z", nil
		}
		return "x", nil
	case "integer":
		if m, ok := s["minimum"].(float64); ok {
			return m, nil
		}
		return float64(1), nil
	case "number":
		if m, ok := s["minimum"].(float64); ok {
			return m, nil
		}
		return 0.5, nil
	case "boolean":
		return true, nil
	case "null":
		return nil, nil
	}
	return map[string]any{}, nil // {}: anything goes
}

func (g *gen) object(s, props map[string]any, base string, depth int, mode Mode) (map[string]any, error) {
	out := map[string]any{}
	required := map[string]bool{}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			required[r.(string)] = true
		}
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if mode == Minimal && !required[k] {
			continue
		}
		ps, ok := props[k].(map[string]any)
		if !ok {
			continue
		}
		v, err := g.value(ps, base, depth+1)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}
