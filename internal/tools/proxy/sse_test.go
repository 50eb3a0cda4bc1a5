package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/sse"
)

type event struct{ name, data string }

// split runs a stream through an eventSplitter, pushed in pieces of n
// bytes (0: whole).
func split(stream string, n, max int) []event {
	s := eventSplitter{max: max}
	var got []event
	record := func(name string, data []byte) { got = append(got, event{name, string(data)}) }
	b := []byte(stream)
	for len(b) > 0 {
		k := len(b)
		if n > 0 && n < k {
			k = n
		}
		s.write(b[:k], record)
		b = b[k:]
	}
	return got
}

func TestEventSplitter(t *testing.T) {
	for _, tc := range []struct {
		name, stream string
		want         []event
	}{
		{"LF", "data: {\"a\":1}\n\n", []event{{"", `{"a":1}`}}},
		{"CRLF and a keep-alive", ": ping\r\n\r\ndata: 1\r\n\r\n", []event{{"", "1"}}},
		{"CR alone", "data: 1\r\rdata: 2\r\r", []event{{"", "1"}, {"", "2"}}},
		{"mixed endings", "data: 1\r\n\ndata: 2\n\r\n", []event{{"", "1"}, {"", "2"}}},
		{"lines joined", "event: message\ndata: {\"a\":\ndata: 1}\n\n", []event{{"message", "{\"a\":\n1}"}}},
		{"no space, one space dropped", "data:x\n\ndata:  y\n\n", []event{{"", "x"}, {"", "y"}}},
		{"a priming event", "id: 1\ndata: \n\nid: 2\ndata: 3\n\n", []event{{"", "3"}}},
		{"endpoint", "event: endpoint\ndata: /messages?sessionId=a\n\n", []event{{"endpoint", "/messages?sessionId=a"}}},
		{"a byte order mark", "\xef\xbb\xbfdata: 1\n\n", []event{{"", "1"}}},
		{"not closed", "data: 1\n\ndata: 2\n", []event{{"", "1"}}},
		{"over the bound, then on", "data: " + strings.Repeat("x", 40) + "\ndata: y\n\ndata: z\n\n", []event{{"", "z"}}},
		{"data over the bound in lines", "data: 0123456789\ndata: 0123456789\ndata: 0123456789\ndata: 0123456789\n\ndata: ok\n\n", []event{{"", "ok"}}},
	} {
		for _, n := range []int{0, 1, 3} {
			if got := split(tc.stream, n, 32); !equalEvents(got, tc.want) {
				t.Errorf("%s, pushed %d at a time: %q, want %q", tc.name, n, got, tc.want)
			}
		}
	}
}

func equalEvents(a, b []event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzEventSplitter holds the proxy's push parser to internal/sse's pull
// parser (the client's): the same stream gives the same events, pushed
// whole or a byte at a time.
func FuzzEventSplitter(f *testing.F) {
	for _, s := range []string{"data: 1\n\n", ": c\r\n\r\ndata: a\r\ndata: b\r\n\r\n", "event: e\rdata: x\r\r", "\xef\xbb\xbfdata:1\n\n", "id: 1\ndata:\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, stream string) {
		var want []event
		r := sse.NewReader(strings.NewReader(stream), 1<<16)
		for {
			ev, err := r.Next()
			if err != nil {
				break
			}
			if d := bytes.TrimSpace(ev.Data); len(d) > 0 {
				want = append(want, event{ev.Type, string(d)})
			}
		}
		for _, n := range []int{0, 1} {
			if got := split(stream, n, 1<<16); !equalEvents(got, want) {
				t.Fatalf("pushed %d at a time: %q; internal/sse reads %q", n, got, want)
			}
		}
	})
}
