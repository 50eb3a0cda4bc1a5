package streamable

import (
	"sync"
	"time"
)

// primer starts the streams of the calls that run primeDelay: their
// headers and priming event go out, so that the client can resume. One
// goroutine ticks every primeDelay/2 while calls wait, rather than a timer
// for each call, which cost a quick call about a thousand instructions to
// make and stop. A call is primed at the third tick after it was listed,
// from primeDelay to 1.5 primeDelay in, less the difference between the
// ticks' delays (a tick is counted when the goroutine runs, not when it
// fires): reading the clock for each call would cost what the timer did.
// The goroutine ends after primeLinger ticks in a row with no call
// waiting: a client that calls one after another, each quicker than a
// tick, would otherwise start a goroutine and a ticker for every call.
type primer struct {
	fire func(*callStream) // (*callStream).prime; set once, before use

	mu      sync.Mutex
	calls   []*callStream // waiting; each knows its index (primeSlot)
	tick    uint64
	running bool
}

// primeTicks is how many ticks a call waits: the first can come at once.
const primeTicks = 3

// primeLinger is how many ticks in a row with no call waiting end the
// goroutine: 100 ms.
const primeLinger = 20

// add lists a call that starts now.
func (p *primer) add(cs *callStream) {
	p.mu.Lock()
	cs.primeSlot, cs.primeTick = len(p.calls), p.tick
	p.calls = append(p.calls, cs)
	if !p.running {
		p.running = true
		go p.run()
	}
	p.mu.Unlock()
}

// remove takes a call off the list, if it is still on it.
func (p *primer) remove(cs *callStream) {
	p.mu.Lock()
	p.removeLocked(cs)
	p.mu.Unlock()
}

func (p *primer) removeLocked(cs *callStream) {
	i := cs.primeSlot
	if i < 0 {
		return
	}
	last := len(p.calls) - 1
	p.calls[i] = p.calls[last]
	p.calls[i].primeSlot = i
	p.calls[last] = nil
	p.calls = p.calls[:last]
	cs.primeSlot = -1
}

func (p *primer) run() {
	t := time.NewTicker(primeDelay / 2)
	defer t.Stop()
	var due []*callStream
	empty := 0 // ticks in a row with no call waiting
	for range t.C {
		p.mu.Lock()
		p.tick++
		due = due[:0]
		for i := 0; i < len(p.calls); {
			cs := p.calls[i]
			if p.tick-cs.primeTick < primeTicks {
				i++
				continue
			}
			p.removeLocked(cs) // the last call moves to i
			due = append(due, cs)
		}
		if len(p.calls) == 0 && len(due) == 0 {
			empty++
		} else {
			empty = 0
		}
		idle := empty >= primeLinger
		if idle {
			p.running = false
		}
		p.mu.Unlock()
		for i, cs := range due {
			// Each on its own goroutine, as a timer's would run: priming
			// flushes the response, which waits while its client does not
			// read, and one such client must not hold up the others.
			go p.fire(cs)
			due[i] = nil
		}
		if idle {
			return
		}
	}
}
