package codec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// The assertions of a decoded tree's shapes (jsontree.Parse): what generated
// decoders, and handwritten code reading free-form trees, check a value
// against. A mismatch is a jsontree.DecodeError, which jsontree.At places.

func mismatch(want string, v any) error {
	return &jsontree.DecodeError{Reason: fmt.Sprintf("want %s, got %s", want, jsontree.KindOf(v))}
}

// Object asserts that v is a JSON object.
func Object(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, mismatch("object", v)
	}
	return m, nil
}

// Array asserts that v is a JSON array.
func Array(v any) ([]any, error) {
	a, ok := v.([]any)
	if !ok {
		return nil, mismatch("array", v)
	}
	return a, nil
}

// String asserts that v is a JSON string.
func String(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", mismatch("string", v)
	}
	return s, nil
}

// Bool asserts that v is a JSON boolean.
func Bool(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, mismatch("boolean", v)
	}
	return b, nil
}

// Float converts a JSON number.
func Float(v any) (float64, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return 0, mismatch("number", v)
		}
		return f, nil
	case float64:
		return x, nil
	case int64:
		return float64(x), nil
	case int:
		return float64(x), nil
	}
	return 0, mismatch("number", v)
}

// Plain turns a decoded tree into the shapes encoding/json produces for an
// `any`: json.Number becomes float64. Handwritten code that reads free-form
// values (tool arguments, _meta) sees what it would expect from encoding/json.
// The tree itself is never written: an object or array holding a number is
// copied, others are returned as they are. Others may read the tree while a
// handler runs (the observer's Served.Arguments, with a task).
func Plain(v any) any {
	p, _ := plain(v)
	return p
}

// plain is Plain, and whether the value returned is not v.
func plain(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return string(x), true
		}
		return f, true
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if p, changed := plain(e); changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[k] = p
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if p, changed := plain(e); changed {
				if out == nil {
					out = slices.Clone(x)
				}
				out[i] = p
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	}
	return v, false
}

// Extra collects a member that the canonical type does not know, so that
// decoding and re-encoding keep it.
func Extra(m *map[string]any, k string, v any) {
	if *m == nil {
		*m = make(map[string]any, 2)
	}
	(*m)[k] = v
}

// AnyArray converts a slice of plain values for a tree (nil stays nil).
func AnyArray[T any](v []T) any {
	if v == nil {
		return nil
	}
	if a, ok := any(v).([]any); ok {
		return a
	}
	out := make([]any, len(v))
	for i, e := range v {
		out[i] = e
	}
	return out
}
