package protocol

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
)

// The checks the generated validators are built of. Each answers whether
// a JSON tree value surely satisfies a keyword: false where it does not,
// and where being sure would take more than the common case needs (the
// reference validator then decides). None allocates.

// IsObject reports whether v is a JSON object.
func IsObject(v any) bool { _, ok := v.(map[string]any); return ok }

// IsArray reports whether v is a JSON array.
func IsArray(v any) bool { _, ok := v.([]any); return ok }

// IsString reports whether v is a JSON string.
func IsString(v any) bool { _, ok := v.(string); return ok }

// IsBool reports whether v is true or false.
func IsBool(v any) bool { _, ok := v.(bool); return ok }

// IsNumber reports whether v is a JSON number.
func IsNumber(v any) bool {
	switch v.(type) {
	case json.Number, float64, float32, int, int64, int32:
		return true
	}
	return false
}

// SurelyInteger reports whether v is a number written without fraction or
// exponent (1.0 and 1e2 are integers too: the reference validator says so).
func SurelyInteger(v any) bool {
	switch n := v.(type) {
	case json.Number:
		s := string(n)
		if s != "" && s[0] == '-' {
			s = s[1:]
		}
		if s == "" {
			return false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return false
			}
		}
		return true
	case int, int64, int32:
		return true
	}
	return false
}

// IsConst reports whether v is the string s.
func IsConst(v any, s string) bool { x, ok := v.(string); return ok && x == s }

// IsNumberText reports whether v is a number written as text (1 and 1.0
// are equal, but only the same text is surely so).
func IsNumberText(v any, text string) bool { n, ok := v.(json.Number); return ok && string(n) == text }

// AtLeast reports whether v, when a number, is surely at least min; a
// value that is no number satisfies it (the keyword does not apply).
func AtLeast(v any, min string) bool {
	f, bound, ok := compared(v, min)
	return !ok || f >= bound
}

// AtMost reports whether v, when a number, is surely at most max.
func AtMost(v any, max string) bool {
	f, bound, ok := compared(v, max)
	return !ok || f <= bound
}

// compared returns v and a bound as float64, ok when v is a number. A
// number with more significant digits than a float64 keeps exactly
// cannot be compared surely: it compares as NaN, which no bound holds.
func compared(v any, bound string) (float64, float64, bool) {
	b, err := strconv.ParseFloat(bound, 64)
	if err != nil {
		return nanValue, 0, true
	}
	switch n := v.(type) {
	case json.Number:
		if digits(string(n)) > 15 {
			return nanValue, b, true
		}
		f, err := strconv.ParseFloat(string(n), 64)
		if err != nil {
			return nanValue, b, true
		}
		return f, b, true
	case float64:
		return n, b, true
	case int:
		return float64(n), b, true
	case int64:
		if n > 1<<53 || n < -(1<<53) {
			return nanValue, b, true
		}
		return float64(n), b, true
	}
	return 0, b, false
}

var nanValue = func() float64 { f, _ := strconv.ParseFloat("NaN", 64); return f }()

// digits counts the digits of a number's text, exponent aside.
func digits(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			n++
		}
	}
	return n
}

// SurelyURI reports whether s is surely an absolute URI as the reference
// validator reads one (net/url parses it, it has a scheme, and its host
// is no IPv6 address, which the reference checks further).
func SurelyURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.IsAbs() && !strings.Contains(u.Hostname(), ":")
}

// SurelyURITemplate reports whether s is an RFC 6570 template.
func SurelyURITemplate(s string) bool { return validURITemplate(s) == nil }
