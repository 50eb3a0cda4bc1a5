package sse

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type wantEvent struct {
	typ, data, id string
}

func readAllEvents(r io.Reader) ([]wantEvent, error) {
	s := NewReader(r, 0)
	var got []wantEvent
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, wantEvent{ev.Type, string(ev.Data), ev.ID})
	}
}

func TestSSEReader(t *testing.T) {
	long := strings.Repeat("x", 40<<10) // longer than the bufio buffer
	tests := []struct {
		name string
		in   string
		want []wantEvent
	}{
		{"one event", "event: message\ndata: {\"a\":1}\n\n", []wantEvent{{"message", `{"a":1}`, ""}}},
		{"no event type", "data: x\n\n", []wantEvent{{"", "x", ""}}},
		{"multi-line data joined with LF", "data: {\"a\":\ndata: 1}\n\n", []wantEvent{{"", "{\"a\":\n1}", ""}}},
		{"comments are skipped", ": keep-alive\n\n: hi\ndata: x\n: between\ndata: y\n\n", []wantEvent{{"", "x\ny", ""}}},
		{"no space after colon", "data:x\n\n", []wantEvent{{"", "x", ""}}},
		{"only one leading space is dropped", "data:  x\n\n", []wantEvent{{"", " x", ""}}},
		{"CRLF line ends", "event: message\r\ndata: x\r\n\r\n", []wantEvent{{"message", "x", ""}}},
		{"lone CR line ends", "event: message\rdata: x\r\rdata: y\r\r", []wantEvent{{"message", "x", ""}, {"", "y", ""}}},
		{"CR then CRLF", "data: x\r\r\n", []wantEvent{{"", "x", ""}}},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\n", []wantEvent{{"", "a\nb\nc", ""}}},
		{"BOM at the start", "\uFEFFdata: x\n\n", []wantEvent{{"", "x", ""}}},
		{"id is kept across events", "id: 7\ndata: a\n\ndata: b\n\n", []wantEvent{{"", "a", "7"}, {"", "b", "7"}}},
		{"priming event: id and no data line is not dispatched", "id: 1-0\nretry: 2000\n\nid: 1-1\ndata: x\n\n", []wantEvent{{"", "x", "1-1"}}},
		{"priming event: empty data line is dispatched empty", "id: 1-0\nretry: 2000\ndata:\n\nid: 1-1\nevent: message\ndata: x\n\n", []wantEvent{{"", "", "1-0"}, {"message", "x", "1-1"}}},
		{"event type resets after dispatch", "event: a\ndata: 1\n\ndata: 2\n\n", []wantEvent{{"a", "1", ""}, {"", "2", ""}}},
		{"event type of an empty event is dropped", "event: a\n\ndata: 2\n\n", []wantEvent{{"", "2", ""}}},
		{"field without colon", "data\n\n", []wantEvent{{"", "", ""}}},
		{"unknown fields are ignored", "foo: bar\ndata: x\n\n", []wantEvent{{"", "x", ""}}},
		{"id with NUL is ignored", "id: a\x00b\ndata: x\n\n", []wantEvent{{"", "x", ""}}},
		{"unterminated event at the end is discarded", "data: x\n\ndata: y\n", []wantEvent{{"", "x", ""}}},
		{"unterminated line at the end is discarded", "data: x\n\ndata: y", []wantEvent{{"", "x", ""}}},
		{"line longer than the buffer", "data: " + long + "\n\n", []wantEvent{{"", long, ""}}},
		{"empty stream", "", nil},
		{"an id counts from its event's end", "id: 1\ndata: a\n\nid: 2\ndata: b\n\n", []wantEvent{{"", "a", "1"}, {"", "b", "2"}}},
	}
	for _, tt := range tests {
		for _, split := range []bool{false, true} {
			name := tt.name
			var r io.Reader = strings.NewReader(tt.in)
			if split {
				name += "/one byte at a time"
				r = iotest.OneByteReader(r)
			}
			t.Run(name, func(t *testing.T) {
				got, err := readAllEvents(r)
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events %q, want %d %q", len(got), got, len(tt.want), tt.want)
				}
				for i := range got {
					if got[i] != tt.want[i] {
						t.Errorf("event %d = %q, want %q", i, got[i], tt.want[i])
					}
				}
			})
		}
	}
}

func TestSSEReaderRetryAndReset(t *testing.T) {
	s := NewReader(strings.NewReader("retry: 1500\nretry: x\ndata: a\n\n"), 0)
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if s.Retry().Milliseconds() != 1500 {
		t.Errorf("retry = %v, want 1.5s", s.Retry())
	}
	s.Reset(strings.NewReader("data: b\n\n"))
	ev, err := s.Next()
	if err != nil || string(ev.Data) != "b" || ev.ID != "" {
		t.Errorf("after reset: %q %q, %v", ev.Data, ev.ID, err)
	}
}

// A stream that breaks off inside an event resumes before it: the id of
// an event not ended by a blank line is not the last one (the HTML
// standard sets the last event ID string at dispatch).
func TestLastIDOfBrokenEvent(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"after a whole event", "id: 1\ndata: a\n\n", "1"},
		{"priming event", "id: 0\n\n", "0"},
		{"cut after the id", "id: 1\ndata: a\n\nid: 2\n", "1"},
		{"cut inside the data", "id: 1\ndata: a\n\nid: 2\ndata: b\n", "1"},
		{"nothing whole", "id: 2\ndata: b", ""},
		{"id reset by an empty id", "id: 1\ndata: a\n\nid\ndata: b\n\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewReader(strings.NewReader(tt.in), 0)
			for {
				if _, err := s.Next(); err != nil {
					break
				}
			}
			if s.LastID() != tt.want {
				t.Errorf("LastID = %q, want %q", s.LastID(), tt.want)
			}
		})
	}
}

func TestSSEReaderError(t *testing.T) {
	boom := errors.New("boom")
	s := NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)), 0)
	if ev, err := s.Next(); err != nil || string(ev.Data) != "a" {
		t.Fatalf("first event: %q, %v", ev.Data, err)
	}
	if _, err := s.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want %v", err, boom)
	}
}

// A line or an event over the bound fails the stream instead of growing
// without end.
func TestTooLarge(t *testing.T) {
	for _, in := range []string{"data: " + strings.Repeat("x", 100) + "\n\n", strings.Repeat("data: 0123456789\n", 20) + "\n"} {
		if _, err := NewReader(strings.NewReader(in), 64).Next(); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%.20q...: %v, want ErrTooLarge", in, err)
		}
	}
	if ev, err := NewReader(strings.NewReader("data: ok\n\n"), 64).Next(); err != nil || string(ev.Data) != "ok" {
		t.Errorf("a small event: %q %v", ev.Data, err)
	}
}

// A line ended by a lone CR ends as the CR arrives: an event of CR-ended
// lines is handed out while the stream stays open, not held back until an
// LF or the stream's end (the client waited for its answer there).
func TestCREndsTheLineAtOnce(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	r := NewReader(pr, 0)
	go func() { _, _ = pw.Write([]byte("id: 7\rdata: a\rdata: b\r\r")) }()
	got := make(chan Event, 1)
	go func() {
		ev, err := r.Next()
		if err == nil {
			ev.Data = bytes.Clone(ev.Data)
			got <- ev
		}
	}()
	select {
	case ev := <-got:
		if string(ev.Data) != "a\nb" || ev.ID != "7" {
			t.Errorf("event %q id %q, want \"a\\nb\" id 7", ev.Data, ev.ID)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("an event of CR-ended lines was not handed out while its stream stayed open")
	}
	// A CRLF split across two writes is one line end, not two.
	go func() {
		_, _ = pw.Write([]byte("data: c\r"))
		time.Sleep(10 * time.Millisecond)
		_, _ = pw.Write([]byte("\ndata: d\r\n\r\n"))
	}()
	if ev, err := r.Next(); err != nil || string(ev.Data) != "c\nd" {
		t.Errorf("across a split CRLF: %q %v, want \"c\\nd\"", ev.Data, err)
	}
}
