package jsontree_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
)

func TestParse(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":1}x`, `nul`} {
		if _, err := jsontree.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
	v, err := jsontree.Parse([]byte(` {"n": 12345678901234567890} `))
	if err != nil {
		t.Fatal(err)
	}
	if n := v.(map[string]any)["n"]; n != json.Number("12345678901234567890") {
		t.Errorf("number = %#v, want json.Number", n)
	}
}

func TestPointer(t *testing.T) {
	for _, tc := range []struct {
		segments []string
		want     string
	}{
		{nil, ""},
		{[]string{"params", "name"}, "/params/name"},
		{[]string{"a/b", "~c", "0"}, "/a~1b/~0c/0"},
	} {
		if got := jsontree.Pointer(tc.segments...); got != tc.want {
			t.Errorf("Pointer(%q) = %q, want %q", tc.segments, got, tc.want)
		}
	}
}
