package protocol

import (
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// A reason prints numbers as JSON writes them, for the models and programs
// that read it: not "1×10⁹" or "10,000" (the library's English printer).
func TestReasonNumbers(t *testing.T) {
	schema := `{"type":"object","properties":{
		"n":{"type":"number","maximum":10000},
		"f":{"type":"number","exclusiveMinimum":0.5},
		"s":{"type":"string","maxLength":3},
		"a":{"type":"array","minItems":1200}}}`
	tests := []struct{ value, want string }{
		{`{"n":1000000000}`, "maximum: got 1000000000, want at most 10000"},
		{`{"n":10000.25}`, "maximum: got 10000.25, want at most 10000"},
		{`{"n":1234567.5}`, "maximum: got 1234567.5, want at most 10000"},
		{`{"n":1e1000000}`, "maximum: got +Inf, want at most 10000"},
		{`{"n":1e25}`, "maximum: got 1e+25, want at most 10000"},
		{`{"f":0.5}`, "exclusiveMinimum: got 0.5, want more than 0.5"},
		{`{"s":"abcd"}`, "maxLength: got 4 characters, want at most 3"},
		{`{"a":[]}`, "minItems: got 0 items, want at least 1200"},
	}
	doc, err := jsontree.Parse([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	v, err := CompileSchema("numbers", doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		tree, err := jsontree.Parse([]byte(tt.value))
		if err != nil {
			t.Fatal(err)
		}
		var ve *wire.ValidationError
		if err := v.Validate(tree); !errors.As(err, &ve) || ve.Reason != tt.want {
			t.Errorf("%s: %v, want %q", tt.value, err, tt.want)
		}
	}
}
