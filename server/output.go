package server

import (
	"sync"
	"sync/atomic"
	"time"
)

// Output accounts what one stream or socket holds for its client: the
// bytes of messages handed to it and not yet written. A transport takes
// before it writes a message and gives back once the write ended, well or
// not. Past the per-stream bound a message waits for the ones before it
// to be written (backpressure: a client that reads slowly slows its own
// answers down); a client that does not read at all stalls only itself, as
// its writes time out. Every byte handed to a stream, waiting or being
// written, counts against the total of the process; past it the stream
// holding the most is closed.
type Output struct {
	b        *outputBudget
	pending  atomic.Int64 // every byte handed to the stream and not yet done
	overflow func()
	once     sync.Once

	mu     sync.Mutex
	active int64         // bytes taken: being written or about to be
	freed  chan struct{} // closed when active bytes are given back
}

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

// Take accounts n bytes about to be written. Over the per-stream bound it
// waits until the stream has written enough of what it holds, for at most
// wait or until dead is closed; it reports false when the message is not
// to be written: the stream is stalled (the caller closes it), or it holds
// the most of a process over its total. A message is always let through
// when the stream has nothing else in progress, so that one large answer
// can still go out.
func (o *Output) Take(n int, wait time.Duration, dead <-chan struct{}) bool {
	if o == nil {
		return true
	}
	b := o.b
	o.pending.Add(int64(n))
	if total := b.total.Add(int64(n)); b.limit > 0 && total > b.limit {
		victim := b.largest()
		if victim == nil || victim == o {
			o.pending.Add(-int64(n))
			b.total.Add(-int64(n))
			return false
		}
		victim.once.Do(victim.overflow) // its bytes come back as its writes fail
	}
	var timer *time.Timer
	for {
		o.mu.Lock()
		if b.perStream <= 0 || o.active == 0 || o.active+int64(n) <= b.perStream {
			o.active += int64(n)
			o.mu.Unlock()
			return true
		}
		if o.freed == nil {
			o.freed = make(chan struct{})
		}
		freed := o.freed
		o.mu.Unlock()
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		}
		select {
		case <-freed:
			continue
		case <-timer.C:
		case <-dead:
		}
		o.pending.Add(-int64(n))
		b.total.Add(-int64(n))
		return false
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
	if o.freed != nil {
		close(o.freed)
		o.freed = nil
	}
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

// largest is the open stream holding the most bytes.
func (b *outputBudget) largest() *Output {
	b.mu.Lock()
	defer b.mu.Unlock()
	var best *Output
	var most int64
	for o := range b.open {
		if h := o.pending.Load(); h > most {
			best, most = o, h
		}
	}
	return best
}

// OutputHeld is the number of bytes every stream of the server holds now
// for its client.
func (s *Server) OutputHeld() int64 { return s.output.total.Load() }
