package jsontree

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"testing"
)

func TestParse(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1} {"b":2}`, `{"a":1}x`, `nul`} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
	v, err := Parse([]byte(` {"n": 12345678901234567890} `))
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
		if got := Pointer(tc.segments...); got != tc.want {
			t.Errorf("Pointer(%q) = %q, want %q", tc.segments, got, tc.want)
		}
	}
}

// decodeStd is what Parse stands in for: encoding/json into an any, with
// UseNumber, one document and nothing after it.
func decodeStd(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// FuzzParse holds Parse to encoding/json: the same verdict, and the same
// tree where both accept.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`[1,-0,2.5e-3,1E+9,12345678901234567890,{"a":[true,false,null]},"é\u00e9\ud83d\ude00"]`,
		`{"a":1,"a":2}`, `"\ud800x"`, `"\udc00\ud800"`, "\"\xff\xfe\"", `"a\/b\\c\"d\b\f\n\r\t"`,
		`01`, `-`, `1.`, `1e`, `.5`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `"\x"`, `"\u12G4"`, "\"\x01\"", ` `, ``, `tru`, `nul`, `[`, `{"a":`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data)
		want, stdErr := decodeStd(data)
		if (err == nil) != (stdErr == nil) {
			t.Fatalf("%q: Parse says %v, encoding/json %v", data, err, stdErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: Parse gives %#v, encoding/json %#v", data, got, want)
		}
	})
}

// The messages a client reads in a -32700 error are encoding/json's.
func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{bad}`:       "invalid character 'b' looking for beginning of object key string",
		`{"a":1`:      "unexpected EOF",
		`[1 2]`:       "invalid character '2' after array element",
		`{"a":1} x`:   "invalid character after top-level value",
		`"a` + "\n\"": `invalid character '\n' in string literal`,
	} {
		if _, err := Parse([]byte(in)); err == nil || err.Error() != want {
			t.Errorf("Parse(%q) = %v, want %q", in, err, want)
		}
	}
}

// stdMarshalTree is what Marshal stands in for.
func stdMarshalTree(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// FuzzMarshal holds Marshal to encoding/json, byte for byte, on the trees
// Parse makes, and on the Go numbers and strings encoders put in trees.
func FuzzMarshal(f *testing.F) {
	for _, seed := range []string{
		`{"b":1,"a":[true,null,"x\u2028y\u0001<>&"],"c":{"z":-0.5e-7}}`, "\"\xff\"", `"\ud800"`, `12345678901234567890`, `[]`, `{}`,
	} {
		f.Add([]byte(seed), 0.0, int64(0))
	}
	f.Add([]byte(`"x"`), 1e21, int64(-7))
	f.Add([]byte(`"x"`), 1e-7, int64(1<<62))
	f.Add([]byte(`"x"`), 123.456, int64(0))
	f.Fuzz(func(t *testing.T, data []byte, fl float64, n int64) {
		tree, err := Parse(data)
		if err != nil {
			tree = string(data) // any bytes, as a string
		}
		for _, v := range []any{tree, map[string]any{"t": tree, "f": fl, "n": n, "s": string(data)}, []any{fl, float32(fl), n, int(n)}} {
			got, err := Marshal(v)
			want, stdErr := stdMarshalTree(v)
			if (err == nil) != (stdErr == nil) {
				t.Fatalf("%#v: Marshal says %v, encoding/json %v", v, err, stdErr)
			}
			if err == nil && !bytes.Equal(got, want) {
				t.Fatalf("%#v:\nMarshal       %s\nencoding/json %s", v, got, want)
			}
		}
	})
}
