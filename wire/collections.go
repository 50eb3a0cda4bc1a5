package wire

// Decoders and encoders of slices and maps, shared by generated code: an
// element is decoded or encoded by a function of the element's type, so
// that no slice or map type needs code of its own.

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
			return nil, AtIndex(err, i)
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
			return nil, At(err, k)
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
func DecodeInt(v any, _ int) (int64, error)           { return Int(v) }
func DecodeFloat(v any, _ int) (float64, error)       { return Float(v) }
func DecodeBool(v any, _ int) (bool, error)           { return Bool(v) }
func DecodeID(v any, _ int) (ID, error)               { return IDFromValue(v) }
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
func EncodeID(v ID, _ int) any               { return v.Value() }
func EncodePlain[T any](v T, _ int) any      { return v }

// AnyArrayOf and AnyObjectOf are AnyArray and AnyObject as element
// encoders.
func AnyArrayOf[T any](v []T, _ int) any           { return AnyArray(v) }
func AnyObjectOf[T any](v map[string]T, _ int) any { return AnyObject(v) }
