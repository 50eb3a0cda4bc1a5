package server

import (
	"sync"
	"sync/atomic"
)

// Output accounts what one stream or socket holds for its client: the
// bytes of messages handed to it and not yet written. A transport takes
// before it writes a message and gives back once the write ended, well or
// not. It is how a client that does not read stalls only itself: past the
// per-stream bound its own stream is closed, past the total of the process
// the stream holding the most is.
type Output struct {
	b        *outputBudget
	held     atomic.Int64
	overflow func()
	once     sync.Once
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

// Take accounts n bytes about to be written. It reports false when the
// stream is over its bound, and the caller then closes it: a message is
// always let through when the stream holds nothing else, so that one large
// answer can still go out.
func (o *Output) Take(n int) bool {
	if o == nil {
		return true
	}
	b := o.b
	held := o.held.Add(int64(n))
	total := b.total.Add(int64(n))
	if b.perStream > 0 && held > b.perStream && held != int64(n) {
		o.Give(n)
		return false
	}
	if b.limit > 0 && total > b.limit {
		victim := b.largest()
		if victim == nil || victim == o {
			o.Give(n)
			return false
		}
		victim.once.Do(victim.overflow) // its bytes come back as its writes fail
	}
	return true
}

// Give accounts n bytes that were written, or never will be.
func (o *Output) Give(n int) {
	if o == nil {
		return
	}
	o.held.Add(-int64(n))
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
		if h := o.held.Load(); h > most {
			best, most = o, h
		}
	}
	return best
}

// OutputHeld is the number of bytes every stream of the server holds now
// for its client.
func (s *Server) OutputHeld() int64 { return s.output.total.Load() }
