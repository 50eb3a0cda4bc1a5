// Package jsontree is the JSON tree that mcpstack's generated code and
// core decode a message into once: map[string]any, []any, string,
// json.Number, bool and nil; and the errors that say where in it a value
// had the wrong shape.
package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

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

// Pointer is the JSON pointer (RFC 6901) of a path of member names and
// array indexes: "" for none, "/a~1b/0" for "a/b" then 0.
func Pointer(segments ...string) string {
	if len(segments) == 0 {
		return ""
	}
	var b strings.Builder
	for _, s := range segments {
		b.WriteByte('/')
		b.WriteString(escapePointer(s))
	}
	return b.String()
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

// WithMeta sets one member of a params or result tree's _meta, making the
// tree and its _meta where they are missing, and returns the tree.
func WithMeta(tree map[string]any, key string, value any) map[string]any {
	if tree == nil {
		tree = map[string]any{}
	}
	meta, _ := tree["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	meta[key] = value
	tree["_meta"] = meta
	return tree
}
