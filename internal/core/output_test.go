package core_test

import (
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
)

func newOutputServer(t *testing.T, perStream, total int64) *core.Server {
	srv := newServer(conformance.New(), core.WithOutputLimits(perStream, total))
	t.Cleanup(srv.Close)
	return srv
}

// take runs o.Take in the background and reports its answer on a channel.
func take(o *core.Output, n int, wait time.Duration) <-chan bool {
	ch := make(chan bool, 1)
	go func() { ch <- o.Take(n, wait, nil) }()
	return ch
}

func pending(t *testing.T, ch <-chan bool) {
	t.Helper()
	select {
	case ok := <-ch:
		t.Fatalf("Take returned %v, want it to wait", ok)
	case <-time.After(30 * time.Millisecond):
	}
}

func admitted(t *testing.T, ch <-chan bool, want bool) {
	t.Helper()
	select {
	case ok := <-ch:
		if ok != want {
			t.Fatalf("Take = %v, want %v", ok, want)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("Take still waits")
	}
}

// TestOutputInOrder: past the per-stream bound messages wait in order: a
// small one does not overtake a large one (found in review: large answers
// starved behind steady progress notifications).
func TestOutputInOrder(t *testing.T) {
	o := newOutputServer(t, 10, 0).NewOutput(func() {})
	if !o.Take(5, time.Second, nil) {
		t.Fatal("first take")
	}
	big := take(o, 9, time.Second)
	pending(t, big)
	small := take(o, 2, time.Second)
	pending(t, small) // it would fit (5+2 <= 10), but comes after big
	o.Give(5)
	admitted(t, big, true)
	pending(t, small) // 9+2 > 10: it waits for big to be written
	o.Give(9)
	admitted(t, small, true)
}

// TestOutputWaitCountsProgress: the wait times out only when nothing is
// written for that long, not when the queue is long (found in review: a
// client reading steadily lost its socket behind two large writes).
func TestOutputWaitCountsProgress(t *testing.T) {
	o := newOutputServer(t, 10, 0).NewOutput(func() {})
	o.Take(6, time.Second, nil)
	b := take(o, 6, 150*time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	c := take(o, 6, 150*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	o.Give(6) // progress: b goes, c's wait starts again
	admitted(t, b, true)
	time.Sleep(100 * time.Millisecond) // c has waited 200ms in all
	o.Give(6)
	admitted(t, c, true)
	o.Give(6)
	d := take(o, 6, 50*time.Millisecond)
	admitted(t, d, true) // nothing else in progress
	e := take(o, 6, 50*time.Millisecond)
	admitted(t, e, false) // nothing written for 50ms: stalled
}

// TestOutputTotalSheds: over the process total the stream holding the most
// is closed, once: what it holds counts as coming back, so a second stream
// is not closed for the same excess.
func TestOutputTotalSheds(t *testing.T) {
	srv := newOutputServer(t, 100, 20)
	closed := map[string]int{}
	x := srv.NewOutput(func() { closed["x"]++ })
	y := srv.NewOutput(func() { closed["y"]++ })
	z := srv.NewOutput(func() { closed["z"]++ })
	if !x.Take(15, time.Second, nil) || !y.Take(10, time.Second, nil) {
		t.Fatal("takes under the per-stream bound")
	}
	if closed["x"] != 1 || closed["y"] != 0 {
		t.Fatalf("closed %v, want x (the largest) once", closed)
	}
	if !z.Take(4, time.Second, nil) || closed["y"] != 0 || closed["z"] != 0 {
		t.Fatalf("closed %v after a small take: x's bytes are on their way back", closed)
	}
	if y.Take(30, time.Second, nil) {
		t.Error("the largest stream's own take over the total was let through")
	}
}
