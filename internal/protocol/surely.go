package protocol

import (
	"encoding/json"
	"math"
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
	switch n := v.(type) {
	case json.Number, int, int64, int32:
		return true
	case float64:
		return !math.IsNaN(n) && !math.IsInf(n, 0) // no JSON number
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

// compared returns v and a bound as float64, ok when v is a number. What
// a float64 does not hold exactly cannot be compared surely, and compares
// as NaN, which no bound holds: more significant digits than it keeps, in
// the value or the bound; a value that overflows or underflows (1e-400
// parses as 0); an integer past 2^53.
func compared(v any, bound string) (float64, float64, bool) {
	b, ok := exact(bound)
	if !ok {
		b = nanValue
	}
	switch n := v.(type) {
	case json.Number:
		f, ok := exact(string(n))
		if !ok {
			return nanValue, b, true
		}
		return f, b, true
	case float64:
		return n, b, true
	case int:
		return intValue(int64(n)), b, true
	case int64:
		return intValue(n), b, true
	}
	return 0, b, false
}

// exact parses a number's text where float64 holds it without rounding
// that could cross a bound.
func exact(s string) (float64, bool) {
	if digits(s) > 15 {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || f == 0 && strings.ContainsAny(mantissa(s), "123456789") {
		return 0, false
	}
	if f != 0 && math.Abs(f) < 0x1p-1022 { // subnormal: fewer bits than the digits say
		return 0, false
	}
	return f, true
}

func intValue(n int64) float64 {
	if n > 1<<53 || n < -(1<<53) {
		return nanValue
	}
	return float64(n)
}

var nanValue = math.NaN()

// mantissa is a number's text without its exponent.
func mantissa(s string) string {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		return s[:i]
	}
	return s
}

// digits counts the digits of a number's text, exponent aside.
func digits(s string) int {
	s = mantissa(s)
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
