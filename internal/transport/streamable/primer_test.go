package streamable

import (
	"sync"
	"testing"
	"time"
)

// TestPrimer: a call still listed primeDelay after it started is primed,
// once, and not long before (a tick that fired before the call was listed
// but ran after counts for it: the bound here allows for 8 ms of that); a
// call taken off the list first never is; the goroutine ends once nothing
// waits, and starts again for the next call.
func TestPrimer(t *testing.T) {
	var mu sync.Mutex
	primed := map[*callStream]time.Duration{}
	started := map[*callStream]time.Time{}
	p := &primer{fire: func(cs *callStream) {
		mu.Lock()
		defer mu.Unlock()
		if _, twice := primed[cs]; twice {
			t.Errorf("a call primed twice")
		}
		primed[cs] = time.Since(started[cs])
	}}
	add := func() *callStream {
		cs := &callStream{primeSlot: -1}
		mu.Lock()
		started[cs] = time.Now()
		mu.Unlock()
		p.add(cs)
		return cs
	}

	for round := range 2 { // the second after the goroutine has ended
		var slow, quick []*callStream
		for i := range 40 {
			if i%2 == 0 {
				slow = append(slow, add())
			} else {
				quick = append(quick, add())
			}
			time.Sleep(time.Millisecond)
		}
		for _, cs := range quick {
			p.remove(cs) // within the 40 ms some of them ran past primeDelay: those were primed
		}
		time.Sleep(2 * primeDelay)
		mu.Lock()
		for _, cs := range slow {
			took, ok := primed[cs]
			if !ok {
				t.Errorf("round %d: a call listed for %v was not primed", round, 2*primeDelay)
			} else if took < primeDelay/5 {
				t.Errorf("round %d: a call primed %v in, long before primeDelay (%v)", round, took, primeDelay)
			}
		}
		for _, cs := range quick {
			if took, ok := primed[cs]; ok && took < primeDelay/5 {
				t.Errorf("round %d: a call primed %v in, long before primeDelay", round, took)
			}
		}
		mu.Unlock()
		for _, cs := range slow {
			p.remove(cs) // primed: already off the list
		}
		deadline := time.Now().Add(5 * time.Second)
		for {
			p.mu.Lock()
			running, left := p.running, len(p.calls)
			p.mu.Unlock()
			if !running && left == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d calls listed, goroutine running %v, with nothing waiting", round, left, running)
			}
			time.Sleep(time.Millisecond)
		}
	}
}
