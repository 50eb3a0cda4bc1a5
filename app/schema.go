package app

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/invopop/jsonschema"
	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// schemaOf derives the JSON Schema of a Go type (github.com/invopop/jsonschema):
// field names from json tags, required unless omitempty, constraints from
// jsonschema tags. What encoding/json does is what the schema says:
//   - objects allow no other properties, so that a misspelt or differently
//     cased argument is refused rather than dropped or folded onto a field;
//   - in an input, an optional (omitempty) pointer, slice or map may be
//     null; a required one may not, so that null never reaches the handler
//     where the type says a value; in an output any may be, as
//     encoding/json writes nil as null;
//   - a type with its own text or JSON encoding is a string, unless it
//     declares a JSONSchema method.
//
// A recursive type has no finite inline schema, a jsonschema tag the
// library would silently ignore is a mistake, and a schema no value can
// satisfy is a tool that refuses every call: registering any of them
// panics with a message naming the field.
func schemaOf(t reflect.Type, side schemaSide) any {
	if path := cycle(t, nil); path != "" {
		panic(fmt.Sprintf("app: %v is recursive (%s): give the tool an explicit schema", t, path))
	}
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true, Mapper: encodedAsString}
	s := r.ReflectFromType(t)
	s.Version = ""
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("app: the schema of %v: %v", t, err))
	}
	tree, err := jsontree.Parse(b)
	if err != nil {
		panic(fmt.Sprintf("app: the schema of %v: %v", t, err))
	}
	if obj, ok := tree.(map[string]any); ok {
		nullable(t, obj, side)
		if err := checkFields(t, obj, ""); err != nil {
			panic(fmt.Sprintf("app: the schema of %v: %v", t, err))
		}
	}
	return tree
}

// schemaSide says whose values a schema describes: the client's (a tool's
// input, a prompt's arguments) or the handler's (a tool's output).
type schemaSide int

const (
	inputSide schemaSide = iota
	outputSide
)

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	rawMessage    = reflect.TypeFor[json.RawMessage]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
	schemaOwner   = reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }]()
)

// encodedAsString maps types that encode themselves (a UUID, a net.IP)
// to a string, which is what encoding/json writes for most of them, and a
// json.RawMessage to any value.
func encodedAsString(t reflect.Type) *jsonschema.Schema {
	if t.Implements(schemaOwner) || reflect.PointerTo(t).Implements(schemaOwner) {
		return nil
	}
	if t.Kind() == reflect.Struct && t.PkgPath() == "time" && t.Name() == "Time" {
		return nil // invopop knows it: a date-time string
	}
	if t == rawMessage {
		return &jsonschema.Schema{} // any JSON value: it is written as it is
	}
	if t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) ||
		(t.Kind() != reflect.Struct && (t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler))) {
		return &jsonschema.Schema{Type: "string"}
	}
	return nil
}

// cycle returns the path of a type that contains itself, "" when none does.
func cycle(t reflect.Type, seen []reflect.Type) string {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return ""
	}
	for _, s := range seen {
		if s == t {
			names := make([]string, 0, len(seen)+1)
			for _, x := range seen {
				names = append(names, x.String())
			}
			return strings.Join(append(names, t.String()), " > ")
		}
	}
	seen = append(seen, t)
	for i := range t.NumField() {
		if p := cycle(t.Field(i).Type, seen); p != "" {
			return p
		}
	}
	return ""
}

// nullable lets the schema of each optional pointer, slice and map field
// of t (and of the structs inside) accept null, as encoding/json writes
// nil as null.
func nullable(t reflect.Type, s map[string]any, side schemaSide) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		required := map[string]bool{}
		if req, ok := s["required"].([]any); ok {
			for _, r := range req {
				if r, ok := r.(string); ok {
					required[r] = true
				}
			}
		}
		_ = eachField(t, s, func(f reflect.StructField, name string, ps map[string]any) error {
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
				if side == outputSide || !required[name] {
					allowNull(ps)
				}
			}
			nullable(f.Type, valueSchema(ps), side)
			return nil
		})
	case reflect.Slice, reflect.Array:
		if items, ok := s["items"].(map[string]any); ok {
			nullable(t.Elem(), items, side)
		}
	case reflect.Map:
		if values, ok := s["additionalProperties"].(map[string]any); ok {
			nullable(t.Elem(), values, side)
		}
	}
}

// eachField calls fn with each field of the struct type t that has a
// property in s, the struct's schema, with its name and schema. The
// fields of an embedded struct without a JSON name are the struct's own
// (encoding/json and the library flatten them); unexported fields and
// json:"-" have none.
func eachField(t reflect.Type, s map[string]any, fn func(f reflect.StructField, name string, ps map[string]any) error) error {
	props, _ := s["properties"].(map[string]any)
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" || f.PkgPath != "" && !f.Anonymous {
			continue
		}
		if f.Anonymous && name == "" {
			inner := f.Type
			for inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if err := eachField(inner, s, fn); err != nil {
					return err
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if ps, ok := props[name].(map[string]any); ok {
			if err := fn(f, name, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

// valueSchema is the schema of a field's value: a field tagged nullable is
// wrapped by the library as {"oneOf": [its schema, {"type": "null"}]}.
func valueSchema(ps map[string]any) map[string]any {
	if one, ok := ps["oneOf"].([]any); ok && len(one) == 2 {
		if null, _ := one[1].(map[string]any); null["type"] == "null" {
			if inner, ok := one[0].(map[string]any); ok {
				return inner
			}
		}
	}
	return ps
}

func allowNull(s map[string]any) {
	switch typ := s["type"].(type) {
	case string:
		if typ != "null" {
			s["type"] = []any{typ, "null"}
		}
	case []any:
		for _, x := range typ {
			if x == "null" {
				return
			}
		}
		s["type"] = append(typ, "null")
	}
}
