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
		// Kept: the name in prose, or as a value, is no member.
		{"prose", "wrong password, try again", nil, "wrong password, try again"},
		{"the name as a value", `{"field":"password","ok":false}`, nil, `{"field":"password","ok":false}`},
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
