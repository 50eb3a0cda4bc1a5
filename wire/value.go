package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Parse decodes one JSON document into a tree of map[string]any, []any,
// string, json.Number, bool and nil. Numbers stay json.Number so that large
// integer ids survive and the validator can tell integers from fractions.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// KindOf names the JSON kind of a tree value, for error messages.
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64, float32, int, int64, int32:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}

// DecodeError says where in a tree a value had the wrong shape for its Go type.
type DecodeError struct {
	Pointer string // JSON pointer into the decoded value
	Reason  string
}

func (e *DecodeError) Error() string {
	if e.Pointer == "" {
		return "decode: " + e.Reason
	}
	return fmt.Sprintf("decode %s: %s", e.Pointer, e.Reason)
}

// At prefixes the pointer of a DecodeError with one path segment; other
// errors become DecodeErrors at that segment.
func At(err error, segment string) error {
	if err == nil {
		return nil
	}
	seg := "/" + escapePointer(segment)
	var de *DecodeError
	if errors.As(err, &de) {
		return &DecodeError{Pointer: seg + de.Pointer, Reason: de.Reason}
	}
	return &DecodeError{Pointer: seg, Reason: err.Error()}
}

// AtIndex is At for an array index.
func AtIndex(err error, i int) error { return At(err, strconv.Itoa(i)) }

func mismatch(want string, v any) error {
	return &DecodeError{Reason: fmt.Sprintf("want %s, got %s", want, KindOf(v))}
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

// Int converts an integral JSON number.
func Int(v any) (int64, error) {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n, nil
		}
		f, err := x.Float64()
		if err != nil || f != float64(int64(f)) {
			return 0, mismatch("integer", v)
		}
		return int64(f), nil
	case float64:
		if x != float64(int64(x)) {
			return 0, mismatch("integer", v)
		}
		return int64(x), nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	}
	return 0, mismatch("integer", v)
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
func Plain(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return string(x)
		}
		return f
	case map[string]any:
		for k, e := range x {
			if p := Plain(e); !sameScalar(p, e) {
				x[k] = p
			}
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = Plain(e)
		}
		return x
	}
	return v
}

// sameScalar avoids rewriting map entries whose value did not change.
func sameScalar(a, b any) bool {
	switch a.(type) {
	case map[string]any, []any:
		return true
	}
	_, isNum := b.(json.Number)
	return !isNum
}

// Extra collects a member that the canonical type does not know, so that
// decoding and re-encoding keep it.
func Extra(m *map[string]any, k string, v any) {
	if *m == nil {
		*m = make(map[string]any, 2)
	}
	(*m)[k] = v
}

// Marshal encodes a tree compactly without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func escapePointer(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b bytes.Buffer
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			b.WriteString("~0")
		case '/':
			b.WriteString("~1")
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func needsEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '~' || s[i] == '/' {
			return true
		}
	}
	return false
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
