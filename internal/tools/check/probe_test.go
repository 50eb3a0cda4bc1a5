package check

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// An answer past what the check reads is reported as such, never cut
// short in silence or taken for a server that exited.
func TestAnswerTooLarge(t *testing.T) {
	huge := strings.Repeat("a", answerLimit+1)
	tests := []struct {
		name, contentType, body string
		messages                int
		tooLarge                string // words of the report; "": none
	}{
		{"JSON", "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, 1, ""},
		{"JSON array", "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, 1, ""},
		{"JSON too large", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"` + huge + `"}}`, 0, "an answer of more than 16 MiB"},
		{"event stream", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", 1, ""},
		{"event stream too large", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\ndata: " + huge + "\n\n", 1, "an answer of more than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Content-Type": {tt.contentType}}, Body: io.NopCloser(strings.NewReader(tt.body))}
			msgs, _, tooLarge := readBody(resp)
			if len(msgs) != tt.messages {
				t.Errorf("%d messages, want %d", len(msgs), tt.messages)
			}
			if tt.tooLarge == "" && tooLarge != "" || !strings.Contains(tooLarge, tt.tooLarge) {
				t.Errorf("tooLarge %q, want %q", tooLarge, tt.tooLarge)
			}
			if got := (expect{any: true}).judge(answer{status: 200, messages: msgs, tooLarge: tooLarge}); (got != "") != (tt.tooLarge != "") {
				t.Errorf("judged %q", got)
			}
		})
	}
}

// A stdio line past what the check reads ends the reading and says so.
func TestLineTooLong(t *testing.T) {
	for _, tt := range []struct {
		name    string
		input   string
		lines   int
		tooLong bool
	}{
		{"lines", "{}\n{}\n", 2, false},
		{"too long", "{}\n" + strings.Repeat("a", answerLimit+1) + "\n{}\n", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lines, tooLong := readLines(context.Background(), strings.NewReader(tt.input))
			n := 0
			for range lines {
				n++
			}
			if n != tt.lines || *tooLong != tt.tooLong {
				t.Errorf("%d lines, too long %v; want %d, %v", n, *tooLong, tt.lines, tt.tooLong)
			}
			if a := (answer{tooLarge: "x"}); exited(a) != "x" || exited(answer{}) != "the server exited" {
				t.Error("exited does not name the bound")
			}
		})
	}
}
