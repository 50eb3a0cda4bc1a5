package app

import (
	"testing"

	"github.com/mcpstack/mcpstack/server"
)

// An app forgets the servers that closed: one served by many short-lived
// servers keeps none of them.
func TestClosedServersForgotten(t *testing.T) {
	a := New("short-lived", "1")
	for range 3 {
		server.New(a.Handler()).Close()
	}
	kept := NewServer(a)
	defer kept.Close()
	if got := a.served(); len(got) != 1 || got[0] != kept {
		t.Errorf("the app serves through %d servers, want the one open", len(got))
	}
}
