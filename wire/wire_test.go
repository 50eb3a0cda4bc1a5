package wire_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"

	"github.com/mcpstack/mcpstack/wire"
)

func TestIDFromValue(t *testing.T) {
	tests := []struct {
		in      string
		want    wire.ID
		wantErr bool
	}{
		{`"abc"`, wire.StringID("abc"), false},
		{`""`, wire.StringID(""), false},
		{`42`, wire.IntID(42), false},
		{`9007199254740993`, wire.IntID(9007199254740993), false},
		{`1.0`, wire.IntID(1), false},
		{`1.5`, wire.ID{}, true},
		{`null`, wire.ID{}, true},
		{`true`, wire.ID{}, true},
		{`{}`, wire.ID{}, true},
	}
	for _, tt := range tests {
		v, err := jsontree.Parse([]byte(tt.in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := wire.IDFromValue(v)
		if (err != nil) != tt.wantErr {
			t.Errorf("IDFromValue(%s) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("IDFromValue(%s) = %v, want %v", tt.in, got, tt.want)
		}
	}
	// A string and an integer with the same digits are different keys.
	if wire.StringID("1") == wire.IntID(1) {
		t.Error(`StringID("1") == IntID(1)`)
	}
	b, _ := json.Marshal(map[string]wire.ID{"a": wire.IntID(7), "b": wire.StringID("x")})
	if string(b) != `{"a":7,"b":"x"}` {
		t.Errorf("marshal = %s", b)
	}
}
