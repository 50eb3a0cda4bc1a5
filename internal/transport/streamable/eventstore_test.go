package streamable

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestMemoryEventStore(t *testing.T) {
	now := time.Unix(1000, 0)
	m := NewMemoryEventStore(4, time.Minute)
	m.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if id, _ := m.Append("s", "a", []byte(fmt.Sprint(i))); id != fmt.Sprintf("a-%d", i) {
			t.Fatalf("id %q", id)
		}
	}
	var got []string
	collect := func(id string, data []byte) error { got = append(got, id+"="+string(data)); return nil }
	if _, err := m.Replay("s", "a-0", collect); err != nil || fmt.Sprint(got) != "[a-1=1 a-2=2]" {
		t.Fatalf("replay: %v %v", got, err)
	}
	got = nil
	if _, err := m.Replay("s", "a-2", collect); err != nil || len(got) != 0 {
		t.Fatalf("replay from the last: %v %v", got, err)
	}
	for _, bad := range []string{"b-0", "a-9", "nope", "a-x"} {
		if _, err := m.Replay("s", bad, collect); !errors.Is(err, ErrUnknownEvent) {
			t.Errorf("Replay(%q) = %v, want ErrUnknownEvent", bad, err)
		}
	}
	// bound by count: 4 events per session; a-0 and a-1 fall out, so a
	// client that saw only a-0 has lost a-1
	m.Append("s", "b", []byte("x"))
	m.Append("s", "b", []byte("y"))
	m.Append("s", "b", []byte("z"))
	if _, err := m.Replay("s", "a-0", collect); !errors.Is(err, ErrEventsGone) {
		t.Errorf("after eviction: %v, want ErrEventsGone", err)
	}
	got = nil
	if _, err := m.Replay("s", "a-1", collect); err != nil || fmt.Sprint(got) != "[a-2=2]" {
		t.Errorf("from the first kept: %v %v", got, err)
	}
	// bound by age
	now = now.Add(2 * time.Minute)
	if _, err := m.Replay("s", "b-0", collect); !errors.Is(err, ErrEventsGone) {
		t.Errorf("after expiry: %v, want ErrEventsGone", err)
	}
	m.Forget("s")
	if _, err := m.Replay("s", "a-2", collect); !errors.Is(err, ErrUnknownEvent) {
		t.Errorf("after Forget: %v", err)
	}
}

// A session's GET stream keeps its numbering however many call streams
// come and go while it is quiet: the counters of emptied streams are
// forgotten past a bound, and a GET stream's were too, so its ids began
// again at 0 (a client holding an earlier one skipped the new events, or
// was told its stream never existed).
func TestQuietGetStreamKeepsItsNumbers(t *testing.T) {
	m := NewMemoryEventStore(4, time.Minute)
	get := listenMark + "g"
	for i := range 3 {
		if id, _ := m.Append("s", get, []byte(fmt.Sprint(i))); id != fmt.Sprintf("%s-%d", get, i) {
			t.Fatalf("id %q", id)
		}
	}
	for i := range 20 { // calls, each a stream of its own, push the GET stream's events out
		m.Append("s", fmt.Sprintf("call%d", i), []byte("answer"))
	}
	if _, err := m.Replay("s", get+"-2", func(string, []byte) error { return nil }); errors.Is(err, ErrUnknownEvent) {
		t.Errorf("the quiet GET stream is unknown: %v", err)
	}
	if id, _ := m.Append("s", get, []byte("next")); id != get+"-3" {
		t.Errorf("the GET stream's next event is %q, want %s-3", id, get)
	}
}
