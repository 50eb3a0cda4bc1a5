// Package codec is the runtime of the generated code that no user calls:
// decoders and encoders of slices and maps (an element is decoded or
// encoded by a function of the element's type, so that no slice or map
// type needs code of its own), and the setters of struct members. What
// users touch stays in package wire.
package codec

import (
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// DecodeSlice decodes a JSON array, each element with elem.
func DecodeSlice[T any](v any, rev int, elem func(any, int) (T, error)) ([]T, error) {
	arr, err := Array(v)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(arr))
	for i, e := range arr {
		x, err := elem(e, rev)
		if err != nil {
			return nil, jsontree.AtIndex(err, i)
		}
		out[i] = x
	}
	return out, nil
}

// DecodeMap decodes a JSON object of like members, each with elem.
func DecodeMap[T any](v any, rev int, elem func(any, int) (T, error)) (map[string]T, error) {
	obj, err := Object(v)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(obj))
	for k, e := range obj {
		x, err := elem(e, rev)
		if err != nil {
			return nil, jsontree.At(err, k)
		}
		out[k] = x
	}
	return out, nil
}

// SliceOf is DecodeSlice as an element decoder, for nested arrays.
func SliceOf[T any](elem func(any, int) (T, error)) func(any, int) ([]T, error) {
	return func(v any, rev int) ([]T, error) { return DecodeSlice(v, rev, elem) }
}

// MapOf is DecodeMap as an element decoder, for nested objects.
func MapOf[T any](elem func(any, int) (T, error)) func(any, int) (map[string]T, error) {
	return func(v any, rev int) (map[string]T, error) { return DecodeMap(v, rev, elem) }
}

// DecodeInto decodes a struct that has DecodeValue.
func DecodeInto[T any, P interface {
	*T
	DecodeValue(any, int) error
}](v any, rev int) (*T, error) {
	p := P(new(T))
	if err := p.DecodeValue(v, rev); err != nil {
		return nil, err
	}
	return (*T)(p), nil
}

// Element decoders of plain values.
func DecodeString[T ~string](v any, _ int) (T, error) { s, err := String(v); return T(s), err }
func DecodeInt(v any, _ int) (int64, error)           { return jsontree.Int(v) }
func DecodeFloat(v any, _ int) (float64, error)       { return Float(v) }
func DecodeBool(v any, _ int) (bool, error)           { return Bool(v) }
func DecodeID(v any, _ int) (wire.ID, error)          { return wire.IDFromValue(v) }
func DecodePlain(v any, _ int) (any, error)           { return Plain(v), nil }

// EncodeSlice encodes a slice, each element with enc (nil stays nil).
func EncodeSlice[T any](v []T, rev int, enc func(T, int) any) any {
	if v == nil {
		return nil
	}
	out := make([]any, len(v))
	for i, e := range v {
		out[i] = enc(e, rev)
	}
	return out
}

// EncodeMap encodes a map, each element with enc (nil stays nil).
func EncodeMap[T any](v map[string]T, rev int, enc func(T, int) any) any {
	if v == nil {
		return nil
	}
	out := make(map[string]any, len(v))
	for k, e := range v {
		out[k] = enc(e, rev)
	}
	return out
}

// SliceEncoder is EncodeSlice as an element encoder, for nested arrays.
func SliceEncoder[T any](enc func(T, int) any) func([]T, int) any {
	return func(v []T, rev int) any { return EncodeSlice(v, rev, enc) }
}

// MapEncoder is EncodeMap as an element encoder, for nested objects.
func MapEncoder[T any](enc func(T, int) any) func(map[string]T, int) any {
	return func(v map[string]T, rev int) any { return EncodeMap(v, rev, enc) }
}

// Element encoders of plain values.
func EncodeString[T ~string](v T, _ int) any { return string(v) }
func EncodeID(v wire.ID, _ int) any          { return v.Value() }
func EncodePlain[T any](v T, _ int) any      { return v }

// AnyArrayOf and AnyObjectOf are wire.AnyArray and AnyObject as element
// encoders.
func AnyArrayOf[T any](v []T, _ int) any           { return AnyArray(v) }
func AnyObjectOf[T any](v map[string]T, _ int) any { return AnyObject(v) }

// MergeExtra copies unknown members into an encoded object without
// overwriting known ones.
func MergeExtra(dst, extra map[string]any) {
	for k, v := range extra {
		if _, known := dst[k]; !known {
			dst[k] = v
		}
	}
}

// AnyObject converts a map of plain values for a tree (nil stays nil).
func AnyObject[T any](v map[string]T) any {
	if v == nil {
		return nil
	}
	if m, ok := any(v).(map[string]any); ok {
		return m
	}
	out := make(map[string]any, len(v))
	for k, e := range v {
		out[k] = e
	}
	return out
}

// NonNilArray renders an absent required array as [].
func NonNilArray(v any) any {
	if v == nil {
		return []any{}
	}
	return v
}

// NonNilObject renders an absent required object as {}.
func NonNilObject(v any) any {
	if v == nil {
		return map[string]any{}
	}
	return v
}

// SetString decodes a JSON string into dst (a string or a string-based enum).
func SetString[T ~string](v any, dst *T) error {
	s, err := String(v)
	*dst = T(s)
	return err
}

// SetInt decodes an integral JSON number into dst.
func SetInt(v any, dst *int64) (err error) { *dst, err = jsontree.Int(v); return err }

// SetFloat decodes a JSON number into dst.
func SetFloat(v any, dst *float64) (err error) { *dst, err = Float(v); return err }

// SetBool decodes a JSON boolean into dst.
func SetBool(v any, dst *bool) (err error) { *dst, err = Bool(v); return err }

// SetID decodes a string or integer into dst.
func SetID(v any, dst *wire.ID) (err error) { *dst, err = wire.IDFromValue(v); return err }
