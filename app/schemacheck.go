package app

import (
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/mcpstack/mcpstack/internal/protocol"
)

// tagKeywords are the jsonschema tag keys github.com/invopop/jsonschema
// understands, with the schema keyword each one sets ("" where it sets
// none on the field's own schema, or one that cannot be checked there).
var tagKeywords = map[string]string{
	"title": "title", "description": "description", "type": "type", "anchor": "",
	"oneof_required": "", "anyof_required": "", "oneof_ref": "", "oneof_type": "", "anyof_ref": "", "anyof_type": "",
	"minLength": "minLength", "maxLength": "maxLength", "pattern": "pattern", "format": "format",
	"readOnly": "readOnly", "writeOnly": "writeOnly", "default": "default", "example": "examples", "enum": "enum",
	"multipleOf": "multipleOf", "minimum": "minimum", "maximum": "maximum",
	"exclusiveMaximum": "exclusiveMaximum", "exclusiveMinimum": "exclusiveMinimum",
	"minItems": "minItems", "maxItems": "maxItems", "uniqueItems": "uniqueItems",
}

// tagFlags are the jsonschema tag words that take no value.
var tagFlags = map[string]bool{"required": true, "nullable": true, "-": true}

// checkFields checks the jsonschema tags of t's fields (and of the structs
// inside) against the schema derived from them, s: every key is one the
// library knows and took for this field's type, and the field's schema
// can be satisfied. at is the JSON pointer of s, for the message.
func checkFields(t reflect.Type, s map[string]any, at string) error {
	for {
		switch t.Kind() {
		case reflect.Pointer:
			t = t.Elem()
			continue
		case reflect.Slice, reflect.Array:
			items, _ := s["items"].(map[string]any)
			if items == nil {
				return nil
			}
			t, s, at = t.Elem(), items, at+"/items"
			continue
		case reflect.Map:
			values, _ := s["additionalProperties"].(map[string]any)
			if values == nil {
				return nil
			}
			t, s, at = t.Elem(), values, at+"/additionalProperties"
			continue
		}
		break
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	return eachField(t, s, func(f reflect.StructField, name string, ps map[string]any) error {
		where := fmt.Sprintf("field %s (%s/properties/%s)", f.Name, at, name)
		ps = valueSchema(ps)
		if err := checkTag(f.Tag.Get("jsonschema"), ps); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		if err := satisfiable(ps); err != nil {
			return fmt.Errorf("%s: no value can satisfy its schema: %w", where, err)
		}
		return checkFields(f.Type, ps, at+"/properties/"+name)
	})
}

// checkTag checks one field's jsonschema tag against the schema the
// library derived from it, ps (or, for an array, its items).
func checkTag(tag string, ps map[string]any) error {
	if tag == "" {
		return nil
	}
	for _, part := range splitTag(tag) {
		key, value, hasValue := strings.Cut(part, "=")
		if !hasValue {
			if !tagFlags[key] {
				return fmt.Errorf("jsonschema tag %q: %q is not a keyword github.com/invopop/jsonschema knows (key=value, or required, nullable)", tag, part)
			}
			continue
		}
		keyword, known := tagKeywords[key]
		if !known {
			return fmt.Errorf("jsonschema tag %q: %q is not a keyword github.com/invopop/jsonschema knows", tag, key)
		}
		if key == "enum" && strings.Contains(value, "|") {
			return fmt.Errorf("jsonschema tag %q: enum=%s is one value; give each its own: enum=%s", tag, value, strings.ReplaceAll(value, "|", ",enum="))
		}
		if keyword == "" || value == "" || value == "false" && (key == "readOnly" || key == "writeOnly") {
			continue // set nowhere, or the library leaves a false or empty value out
		}
		items, _ := ps["items"].(map[string]any)
		if _, ok := ps[keyword]; !ok {
			if _, ok := items[keyword]; !ok {
				return fmt.Errorf("jsonschema tag %q: %s does not apply to a field of this type (the derived schema has no %s)", tag, key, keyword)
			}
		}
	}
	return nil
}

// splitTag splits a jsonschema tag at its commas, but not at an escaped
// one (\,), as the library does.
func splitTag(tag string) []string {
	var parts []string
	var cur strings.Builder
	for i := 0; i < len(tag); i++ {
		switch {
		case tag[i] == '\\' && i+1 < len(tag) && tag[i+1] == ',':
			cur.WriteByte(',')
			i++
		case tag[i] == ',':
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(tag[i])
		}
	}
	return append(parts, cur.String())
}

// satisfiable finds the plain contradictions of a field's schema: a lower
// bound above its upper bound, or an enum none of whose values pass the
// field's other keywords.
func satisfiable(ps map[string]any) error {
	for _, b := range [][2]string{{"minimum", "maximum"}, {"minLength", "maxLength"}, {"minItems", "maxItems"},
		{"exclusiveMinimum", "maximum"}, {"minimum", "exclusiveMaximum"}, {"exclusiveMinimum", "exclusiveMaximum"}} {
		lo, okLo := ratOf(ps[b[0]])
		hi, okHi := ratOf(ps[b[1]])
		if !okLo || !okHi {
			continue
		}
		// With an exclusive bound on either side, equal bounds leave nothing.
		exclusive := strings.HasPrefix(b[0], "exclusive") || strings.HasPrefix(b[1], "exclusive")
		if c := lo.Cmp(hi); c > 0 || c == 0 && exclusive {
			return fmt.Errorf("%s %s and %s %s leave no value", b[0], lo.RatString(), b[1], hi.RatString())
		}
	}
	enum, ok := ps["enum"].([]any)
	if !ok {
		return nil
	}
	rest := make(map[string]any, len(ps))
	for k, v := range ps {
		if k != "enum" {
			rest[k] = v
		}
	}
	sch, err := protocol.CompileSchema("field", rest)
	if err != nil {
		return err
	}
	var first error
	for _, v := range enum {
		err := sch.Validate(v)
		if err == nil {
			return nil
		}
		if first == nil {
			first = fmt.Errorf("enum value %v: %w", v, err)
		}
	}
	return first
}

// ratOf is a JSON number of a schema as a big.Rat.
func ratOf(v any) (*big.Rat, bool) {
	switch n := v.(type) {
	case nil:
		return nil, false
	case fmt.Stringer: // json.Number, as jsontree.Parse keeps numbers
		return new(big.Rat).SetString(n.String())
	case float64:
		return new(big.Rat).SetFloat64(n), true
	case int:
		return big.NewRat(int64(n), 1), true
	case int64:
		return big.NewRat(n, 1), true
	}
	return nil, false
}
