package core

import (
	"sync"
	"sync/atomic"
	"time"
)

// Output accounts what one stream or socket holds for its client: the
// bytes of messages handed to it and not yet written. A transport takes
// before it writes a message and gives back once the write ended, well or
// not. Past the per-stream bound a message waits, in order, for the ones
// before it to be written (backpressure: a client that reads slowly slows
// its own answers down); a client that does not read at all stalls only
// itself, as nothing it holds is written for the whole wait. Every byte
// handed to a stream, waiting or being written, counts against the total
// of the process; past it the streams holding the most are closed.
type Output struct {
	b        *outputBudget
	pending  atomic.Int64 // every byte handed to the stream and not yet done
	overflow func()
	once     sync.Once
	doomed   atomic.Bool // overflow was called: its bytes are on their way back

	mu      sync.Mutex
	active  int64         // bytes admitted: being written or about to be
	waiting []*waiter     // in arrival order
	changed chan struct{} // closed when active bytes are given back or the head changes
}

type waiter struct{ n int64 }

// outputBudget is the process-wide account of every Output.
type outputBudget struct {
	perStream int64
	limit     int64
	total     atomic.Int64

	mu   sync.Mutex
	open map[*Output]struct{}
}

func newOutputBudget(perStream, limit int64) *outputBudget {
	return &outputBudget{perStream: perStream, limit: limit, open: map[*Output]struct{}{}}
}

// NewOutput opens the account of a stream; overflow is called (once, and
// it must not block) when the stream is to be closed because the process
// is over its total. Release it with Close when the stream ends.
func (s *Server) NewOutput(overflow func()) *Output {
	o := &Output{b: s.output, overflow: overflow}
	s.output.mu.Lock()
	s.output.open[o] = struct{}{}
	s.output.mu.Unlock()
	return o
}

// Take accounts n bytes about to be written. Past the per-stream bound it
// waits, behind the messages that came before, until the stream has
// written enough of what it holds; it gives up when nothing was written
// for wait, or when dead is closed. It reports false when the message is
// not to be written: the stream is stalled (the caller closes it), or it
// holds the most of a process over its total. A message is always let
// through when the stream has nothing else in progress, so that one large
// answer can still go out.
func (o *Output) Take(n int, wait time.Duration, dead <-chan struct{}) bool {
	if o == nil {
		return true
	}
	b := o.b
	o.pending.Add(int64(n))
	if total := b.total.Add(int64(n)); b.limit > 0 && total > b.limit && !b.shed(o, total-b.limit) {
		o.pending.Add(-int64(n))
		b.total.Add(-int64(n))
		return false
	}
	o.mu.Lock()
	if len(o.waiting) == 0 && o.fitsLocked(int64(n)) { // nobody in line: no waiter to queue
		o.active += int64(n)
		o.mu.Unlock()
		return true
	}
	w := &waiter{n: int64(n)}
	o.waiting = append(o.waiting, w)
	var timer *time.Timer
	for {
		if o.waiting[0] == w && o.fitsLocked(w.n) {
			o.waiting = o.waiting[1:]
			o.active += w.n
			o.signalLocked() // the next in line may fit too
			o.mu.Unlock()
			return true
		}
		if o.changed == nil {
			o.changed = make(chan struct{})
		}
		changed := o.changed
		o.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-changed:
			timer.Reset(wait) // something was written: the wait starts again (Go 1.23 timers: no stale tick)
			o.mu.Lock()
			continue
		case <-timer.C:
		case <-dead:
		}
		o.mu.Lock()
		for i, x := range o.waiting {
			if x == w {
				o.waiting = append(o.waiting[:i:i], o.waiting[i+1:]...)
				break
			}
		}
		o.signalLocked()
		o.mu.Unlock()
		o.pending.Add(-int64(n))
		b.total.Add(-int64(n))
		return false
	}
}

// Backlogged reports whether messages wait for the stream to take what it
// holds: a transport can refuse more work for it until it drains.
func (o *Output) Backlogged() bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.waiting) > 0
}

// fitsLocked reports whether n more bytes may be in progress: always when
// nothing is. Called with o.mu held.
func (o *Output) fitsLocked(n int64) bool {
	return o.b.perStream <= 0 || o.active == 0 || o.active+n <= o.b.perStream
}

// signalLocked wakes the waiters. Called with o.mu held.
func (o *Output) signalLocked() {
	if o.changed != nil {
		close(o.changed)
		o.changed = nil
	}
}

// Give accounts n bytes that were written, or never will be, after a Take
// that reported true.
func (o *Output) Give(n int) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.active -= int64(n)
	o.signalLocked()
	o.mu.Unlock()
	o.pending.Add(-int64(n))
	o.b.total.Add(-int64(n))
}

// Close ends the account. Bytes still held are given back by their
// writers.
func (o *Output) Close() {
	if o == nil {
		return
	}
	o.b.mu.Lock()
	delete(o.b.open, o)
	o.b.mu.Unlock()
}

// shed closes the streams holding the most, not already closing, until
// what they hold covers excess; it reports false when o itself is the one
// to go (or nothing else can).
func (b *outputBudget) shed(o *Output, excess int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for x := range b.open { // what closing streams hold is on its way back
		if x.doomed.Load() {
			excess -= x.pending.Load()
		}
	}
	for excess > 0 {
		var victim *Output
		var most int64
		for x := range b.open {
			if h := x.pending.Load(); h > most && !x.doomed.Load() {
				victim, most = x, h
			}
		}
		if victim == nil || victim == o {
			return false
		}
		victim.doomed.Store(true)
		victim.once.Do(victim.overflow) // its bytes come back as its writes fail
		excess -= most
	}
	return true
}

// OutputHeld is the number of bytes every stream of the server holds now
// for its client.
func (s *Server) OutputHeld() int64 { return s.output.total.Load() }
