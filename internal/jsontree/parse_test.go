package jsontree

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseLimit(t *testing.T) {
	nest := func(n int, inner string) string { return strings.Repeat("[", n) + inner + strings.Repeat("]", n) }
	tests := []struct {
		name string
		doc  string
		deep bool
	}{
		{"at the limit", nest(4, "1"), false},
		{"one past it", nest(5, "1"), true},
		{"objects count too", `{"a":{"b":{"c":{"d":{"e":1}}}}}`, true},
		{"brackets in strings do not", nest(3, `"[[[[[[{{{{{"`), false},
		{"siblings do not add up", `[[1],[2],[3],[4],[5],[6]]`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLimit([]byte(tt.doc), 4)
			var deep *DepthError
			if got := errors.As(err, &deep); got != tt.deep {
				t.Fatalf("ParseLimit(%s, 4): %v; want a DepthError: %v", tt.doc, err, tt.deep)
			}
			if tt.deep && (deep.Limit != 4 || err.Error() != "JSON nests deeper than 4") {
				t.Errorf("error %q (limit %d)", err, deep.Limit)
			}
			_, _, _, merr := ParseMembers([]byte(tt.doc), 4, 0, nil)
			if got := errors.As(merr, &deep); got != tt.deep {
				t.Fatalf("ParseMembers(%s, 4): %v; want a DepthError: %v", tt.doc, merr, tt.deep)
			}
		})
	}
}

func TestVocabulary(t *testing.T) {
	for _, s := range []string{"jsonrpc", "2.0", "tools/call", "_meta", "notifications/initialized"} {
		w, ok := vocabulary.lookup([]byte(s))
		if !ok || w.s != s || w.v != any(s) {
			t.Errorf("%q: %+v, %v", s, w, ok)
		}
	}
	for _, s := range []string{"", "echo", "jsonrp", "jsonrpcx", "2.1", "Tools/call"} {
		if w, ok := vocabulary.lookup([]byte(s)); ok {
			t.Errorf("%q found as %q", s, w.s)
		}
	}
	tree, err := Parse([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := tree.(map[string]any)["method"]; got != "tools/call" {
		t.Errorf("method %v", got)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Parse([]byte(`{"jsonrpc":"2.0","method":"ping"}`)) }); n > 3 {
		t.Errorf("%v allocations for a message of vocabulary words only: want the map and its group", n)
	}
}

// FuzzParseMembers holds ParseMembers to ParseLimit: the same verdict, the
// same error, and an object's members make the map ParseLimit gives (the
// last of a duplicate name winning); any other document is the same value.
// With a bound on the top-level array, it refuses exactly the arrays
// longer than the bound (and a document whose error comes after the
// bound's element is refused for its length first).
func FuzzParseMembers(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"a":1,"a":2}`, `{}`, ` { } `, `{"a":{"b":{}}}`, `[{"a":1}]`, `"x"`, `1`, `null`, `{"a":1}x`, `{"a":1,}`, `{"a" 1}`,
		`{"a":1`, `{`, ``, ` `, `{"a":[[[[]]]]}`, `[1,2,3,4]`, `[1,2,3]`, `[[1,2,3,4]]`, `[1,2,3,4,x`,
	} {
		f.Add([]byte(seed), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, depth int) {
		depth %= 8
		want, wantErr := ParseLimit(data, depth)
		members, v, object, err := ParseMembers(data, depth, 0, make([]Member, 0, 2))
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("%q at depth %d: ParseMembers says %v, ParseLimit %v", data, depth, err, wantErr)
		}
		if _, _, _, lerr := ParseMembers(data, depth, 3, nil); lerr != nil {
			var long *LengthError
			switch arr, _ := want.([]any); {
			case errors.As(lerr, &long):
				if wantErr == nil && len(arr) <= 3 {
					t.Fatalf("%q: refused as longer than 3, ParseLimit gives %#v", data, want)
				}
			case wantErr == nil || lerr.Error() != wantErr.Error():
				t.Fatalf("%q at depth %d: with a bound of 3, ParseMembers says %v, ParseLimit %v", data, depth, lerr, wantErr)
			}
		} else if arr, ok := want.([]any); ok && len(arr) > 3 {
			t.Fatalf("%q: an array of %d accepted under a bound of 3", data, len(arr))
		}
		if err != nil {
			return
		}
		if !object {
			if len(members) != 0 || !reflect.DeepEqual(v, want) {
				t.Fatalf("%q: ParseMembers gives %#v (members %v), ParseLimit %#v", data, v, members, want)
			}
			return
		}
		got := map[string]any{}
		for _, m := range members {
			got[m.Name] = m.Value
		}
		if v != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: ParseMembers gives %#v, ParseLimit %#v", data, got, want)
		}
	})
}
