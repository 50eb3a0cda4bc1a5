package core

import (
	"sync"
	"testing"
	"time"
)

// A call that waits (on its client, say) holds up no other call, idle
// workers are bounded, and they all end with the server.
func TestWorkers(t *testing.T) {
	w := newWorkers()
	w.maxIdle = 4

	release := make(chan struct{})
	var started sync.WaitGroup
	const blocked = 10
	started.Add(blocked)
	for range blocked {
		w.Go(funcTask(func() { started.Done(); <-release }))
	}
	started.Wait() // every blocked call got a goroutine: none waited for another
	ran := make(chan struct{})
	w.Go(funcTask(func() { close(ran) }))
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("a call waited behind calls that block")
	}

	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for w.idle.Load() != w.maxIdle && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := w.idle.Load(); got != w.maxIdle {
		t.Fatalf("%d idle workers after %d calls ended, want the bound, %d", got, blocked+1, w.maxIdle)
	}
	// An idle worker takes the next call.
	again := make(chan struct{})
	w.Go(funcTask(func() { close(again) }))
	<-again

	w.close()
	for w.idle.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := w.idle.Load(); got != 0 {
		t.Errorf("%d workers still idle after the server closed", got)
	}
}
