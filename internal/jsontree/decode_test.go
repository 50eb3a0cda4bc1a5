package jsontree

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type decodePoint struct {
	Lat float64 `json:"lat"`
	Lon float32 `json:"lon,omitempty"`
}

type decodeIn struct {
	City    string            `json:"city"`
	Days    int8              `json:"days,omitempty"`
	Count   uint16            `json:"count"`
	Big     int64             `json:"big"`
	OK      bool              `json:"ok"`
	Tags    []string          `json:"tags"`
	Where   *decodePoint      `json:"where"`
	Points  []decodePoint     `json:"points"`
	Labels  map[string]string `json:"labels"`
	Deep    map[string][]*int `json:"deep"`
	Skipped string            `json:"-"`
	NoTag   string
	hidden  string
}

// decodeEdge has what the review found: a json.Number field (a string
// that must be a number) and a tag encoding/json refuses.
type decodeEdge struct {
	N json.Number `json:"n"`
	A string      `json:"it's"`
}

// Types that go through encoding/json: their own unmarshalers, any,
// embedding, ",string".
type decodeOther struct {
	When  time.Time `json:"when"`
	Any   any       `json:"any"`
	Str   int       `json:"str,string"`
	Inner struct{ decodePoint }
}

// FuzzDecode holds Decode to what it stands in for, json.Unmarshal of the
// tree's encoding: the same value, or an error where that errs.
func FuzzDecode(f *testing.F) {
	for _, seed := range []string{
		`{"city":"Oslo","days":3,"count":65535,"big":-9007199254740993,"ok":true,"tags":["a",null],"where":{"lat":1.5,"lon":2},"points":[{"lat":0}],"labels":{"a":"b"},"deep":{"x":[1,null,2]},"NoTag":"n","notag":"m","hidden":"h"}`,
		`{"days":300}`, `{"days":1.0}`, `{"count":-1}`, `{"big":1e3}`, `{"city":5}`, `{"CITY":"x","city":"y"}`, `{"cıty":"x"}`, `{"where":null,"tags":null}`,
		`{"lon":1e40,"lat":1e400}`, `null`, `[]`, `{"n":"abc","A":"x"}`, `{"n":"5","it's":"y"}`, `{"n":5}`, `{"when":"2026-12-02T00:00:00Z","any":[1,{"a":2}],"str":"7"}`, `{"points":[null,{"lat":"x"}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := Parse(data)
		if err != nil {
			return
		}
		b, err := Marshal(tree)
		if err != nil {
			t.Fatal(err)
		}
		for _, typ := range []reflect.Type{reflect.TypeFor[decodeIn](), reflect.TypeFor[decodePoint](), reflect.TypeFor[decodeOther](),
			reflect.TypeFor[map[string]int](), reflect.TypeFor[[]*decodePoint](), reflect.TypeFor[string](), reflect.TypeFor[decodeEdge]()} {
			got, want := reflect.New(typ), reflect.New(typ)
			errGot, errWant := Decode(tree, got.Interface()), json.Unmarshal(b, want.Interface())
			if (errGot == nil) != (errWant == nil) {
				t.Fatalf("%s from %s: Decode says %v, encoding/json %v", typ, b, errGot, errWant)
			}
			if errGot == nil && !reflect.DeepEqual(got.Interface(), want.Interface()) {
				t.Fatalf("%s from %s:\nDecode        %#v\nencoding/json %#v", typ, b, got.Elem().Interface(), want.Elem().Interface())
			}
		}
	})
}

// The types a tool's arguments usually are take the direct path; the
// others are encoding/json's.
func TestDecodePlans(t *testing.T) {
	for typ, direct := range map[reflect.Type]bool{
		reflect.TypeFor[decodeIn]():           true,
		reflect.TypeFor[[]*decodePoint]():     true,
		reflect.TypeFor[decodeOther]():        false,
		reflect.TypeFor[map[string]any]():     false,
		reflect.TypeFor[struct{ B []byte }](): false,
	} {
		if got := planOf(typ) != nil; got != direct {
			t.Errorf("%s: direct %v, want %v", typ, got, direct)
		}
	}
}

type treeOut struct {
	Summary string            `json:"summary"`
	Days    int               `json:"days,omitempty"`
	Count   uint8             `json:"count"`
	OK      bool              `json:"ok,omitempty"`
	Tags    []string          `json:"tags"`
	Where   *decodePoint      `json:"where,omitempty"`
	Labels  map[string]string `json:"labels"`
	Deep    map[string][]*int `json:"deep,omitempty"`
	Skip    string            `json:"-"`
	NoTag   string
	hidden  string
}

// FuzzTreeOf holds TreeOf to Parse(json.Marshal(v)) on values built from
// fuzzed input.
func FuzzTreeOf(f *testing.F) {
	f.Add("Oslo", int64(3), true, []byte("a\xffb"))
	f.Add("", int64(0), false, []byte(nil))
	f.Add("\u2028<>&\"", int64(-1), true, []byte("é"))
	f.Fuzz(func(t *testing.T, s string, n int64, ok bool, raw []byte) {
		one := 1
		var tags []string
		if len(raw) > 0 {
			tags = []string{string(raw), s}
		}
		var where *decodePoint
		if ok {
			where = &decodePoint{Lat: 1}
		}
		values := []any{
			treeOut{Summary: s, Days: int(n), Count: uint8(n), OK: ok, Tags: tags, Labels: map[string]string{s: string(raw)}, Deep: map[string][]*int{"x": {&one, nil}}, NoTag: string(raw), hidden: s},
			&treeOut{Summary: string(raw)},
			[]*treeOut{nil, {Tags: []string{}}},
			map[string]int{s: int(n)},
			s, n, ok, raw, where, decodeOther{Any: s},
			map[string]int{string(raw): 1, s: 2, "a\xfe": 3, "a\xff": 4},
			decodeEdge{N: json.Number(s), A: string(raw)},
			struct {
				A string `json:"it's"` // a tag encoding/json refuses: the field's name
				B string `json:"b-c.d"`
			}{s, string(raw)},
		}
		for _, v := range values {
			got, errGot := TreeOf(v)
			data, errStd := json.Marshal(v)
			if (errGot == nil) != (errStd == nil) {
				t.Fatalf("%#v: TreeOf says %v, encoding/json %v", v, errGot, errStd)
			}
			if errStd != nil {
				continue
			}
			want, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%#v:\nTreeOf        %#v\nencoding/json %#v", v, got, want)
			}
		}
	})
}
