package codec_test

import (
	"reflect"
	"testing"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/jsontree"
)

func TestPlainAndArrays(t *testing.T) {
	v, _ := jsontree.Parse([]byte(`{"a":[1,{"b":2.5}],"c":"s"}`))
	got := codec.Plain(v)
	want := map[string]any{"a": []any{1.0, map[string]any{"b": 2.5}}, "c": "s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Plain = %#v", got)
	}
	if codec.AnyArray([]string(nil)) != nil || codec.NonNilArray(nil) == nil {
		t.Error("nil handling")
	}
	if got := codec.AnyArray([]string{"x"}); !reflect.DeepEqual(got, []any{"x"}) {
		t.Errorf("AnyArray = %#v", got)
	}
}
