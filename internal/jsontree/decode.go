package jsontree

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"sync"
	"unicode/utf8"
)

// Decode stores tree in the zero value v points to, as json.Unmarshal of
// the tree's encoding would, without the text in between: a tool's
// arguments, parsed once, go straight into the handler's type. Types it
// does not place itself (anything with its own UnmarshalJSON or
// UnmarshalText, interfaces, arrays, embedded or ",string" fields, names
// outside ASCII), and values it cannot place exactly (a number that is no
// integer of the field's size, a mismatched type), go through
// encoding/json, which also words the errors. The tree is one Parse
// made (valid UTF-8, JSON numbers); FuzzDecode holds the two together.
func Decode(tree any, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		if p := planOf(rv.Type().Elem()); p != nil {
			fresh := reflect.New(rv.Type().Elem()).Elem()
			if p(tree, fresh) {
				rv.Elem().Set(fresh)
				return nil
			}
		}
	}
	b, err := Marshal(tree)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// place stores a tree value in dst, reporting false where it cannot do
// so exactly as encoding/json would.
type place func(tree any, dst reflect.Value) bool

var plans sync.Map // reflect.Type -> place (nil: encoding/json's)

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	numberType      = reflect.TypeFor[json.Number]() // a string that must be a number: encoding/json's
)

func planOf(t reflect.Type) place {
	if p, ok := plans.Load(t); ok {
		return p.(place)
	}
	p := newPlan(t, map[reflect.Type]bool{})
	plans.Store(t, p)
	return p
}

func newPlan(t reflect.Type, seen map[reflect.Type]bool) place {
	if t == numberType || reflect.PointerTo(t).Implements(unmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) ||
		t.Implements(unmarshaler) || t.Implements(textUnmarshaler) {
		return nil
	}
	if seen[t] {
		return nil // a recursive type: encoding/json's
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Bool:
		return func(tree any, dst reflect.Value) bool {
			switch x := tree.(type) {
			case nil:
				return true
			case bool:
				dst.SetBool(x)
				return true
			}
			return false
		}
	case reflect.String:
		return func(tree any, dst reflect.Value) bool {
			switch x := tree.(type) {
			case nil:
				return true
			case string:
				if !utf8.ValidString(x) {
					return false // encoding/json's U+FFFD
				}
				dst.SetString(x)
				return true
			}
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(tree any, dst reflect.Value) bool {
			if tree == nil {
				return true
			}
			n, ok := tree.(json.Number)
			if !ok {
				return false
			}
			if !isNumber(string(n)) {
				return false
			}
			i, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || dst.OverflowInt(i) {
				return false
			}
			dst.SetInt(i)
			return true
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return func(tree any, dst reflect.Value) bool {
			if tree == nil {
				return true
			}
			n, ok := tree.(json.Number)
			if !ok {
				return false
			}
			if !isNumber(string(n)) {
				return false
			}
			u, err := strconv.ParseUint(string(n), 10, 64)
			if err != nil || dst.OverflowUint(u) {
				return false
			}
			dst.SetUint(u)
			return true
		}
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		return func(tree any, dst reflect.Value) bool {
			if tree == nil {
				return true
			}
			n, ok := tree.(json.Number)
			if !ok {
				return false
			}
			if !isNumber(string(n)) {
				return false
			}
			f, err := strconv.ParseFloat(string(n), bits)
			if err != nil || dst.OverflowFloat(f) {
				return false
			}
			dst.SetFloat(f)
			return true
		}
	case reflect.Pointer:
		elem := newPlan(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(tree any, dst reflect.Value) bool {
			if tree == nil {
				dst.SetZero()
				return true
			}
			p := reflect.New(t.Elem())
			if !elem(tree, p.Elem()) {
				return false
			}
			dst.Set(p)
			return true
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is base64 text
		}
		elem := newPlan(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(tree any, dst reflect.Value) bool {
			switch x := tree.(type) {
			case nil:
				dst.SetZero()
				return true
			case []any:
				if x == nil {
					return false // a typed nil, which Parse never makes
				}
				s := reflect.MakeSlice(t, len(x), len(x))
				for i, e := range x {
					if !elem(e, s.Index(i)) {
						return false
					}
				}
				dst.Set(s)
				return true
			}
			return false
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || t.Key() != reflect.TypeFor[string]() {
			return nil
		}
		elem := newPlan(t.Elem(), seen)
		if elem == nil {
			return nil
		}
		return func(tree any, dst reflect.Value) bool {
			switch x := tree.(type) {
			case nil:
				dst.SetZero()
				return true
			case map[string]any:
				if x == nil {
					return false
				}
				m := reflect.MakeMapWithSize(t, len(x))
				for k, e := range x {
					if !utf8.ValidString(k) {
						return false
					}
					v := reflect.New(t.Elem()).Elem()
					if !elem(e, v) {
						return false
					}
					m.SetMapIndex(reflect.ValueOf(k), v)
				}
				dst.Set(m)
				return true
			}
			return false
		}
	case reflect.Struct:
		return structPlan(t, seen)
	}
	return nil // interfaces, arrays, channels, functions
}

type fieldPlan struct {
	name  string
	index int
	place place
}

func structPlan(t reflect.Type, seen map[reflect.Type]bool) place {
	var fields []fieldPlan
	names := map[string]bool{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			return nil // promotion rules: encoding/json's
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
		if hasOption(opts, "string") || !isASCII(name) || !validTagName(name) || names[lower(name)] {
			return nil
		}
		names[lower(name)] = true
		p := newPlan(f.Type, seen)
		if p == nil {
			return nil
		}
		fields = append(fields, fieldPlan{name: name, index: i, place: p})
	}
	return func(tree any, dst reflect.Value) bool {
		switch x := tree.(type) {
		case nil:
			return true
		case map[string]any:
			if x == nil {
				return false
			}
			var set uint64 // the fields placed: two names of one field (name, NAME) are ordered by encoding/json
			for k, e := range x {
				f := findField(fields, k)
				if f < 0 {
					if !isASCII(k) {
						return false // encoding/json folds Unicode: let it match
					}
					continue // unknown: ignored
				}
				if f >= 64 || set&(1<<f) != 0 {
					return false
				}
				set |= 1 << f
				if !fields[f].place(e, dst.Field(fields[f].index)) {
					return false
				}
			}
			return true
		}
		return false
	}
}

// findField matches a member name to a field as encoding/json does for
// ASCII names: exactly, or else ignoring case; -1 for none.
func findField(fields []fieldPlan, k string) int {
	for i := range fields {
		if fields[i].name == k {
			return i
		}
	}
	for i := range fields {
		if equalFoldASCII(fields[i].name, k) {
			return i
		}
	}
	return -1
}

func cutComma(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = cutComma(opts)
		if o == want {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
