package proxy

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/server"
)

// --redact fails closed on strings that carry JSON in a looser sense: a
// sequence of values (JSON Lines) or a JSON string literal is read and
// masked member by member; a string that names a redacted member but does
// not read as JSON (text around it, a fenced block, a fragment, a Python
// dict) is masked whole. The secret is never in the recording; text that
// names no member between quotes is kept.
func TestRedactFailsClosed(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		secrets    []string
		want       string // the text recorded
	}{
		{"JSON Lines", "{\"password\":\"SECRET-1\"}\n{\"password\":\"SECRET-2\"}", []string{"SECRET-1", "SECRET-2"},
			"{\"password\":\"[redacted]\"}\n{\"password\":\"[redacted]\"}"},
		{"JSON Lines, any case, space kept", " {\"PassWord\":\"SECRET-1\",\"user\":\"u\"}\r\n\r\n[1,{\"PASSWORD\":\"SECRET-2\"}] ", []string{"SECRET-1", "SECRET-2"},
			" {\"PassWord\":\"[redacted]\",\"user\":\"u\"}\r\n\r\n[1,{\"PASSWORD\":\"[redacted]\"}] "},
		{"a JSON string literal", `"{\"password\":\"SECRET-3\"}"`, []string{"SECRET-3"}, `"{\"password\":\"[redacted]\"}"`},
		{"a string literal holding JSON Lines", `"{\"password\":\"SECRET-3\"}\n{\"password\":\"SECRET-4\"}"`, []string{"SECRET-3", "SECRET-4"},
			`"{\"password\":\"[redacted]\"}\n{\"password\":\"[redacted]\"}"`},
		{"trailing text", `{"password":"SECRET-4"} trailing`, []string{"SECRET-4"}, redacted},
		{"text before", `result: {"password":"SECRET-5"}`, []string{"SECRET-5"}, redacted},
		{"a fenced block", "```json\n{\"password\":\"SECRET-6\"}\n```", []string{"SECRET-6"}, redacted},
		{"escaped JSON in text", `log: {\"password\":\"SECRET-7\"}`, []string{"SECRET-7"}, redacted},
		{"a member without its object", `"password": "SECRET-8"`, []string{"SECRET-8"}, redacted},
		{"a Python dict", `{'password': 'SECRET-9'}`, []string{"SECRET-9"}, redacted},
		{"a unicode-escaped name in text", `see {"pass\u0077ord":"SECRET-10"} here`, []string{"SECRET-10"}, redacted},
		{"a broken string literal", `"{\"password\":\"SECRET-11\"}`, []string{"SECRET-11"}, redacted},
		// A name whose escape is itself escaped (its u, its hex digits):
		// read level by level, exactly, wherever it is.
		{"an escaped escape's u", `"{\"pass\\\u00750077ord\":\"SECRET-12\"}"`, []string{"SECRET-12"}, `"{\"password\":\"[redacted]\"}"`},
		{"an escaped escape's hex digits", `"{\"pass\\u00\u00377ord\":\"SECRET-13\"}"`, []string{"SECRET-13"}, `"{\"password\":\"[redacted]\"}"`},
		{"an escaped escape, three levels", `"\"{\\\"pass\\\\u00\\u00\u003377ord\\\":\\\"SECRET-14\\\"}\""`, []string{"SECRET-14"},
			`"\"{\\\"password\\\":\\\"[redacted]\\\"}\""`},
		{"an escaped escape in text", `see {\"pass\\u00\u00377ord\":\"SECRET-15\"}`, []string{"SECRET-15"}, redacted},
		{"an escaped escape's u in text", `log: "{\"pass\\\u00750077ord\":\"SECRET-16\"}"`, []string{"SECRET-16"}, redacted},
		{"a name escaped eight times in text", escapedN(`see {"password":"SECRET-17"}`, 8), []string{"SECRET-17"}, redacted},
		{"a name escaped past the depth looked at", escapedN(`see {"password":"SECRET-18"}`, maxEmbedded+1), []string{"SECRET-18"}, redacted},
		{"a Python repr of a dict", `'{\'password\': "SECRET-19", \'q\': \'say "hi"\'}'`, []string{"SECRET-19"}, redacted},
		// Kept: the name in prose, or as a value, is no member.
		{"prose", "wrong password, try again", nil, "wrong password, try again"},
		{"the name as a value", `{"field":"password","ok":false}`, nil, `{"field":"password","ok":false}`},
		{"escapes, and no name", `C:\\new\\path: {\"user\":\"pass\\u0077\"}`, nil, `C:\\new\\path: {\"user\":\"pass\\u0077\"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
				"content": []any{map[string]any{"type": "text", "text": tc.text}}}})
			var rec bytes.Buffer
			tp, _ := newTap(&rec, false, io.Discard, "password")
			tp.message("s", server.ServerToClient, msg)
			if _, err := tp.end(); err != nil {
				t.Fatal(err)
			}
			for _, secret := range tc.secrets {
				if strings.Contains(rec.String(), secret) {
					t.Errorf("%s is in the recording:\n%s", secret, rec.String())
				}
			}
			var got struct {
				Result struct {
					Content []struct{ Text string }
				}
			}
			if err := json.Unmarshal(tp.masked(msg), &got); err != nil || len(got.Result.Content) != 1 || got.Result.Content[0].Text != tc.want {
				t.Errorf("masked text %+v (%v), want %q", got, err, tc.want)
			}
		})
	}
}

// escapedN is s written as the text of a JSON string n times over, the
// quotes around each left out.
func escapedN(s string, n int) string {
	for range n {
		b, _ := json.Marshal(s)
		s = string(b[1 : len(b)-1])
	}
	return s
}

// A masked message that cannot be written again is recorded as the
// placeholder, never as it came.
func TestRedactFailsClosedWhenItCannotEncode(t *testing.T) {
	tp, _ := newTap(nil, false, io.Discard, "password")
	defer func(e func(any) ([]byte, error)) { encodeJSON = e }(encodeJSON)
	encodeJSON = func(any) ([]byte, error) { return nil, errors.New("no") }
	for _, msg := range []string{`{"password":"SECRET-1"}`, `{"text":"{\"password\":\"SECRET-2\"}"}`} {
		if got := string(tp.masked([]byte(msg))); strings.Contains(got, "SECRET") || !strings.HasPrefix(got, redacted) {
			t.Errorf("masked(%s) = %s, want the placeholder", msg, got)
		}
	}
}

// unescapeJSON undoes one level of escapes as encoding/json does, and
// keeps a backslash that begins no escape.
func TestRedactUnescapeJSON(t *testing.T) {
	for _, in := range []string{
		`plain`, `\"\\\/\b\f\n\r\t`, `pass\u0077ord`, `\u00E9\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00x`, `\ud83d\u0041`,
		`pass\\\u00750077ord`, `pass\\u00\u00377ord`,
	} {
		var want string
		if err := json.Unmarshal([]byte(`"`+in+`"`), &want); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := unescapeJSON(in); got != want {
			t.Errorf("unescapeJSON(%s) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		`\q\u00`:     `\q\u00`,
		`\u00zz\`:    `\u00zz\`,
		`\'p\'`:      `'p'`,
		`C:\Users\x`: `C:\Users\x`,
	} {
		if got := unescapeJSON(in); got != want {
			t.Errorf("unescapeJSON(%s) = %q, want %q", in, got, want)
		}
	}
}
