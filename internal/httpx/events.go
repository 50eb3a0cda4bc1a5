package httpx

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
)

// Errors of EventWriter's writes.
var (
	ErrStreamClosed = errors.New("httpx: event stream closed")
	// ErrOverflow: the client did not take what was written for it within
	// the write timeout, or its stream held the most of a process over its
	// output total, and the stream was closed.
	ErrOverflow = errors.New("httpx: event stream closed: the client does not read its output")
)

// DefaultWriteTimeout bounds one write to an event stream: a client that
// takes nothing for that long is dropped (at the latest after twice it).
const DefaultWriteTimeout = 10 * time.Second

// EventWriter writes server-sent events on one HTTP response. Every write
// has a deadline, what waits to be written is accounted in a
// core.Output, and Abort ends the stream at once, even while a write is
// blocked on a client that does not read: so such a client stalls only its
// own stream, and holds a bounded number of bytes.
type EventWriter struct {
	mu      sync.Mutex // serializes writes
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	out     *core.Output
	// perWrite: the response is a stream of HTTP/2 (or later), where a
	// write deadline resets the stream when it passes, writing or not. A
	// deadline is set for each write there and cleared after it, so that a
	// quiet stream lives.
	perWrite bool

	life     sync.Mutex // orders Close (the handler's end) and Abort
	armed    time.Time  // when the write deadline was last set, under life
	closed   atomic.Bool
	deadOnce sync.Once
	dead     chan struct{}
}

// NewEventWriter returns a writer on w, the response to r; out may be nil
// (no accounting), timeout <= 0 is DefaultWriteTimeout.
func NewEventWriter(w http.ResponseWriter, r *http.Request, timeout time.Duration, out *core.Output) *EventWriter {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	return &EventWriter{w: w, rc: http.NewResponseController(w), timeout: timeout, out: out, perWrite: r.ProtoMajor >= 2, dead: make(chan struct{})}
}

// Start writes the headers of an event stream. They go out with the first
// flush: a quick call then costs one write, not three.
func (e *EventWriter) Start() {
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	e.w.WriteHeader(http.StatusOK)
}

// Write writes b, and flushes it to the client unless buffered.
func (e *EventWriter) Write(b []byte, buffered bool) error {
	if e.closed.Load() {
		return ErrStreamClosed
	}
	if !e.out.Take(len(b), e.timeout, e.dead) {
		e.Abort()
		return ErrOverflow
	}
	defer e.out.Give(len(b))
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.armDeadline() {
		return ErrStreamClosed
	}
	defer e.disarm()
	if _, err := e.w.Write(b); err != nil {
		e.fail()
		return err
	}
	if buffered {
		return nil
	}
	if err := e.rc.Flush(); err != nil {
		e.fail()
		return err
	}
	return nil
}

// armDeadline gives the next write its deadline, unless the stream is
// closed: under life, so that it cannot undo the deadline of a concurrent
// Abort. Called with e.mu held.
func (e *EventWriter) armDeadline() bool {
	e.life.Lock()
	defer e.life.Unlock()
	if e.closed.Load() {
		return false
	}
	// On HTTP/1 a deadline costs a timer update: it is set twice the
	// timeout ahead and moved once the timeout has passed, so a write
	// always has between the timeout and twice it.
	now := time.Now()
	switch {
	case e.perWrite:
		_ = e.rc.SetWriteDeadline(now.Add(e.timeout))
	case now.Sub(e.armed) > e.timeout:
		_ = e.rc.SetWriteDeadline(now.Add(2 * e.timeout)) // unsupported by test recorders: no deadline there
		e.armed = now
	}
	return true
}

// disarm clears the deadline of a write that is done, on a stream where a
// deadline left set would reset it (perWrite), unless the stream has
// closed meanwhile: Abort's deadline stays. Called with e.mu held.
func (e *EventWriter) disarm() {
	if !e.perWrite {
		return
	}
	e.life.Lock()
	defer e.life.Unlock()
	if !e.closed.Load() {
		_ = e.rc.SetWriteDeadline(time.Time{})
	}
}

// Event writes one event: an id when id is not "", the event name when it
// is not "", and data, whose line breaks become separate data lines (the
// client joins them with "\n" again).
func (e *EventWriter) Event(id, name string, data []byte, buffered bool) error {
	return e.Write(AppendEvent(make([]byte, 0, len(data)+len(id)+len(name)+32), id, name, data), buffered)
}

// AppendEvent appends the text of one server-sent event to buf.
func AppendEvent(buf []byte, id, name string, data []byte) []byte {
	if id != "" {
		buf = append(append(append(buf, "id: "...), id...), '\n')
	}
	if name != "" {
		buf = append(append(append(buf, "event: "...), name...), '\n')
	}
	if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 {
		buf = append(append(append(buf, "data: "...), data...), '\n')
	} else {
		data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
		data = bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
		for line := range bytes.SplitSeq(data, []byte("\n")) {
			buf = append(append(append(buf, "data: "...), line...), '\n')
		}
	}
	return append(buf, '\n')
}

// KeepAlive writes an SSE comment, which clients ignore, so that proxies
// and the client see the stream is alive.
func (e *EventWriter) KeepAlive() error { return e.Write([]byte(": keepalive\n\n"), false) }

// Flush sends what is buffered.
func (e *EventWriter) Flush() {
	if e.closed.Load() {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.armDeadline() {
		return
	}
	defer e.disarm()
	if e.rc.Flush() != nil {
		e.fail()
	}
}

// Close marks the stream ended; later writes fail, and what is buffered
// goes out with the end of the response. The handler calls it before it
// returns, as the ResponseWriter is dead after that: it waits for a write
// in progress (bounded by its deadline), and once it returned Abort no
// longer touches the response.
func (e *EventWriter) Close() {
	e.life.Lock()
	closing := !e.closed.Load() // not aborted: Abort's deadline stays
	e.closed.Store(true)
	e.life.Unlock()
	e.mu.Lock() // waits for the write in progress
	if closing && e.perWrite {
		// What is still buffered goes out after the handler returns: it
		// has the timeout too, from after the last write (the stream's
		// end stops the timer).
		_ = e.rc.SetWriteDeadline(time.Now().Add(e.timeout))
	}
	e.mu.Unlock()
}

// Abort ends the stream now, from any goroutine: a write blocked on the
// client fails at once (its deadline moves to now), later writes fail, and
// Dead is closed. After Close it does nothing but close Dead.
func (e *EventWriter) Abort() {
	e.life.Lock()
	if !e.closed.Load() {
		e.closed.Store(true)
		_ = e.rc.SetWriteDeadline(time.Now())
	}
	e.life.Unlock()
	e.markDead()
}

// Dead is closed when the stream was aborted or a write to it failed: the
// handler holding the response can return.
func (e *EventWriter) Dead() <-chan struct{} { return e.dead }

// Closed reports whether writes fail from now on.
func (e *EventWriter) Closed() bool { return e.closed.Load() }

func (e *EventWriter) fail() {
	e.closed.Store(true)
	e.markDead()
}

func (e *EventWriter) markDead() { e.deadOnce.Do(func() { close(e.dead) }) }
