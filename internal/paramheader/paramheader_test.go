package paramheader

import (
	"encoding/json"
	"testing"
)

// What the client encodes, the server decodes to the same text; values
// unsafe in a header are Base64.
func TestEncodeDecode(t *testing.T) {
	for _, tc := range []struct {
		in     any
		header string
		text   string
	}{
		{"us-west1", "us-west1", "us-west1"},
		{true, "true", "true"},
		{json.Number("42"), "42", "42"},
		{float64(7), "7", "7"},
		{" padded", "=?base64?IHBhZGRlZA==?=", " padded"},
		{"Grüße", "=?base64?R3LDvMOfZQ==?=", "Grüße"},
		{"=?base64?x?=", "=?base64?PT9iYXNlNjQ/eD89?=", "=?base64?x?="},
	} {
		if got := Encode(tc.in); got != tc.header {
			t.Errorf("Encode(%#v) = %q, want %q", tc.in, got, tc.header)
		}
		if got, err := Decode(tc.header); err != nil || got != tc.text {
			t.Errorf("Decode(%q) = %q, %v; want %q", tc.header, got, err, tc.text)
		}
	}
	if _, err := Decode("=?base64?not base64?="); err == nil {
		t.Error("Decode accepted a value that is not Base64")
	}
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"Region": true, "tenant_id": true, "x-1": true, "": false, "a b": false, "a:b": false, "Ü": false} {
		if got := ValidName(name); got != want {
			t.Errorf("ValidName(%q) = %v, want %v", name, got, want)
		}
	}
}
