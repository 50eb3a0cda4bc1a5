package core

import (
	"context"
	"testing"
)

// TestDetachOutlivesItsParent: a detached context keeps its parent's values
// and is not cancelled with it, nor is a context derived from it.
func TestDetachOutlivesItsParent(t *testing.T) {
	type key struct{}
	parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	d := &detached{parent}
	child, stop := context.WithCancel(d)
	defer stop()
	cancel()
	if d.Err() != nil || child.Err() != nil {
		t.Fatalf("cancelled with the parent: %v, %v", d.Err(), child.Err())
	}
	if _, has := d.Deadline(); has {
		t.Error("a detached context has a deadline")
	}
	if got := child.Value(key{}); got != "v" {
		t.Errorf("value %v, want the parent's", got)
	}
	if got := testing.AllocsPerRun(100, func() { _ = child.Value(key{}) }); got != 0 {
		t.Errorf("a value lookup through it allocates %v times", got)
	}
}
