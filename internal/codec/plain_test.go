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

// TestPlainLeavesTheTree: Plain, and DecodeMap with it, never write the parsed
// tree, which the observer may read (Served.Arguments) while a task's
// handler decodes its params; what has no number is not copied.
func TestPlainLeavesTheTree(t *testing.T) {
	const doc = `{"n":1,"deep":{"m":[2,{"k":3}]},"s":"x","list":["a"]}`
	tree, _ := jsontree.Parse([]byte(doc))
	pristine, _ := jsontree.Parse([]byte(doc))
	obj, err := codec.DecodeMap(tree, 0, codec.DecodePlain)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(tree, pristine) {
		t.Fatalf("the tree was written: %#v", tree)
	}
	want := map[string]any{"n": 1.0, "deep": map[string]any{"m": []any{2.0, map[string]any{"k": 3.0}}}, "s": "x", "list": []any{"a"}}
	if !reflect.DeepEqual(obj, want) {
		t.Fatalf("DecodeMap = %#v", obj)
	}
	obj["added"] = true
	if _, ok := tree.(map[string]any)["added"]; ok {
		t.Error("the decoded object is the tree's: a handler's change shows in it")
	}
	list := tree.(map[string]any)["list"].([]any)
	if got := codec.Plain(list).([]any); &got[0] != &list[0] {
		t.Error("an array without numbers was copied")
	}
}
