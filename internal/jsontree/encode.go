package jsontree

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Marshal encodes a tree compactly without HTML escaping, byte for byte as
// encoding/json does (object members sorted by name; FuzzMarshal holds
// the two together), without reflection for the tree's own types: maps,
// slices, strings, json.Number, booleans, nil and Go numbers. Any other
// value (a json.Marshaler, a struct) is encoding/json's.
func Marshal(v any) ([]byte, error) {
	return AppendMarshal(make([]byte, 0, 256), v)
}

// AppendMarshal appends the encoding of v to b.
func AppendMarshal(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case string:
		return appendString(b, x), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case json.Number:
		if x == "" {
			return append(b, '0'), nil // as encoding/json writes an empty Number
		}
		if !isNumber(string(x)) {
			return stdMarshal(b, v)
		}
		return append(b, x...), nil
	case float64:
		return appendFloat(b, x, 64)
	case float32:
		return appendFloat(b, float64(x), 32)
	case int:
		return strconv.AppendInt(b, int64(x), 10), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case int32:
		return strconv.AppendInt(b, int64(x), 10), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = AppendMarshal(b, x[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendMarshal(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	}
	return stdMarshal(b, v)
}

// stdMarshal is encoding/json's encoding of v, for what the tree does
// not hold itself.
func stdMarshal(b []byte, v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimRight(buf.Bytes(), "\n")...), nil
}

// appendFloat writes a float as encoding/json's floatEncoder does.
func appendFloat(b []byte, f float64, bits int) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return stdMarshal(b, f) // its error: unsupported value
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

// isNumber reports whether s is a JSON number, as encoding/json checks a
// json.Number before writing it.
func isNumber(s string) bool {
	end, context := scanNumber(s, 0)
	return context == "" && end == len(s)
}

const hexDigits = "0123456789abcdef"

// AppendString appends s quoted as Marshal writes a string.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }

// appendString writes s quoted as encoding/json does without HTML
// escaping: the short escapes, \u00XX for other control bytes, U+2028 and
// U+2029 escaped, invalid UTF-8 as \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i += plainRun(s[i:]); i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf { // after plainRun: a control byte, '"' or '\\'
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
