package observe

import (
	"strconv"
	"testing"

	"github.com/mcpstack/mcpstack/internal/sessionid"
)

// A session's digest is made once and forgotten when it ends; sessions
// whose end never comes cannot grow the memory past its bound.
func TestDigests(t *testing.T) {
	var d digests
	if got, want := d.of("s1"), sessionid.Digest("s1"); got != want {
		t.Fatalf("digest %q, want %q", got, want)
	}
	d.of("s1")
	if n := d.n.Load(); n != 1 {
		t.Errorf("%d remembered after two requests of one session, want 1", n)
	}
	d.forget("s1")
	if n := d.n.Load(); n != 0 {
		t.Errorf("%d remembered after the session ended, want 0", n)
	}
	for i := range maxDigests + 10 {
		d.of(strconv.Itoa(i))
	}
	if n := d.n.Load(); n > maxDigests {
		t.Errorf("%d remembered, want at most %d", n, maxDigests)
	}
}

// An ended session's id is not kept, in the map or the recent slots.
func TestDigestsForget(t *testing.T) {
	var d digests
	d.of("session-1")
	d.forget("session-1")
	if e := d.slot("session-1").Load(); e != nil {
		t.Errorf("the recent slot still holds %q after forget", e.id)
	}
	if m := d.m.Load(); m != nil {
		if _, ok := m.Load("session-1"); ok {
			t.Error("the map still holds the id after forget")
		}
	}
}
