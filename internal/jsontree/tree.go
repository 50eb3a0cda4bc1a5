package jsontree

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// TreeOf returns the tree of v's JSON encoding, as Parse(json.Marshal(v))
// would, without the text in between for the types it builds itself
// (structs of exported ASCII-named fields with omitempty, strings,
// booleans, numbers, slices, string-keyed maps, pointers); anything else
// (a json.Marshaler or TextMarshaler, any, embedding, ",string",
// ",omitzero", arrays) goes through encoding/json. FuzzTreeOf holds the
// two together.
func TreeOf(v any) (any, error) {
	if v != nil {
		rv := reflect.ValueOf(v)
		if b := builderOf(rv.Type()); b != nil {
			if tree, ok := b(rv); ok {
				return tree, nil
			}
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// build makes the tree of a value; false where encoding/json's would
// differ (map keys that are not UTF-8 merge in its order).
type build func(v reflect.Value) (any, bool)

var builders sync.Map // reflect.Type -> build (nil: encoding/json's)

var (
	marshaler     = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func builderOf(t reflect.Type) build {
	if b, ok := builders.Load(t); ok {
		return b.(build)
	}
	b := newBuilder(t, map[reflect.Type]bool{})
	builders.Store(t, b)
	return b
}

func newBuilder(t reflect.Type, seen map[reflect.Type]bool) build {
	if t == numberType || t.Implements(marshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(marshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil
	}
	if seen[t] {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Bool:
		return func(v reflect.Value) (any, bool) { return v.Bool(), true }
	case reflect.String:
		return func(v reflect.Value) (any, bool) { return validString(v.String()), true }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) (any, bool) { return json.Number(strconv.FormatInt(v.Int(), 10)), true }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(v reflect.Value) (any, bool) { return json.Number(strconv.FormatUint(v.Uint(), 10)), true }
	case reflect.Float32, reflect.Float64:
		return nil // NaN and the formats: encoding/json's
	case reflect.Pointer:
		elem := newBuilder(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			return elem(v.Elem())
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil
		}
		elem := newBuilder(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			out := make([]any, v.Len())
			for i := range out {
				e, ok := elem(v.Index(i))
				if !ok {
					return nil, false
				}
				out[i] = e
			}
			return out, true
		}
	case reflect.Map:
		if t.Key() != reflect.TypeFor[string]() {
			return nil
		}
		elem := newBuilder(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(v reflect.Value) (any, bool) {
			if v.IsNil() {
				return nil, true
			}
			out := make(map[string]any, v.Len())
			for it := v.MapRange(); it.Next(); {
				k := it.Key().String()
				if !utf8.ValidString(k) {
					return nil, false
				}
				e, ok := elem(it.Value())
				if !ok {
					return nil, false
				}
				out[k] = e
			}
			return out, true
		}
	case reflect.Struct:
		return structBuilder(t, seen)
	}
	return nil
}

type fieldBuilder struct {
	name      string
	index     int
	omitEmpty bool
	build     build
}

func structBuilder(t reflect.Type, seen map[reflect.Type]bool) build {
	var fields []fieldBuilder
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := cutComma(tag)
		if name == "" {
			name = f.Name
		}
		if hasOption(opts, "string") || hasOption(opts, "omitzero") || !isASCII(name) || !validTagName(name) || names[name] {
			return nil
		}
		names[name] = true
		b := newBuilder(f.Type, seen)
		if b == nil {
			return nil
		}
		fields = append(fields, fieldBuilder{name: name, index: i, omitEmpty: hasOption(opts, "omitempty"), build: b})
	}
	return func(v reflect.Value) (any, bool) {
		out := make(map[string]any, len(fields))
		for _, f := range fields {
			fv := v.Field(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			e, ok := f.build(fv)
			if !ok {
				return nil, false
			}
			out[f.name] = e
		}
		return out, true
	}
}

// validTagName is encoding/json's test of an ASCII tag name (letters,
// digits and some punctuation); a name it refuses means the field's own
// name, which is left to encoding/json.
func validTagName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// isEmpty is encoding/json's omitempty test.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// validString is s as encoding and parsing it gives it back: each invalid
// byte becomes U+FFFD.
func validString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b = utf8.AppendRune(b, r)
		i += size
	}
	return string(b)
}
