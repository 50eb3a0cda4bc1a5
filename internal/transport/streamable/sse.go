package streamable

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/httpx"
)

// errStreamClosed is returned by writes after a stream ended.
var errStreamClosed = httpx.ErrStreamClosed

// sseWriter writes server-sent events on one HTTP response, with a write
// deadline and its own account of unsent bytes (a client that does not
// read has its response aborted; the events wait in the event store).
type sseWriter struct {
	*httpx.EventWriter
	out *core.Output
}

func (h *Handler) newSSEWriter(w http.ResponseWriter, r *http.Request) *sseWriter {
	sw := &sseWriter{}
	sw.out = h.srv.NewOutput(func() { sw.Abort() })
	sw.EventWriter = httpx.NewEventWriter(w, r, h.cfg.writeTimeout, sw.out)
	return sw
}

// event writes one message as a "message" event with id.
func (s *sseWriter) event(id string, msg []byte) error { return s.eventBuffered(id, msg, false) }

// eventBuffered writes an event, leaving it in the buffer when buffered is
// set: the last event of a response goes out with the end of the response.
func (s *sseWriter) eventBuffered(id string, msg []byte, buffered bool) error {
	return s.Event(id, "message", msg, buffered)
}

// prime sends an event with an id and empty data, so that the client has a
// Last-Event-ID from the start, and how long to wait before it reconnects.
func (s *sseWriter) prime(id string, retryMs int) error {
	return s.Write([]byte(fmt.Sprintf("id: %s\nretry: %d\ndata:\n\n", id, retryMs)), true)
}

// close ends the writer at the end of its handler; later writes fail.
func (s *sseWriter) close() {
	s.Close()
	s.out.Close()
}

// lazySSE is the event stream of a stateless request: its headers are
// written with its first message, so that a request can still be answered
// with a plain JSON error and its status until then. Stateless streams are
// not resumable, so events carry no ids.
type lazySSE struct {
	*sseWriter
	once sync.Once
	on   bool
}

func (h *Handler) newLazySSE(w http.ResponseWriter, r *http.Request) *lazySSE {
	return &lazySSE{sseWriter: h.newSSEWriter(w, r)}
}

func (l *lazySSE) Send(msg []byte) error {
	l.once.Do(func() {
		if !l.Closed() {
			l.Start()
			l.on = true
		}
	})
	if !l.on {
		// The request was answered as JSON (started): a message sent
		// after, by a goroutine the method left running, must not write
		// into that answer, nor race it for the headers.
		return errStreamClosed
	}
	return l.event("", msg)
}

func (l *lazySSE) started() bool {
	l.once.Do(func() {}) // no stream from here on
	return l.on
}

// eventStream is one resumable stream of a session: a POST's call, or the
// GET stream. Its events go to the event store first, then to the response
// attached to it, if any; it outlives the responses, so that a client that
// lost one resumes with Last-Event-ID on a GET and misses nothing.
type eventStream struct {
	h       *Handler
	session string
	name    string

	mu   sync.Mutex
	w    *sseWriter                // the response carrying the stream, if any
	cur  atomic.Pointer[sseWriter] // w, readable without mu: to abort a blocked write
	done bool

	closeOnce sync.Once
	closeReq  chan struct{} // the method asked to end the response early
	finished  chan struct{} // no more events will come
	release   func(bool)    // a StreamHolder's, when the store holds the stream
	answered  bool          // its last event, the answer, is stored
}

// newEventStream opens a stream of session, named mark (listenMark for
// the GET stream, else "") and this handler's next name.
func (h *Handler) newEventStream(session, mark string) *eventStream {
	es := &eventStream{
		h: h, session: session, name: mark + h.epoch + strconv.FormatInt(h.streams.Add(1), 36),
		closeReq: make(chan struct{}), finished: make(chan struct{}),
	}
	h.live.Store(es.name, es)
	// A session that ended meanwhile has had its streams ended already
	// (it is unlisted before): this one ends at once, storing nothing.
	if _, ok := h.srv.Session(session); !ok {
		es.finish()
	}
	return es
}

// Send stores a message and writes it to the attached response.
func (es *eventStream) Send(msg []byte) error { return es.send(msg, false) }

// sendLast stores the last message of a stream and leaves it in the
// response's buffer, which the end of the response flushes.
func (es *eventStream) sendLast(msg []byte) error { return es.send(msg, true) }

func (es *eventStream) send(msg []byte, last bool) error {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.done {
		return errStreamClosed
	}
	var id string
	var err error
	if holder, ok := es.h.cfg.store.(StreamHolder); ok && last && es.release != nil {
		id, err = holder.AppendLast(es.session, es.name, msg)
		es.answered = err == nil
	} else {
		id, err = es.h.cfg.store.Append(es.session, es.name, msg)
	}
	if err != nil {
		return err
	}
	if es.w != nil && es.w.eventBuffered(id, msg, last) != nil {
		es.setWriter(nil) // the client is gone or does not read; the event waits in the store
	}
	return nil
}

// setWriter changes the response carrying the stream. Called with es.mu held.
func (es *eventStream) setWriter(w *sseWriter) {
	es.w = w
	es.cur.Store(w)
}

// attach makes w the response that carries the stream, after a priming
// event.
func (es *eventStream) attach(w *sseWriter, retryMs int, prime bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.attachLocked(w, retryMs, prime)
}

// attachIfFree is attach for a GET: it starts w and takes the stream only
// when no other response carries it, checked and taken under one lock, so
// that of two GETs at once one gets the stream and the other can be
// refused before its headers go out.
func (es *eventStream) attachIfFree(w *sseWriter, retryMs int, prime bool) bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	if es.w != nil {
		return false
	}
	w.Start()
	es.attachLocked(w, retryMs, prime)
	return true
}

func (es *eventStream) attachLocked(w *sseWriter, retryMs int, prime bool) {
	if es.done {
		return // the session ended: nothing is stored for it any more
	}
	es.setWriter(w)
	if prime {
		if id, err := es.h.cfg.store.Append(es.session, es.name, nil); err == nil {
			_ = w.prime(id, retryMs)
		}
	}
}

// detach leaves the stream without a response; events are only stored.
func (es *eventStream) detach(w *sseWriter) {
	es.mu.Lock()
	if es.w == w {
		es.setWriter(nil)
	}
	es.mu.Unlock()
}

// ended reports whether the stream has finished (its session ended).
func (es *eventStream) ended() bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.done
}

// attached reports whether a response carries the stream now.
func (es *eventStream) attached() bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	return es.w != nil
}

// CloseStream ends the response carrying a call before the call ends
// (SEP-1699 polling): the client resumes with Last-Event-ID.
func (es *eventStream) CloseStream() { es.closeOnce.Do(func() { close(es.closeReq) }) }

// abort ends the stream at once, when its session ended: a write blocked on
// a client that does not read fails now instead of at its deadline.
func (es *eventStream) abort() {
	if w := es.cur.Load(); w != nil {
		w.Abort()
	}
	es.finish()
}

// finish ends the stream: no more events.
func (es *eventStream) finish() {
	es.mu.Lock()
	if es.done {
		es.mu.Unlock()
		return
	}
	es.done = true
	es.setWriter(nil)
	release, answered := es.release, es.answered
	es.mu.Unlock()
	close(es.finished)
	es.h.live.Delete(es.name)
	if release != nil {
		release(answered)
	}
}
