package codec

import (
	"slices"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// The generated AppendJSON methods encode a value straight into bytes, as
// jsontree.Marshal would encode the value's tree; these are their element
// appenders and helpers. Each reports false where the direct path cannot
// go (a value encoding/json refuses): the caller then takes the tree's.

// Appender appends one element of a slice or map.
type Appender[T any] func(v T, b []byte, rev int) ([]byte, bool)

// Member appends an object member's quoted name and colon, after a comma
// unless it is the first member of the object opened at start.
func Member(b []byte, start int, name string) []byte {
	if len(b) > start {
		b = append(b, ',')
	}
	return append(b, name...)
}

// AppendString appends a string element.
func AppendString(v string, b []byte, _ int) ([]byte, bool) {
	return jsontree.AppendString(b, v), true
}

// AppendEnum appends a string-based enum element.
func AppendEnum[T ~string](v T, b []byte, _ int) ([]byte, bool) {
	return jsontree.AppendString(b, string(v)), true
}

// AppendInt appends an integer.
func AppendInt(v int64, b []byte, _ int) ([]byte, bool) {
	return strconv.AppendInt(b, v, 10), true
}

// AppendID appends a request id.
func AppendID(v wire.ID, b []byte, _ int) ([]byte, bool) {
	return AppendPlain(v.Value(), b, 0)
}

// AppendPlain appends any value as jsontree.Marshal does (numbers,
// booleans, free-form trees, values of the caller's own types).
func AppendPlain[T any](v T, b []byte, _ int) ([]byte, bool) {
	b, err := jsontree.AppendMarshal(b, v)
	return b, err == nil
}

// AppendSlice appends v with elem for each element: null for nil, or []
// when nonNil (a required array).
func AppendSlice[T any](b []byte, v []T, rev int, elem Appender[T], nonNil bool) ([]byte, bool) {
	if v == nil && !nonNil {
		return append(b, "null"...), true
	}
	b = append(b, '[')
	for i, e := range v {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = elem(e, b, rev); !ok {
			return b, false
		}
	}
	return append(b, ']'), true
}

// AppendMap appends v with its members sorted by name, elem for each
// value: null for nil, or {} when nonNil (a required object).
func AppendMap[T any](b []byte, v map[string]T, rev int, elem Appender[T], nonNil bool) ([]byte, bool) {
	if v == nil && !nonNil {
		return append(b, "null"...), true
	}
	keys := make([]string, 0, len(v))
	for k := range v {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsontree.AppendString(b, k)
		b = append(b, ':')
		var ok bool
		if b, ok = elem(v[k], b, rev); !ok {
			return b, false
		}
	}
	return append(b, '}'), true
}

// SliceAppender is AppendSlice as an element appender, for nested arrays.
func SliceAppender[T any](elem Appender[T]) Appender[[]T] {
	return func(v []T, b []byte, rev int) ([]byte, bool) { return AppendSlice(b, v, rev, elem, false) }
}

// MapAppender is AppendMap as an element appender, for nested objects.
func MapAppender[T any](elem Appender[T]) Appender[map[string]T] {
	return func(v map[string]T, b []byte, rev int) ([]byte, bool) { return AppendMap(b, v, rev, elem, false) }
}
