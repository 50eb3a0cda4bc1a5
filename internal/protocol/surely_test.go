package protocol_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/mcpstack/mcpstack/internal/protocol"
)

// The checks say true only where the reference validator surely agrees:
// an integer written with a fraction, a number with more digits than a
// float64 keeps, an IPv6 host are left to it.
func TestSurelyChecks(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  bool
		want bool
	}{
		{"integer", protocol.SurelyInteger(json.Number("-42")), true},
		{"integer with a fraction", protocol.SurelyInteger(json.Number("1.0")), false},
		{"integer with an exponent", protocol.SurelyInteger(json.Number("1e2")), false},
		{"a string is no integer", protocol.SurelyInteger("1"), false},
		{"at least, above", protocol.AtLeast(json.Number("0.5"), "0"), true},
		{"at least, below", protocol.AtLeast(json.Number("-0.5"), "0"), false},
		{"at least, not a number", protocol.AtLeast("x", "0"), true},
		{"at most, equal", protocol.AtMost(json.Number("10000"), "10000"), true},
		{"at most, just above in 17 digits", protocol.AtMost(json.Number("10000.000000000001"), "10000"), false},
		{"at most, huge", protocol.AtMost(json.Number("1e400"), "10000"), false},
		{"at least, underflowing below zero", protocol.AtLeast(json.Number("-1e-400"), "0"), false},
		{"at most, underflowing above zero", protocol.AtMost(json.Number("1e-330"), "0"), false},
		{"at least, a bound of 17 digits", protocol.AtLeast(json.Number("0.1"), "0.10000000000000001"), false},
		{"at least, an int past 2^53", protocol.AtLeast(int64(1<<60), "0"), false},
		{"NaN is no number", protocol.IsNumber(math.NaN()), false},
		{"uri", protocol.SurelyURI("file:///tmp/a.txt"), true},
		{"uri with a template host", protocol.SurelyURI("conversation://123"), true},
		{"relative uri", protocol.SurelyURI("a/b"), false},
		{"uri with an IPv6 host", protocol.SurelyURI("http://[::1]:80/"), false},
		{"uri template", protocol.SurelyURITemplate("conversation://{id}"), true},
		{"broken uri template", protocol.SurelyURITemplate("x://{"), false},
		{"const", protocol.IsConst("text", "text"), true},
		{"const of another type", protocol.IsConst(json.Number("1"), "1"), false},
		{"number text", protocol.IsNumberText(json.Number("2"), "2"), true},
		{"number text written otherwise", protocol.IsNumberText(json.Number("2.0"), "2"), false},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}
