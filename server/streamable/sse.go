package streamable

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// errStreamClosed is returned by writes after a stream ended.
var errStreamClosed = errors.New("streamable: stream closed")

// sseWriter writes server-sent events on one HTTP response.
type sseWriter struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool
}

func newSSEWriter(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

// start writes the headers of an event stream. They go out with the first
// flush: a quick call then costs one write, not three.
func (s *sseWriter) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
}

// write writes b, flushing it to the client unless buffered is set.
func (s *sseWriter) write(b []byte, buffered ...bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if _, err := s.w.Write(b); err != nil {
		s.closed = true
		return err
	}
	if len(buffered) > 0 && buffered[0] {
		return nil
	}
	if err := s.rc.Flush(); err != nil {
		s.closed = true
		return err
	}
	return nil
}

// flush sends what is buffered.
func (s *sseWriter) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.rc.Flush() != nil {
		s.closed = true
	}
}

// event writes one message as a "message" event with id.
func (s *sseWriter) event(id string, msg []byte) error { return s.eventBuffered(id, msg, false) }

// eventBuffered writes an event, leaving it in the buffer when buffered is
// set: the last event of a response goes out with the end of the response.
func (s *sseWriter) eventBuffered(id string, msg []byte, buffered bool) error {
	buf := make([]byte, 0, len(msg)+len(id)+32)
	if id != "" {
		buf = append(append(append(buf, "id: "...), id...), '\n')
	}
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	return s.write(buf, buffered)
}

// prime sends an event with an id and empty data, so that the client has a
// Last-Event-ID from the start, and how long to wait before it reconnects.
func (s *sseWriter) prime(id string, retryMs int) error {
	return s.write([]byte(fmt.Sprintf("id: %s\nretry: %d\ndata:\n\n", id, retryMs)), true)
}

// keepAlive writes an SSE comment, which clients ignore.
func (s *sseWriter) keepAlive() error { return s.write([]byte(": keepalive\n\n")) }

// close marks the writer ended; later writes fail.
func (s *sseWriter) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
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

func newLazySSE(w http.ResponseWriter) *lazySSE { return &lazySSE{sseWriter: newSSEWriter(w)} }

func (l *lazySSE) Send(msg []byte) error {
	l.once.Do(func() {
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if !closed {
			l.start()
			l.on = true
		}
	})
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
	w    *sseWriter
	done bool

	closeOnce sync.Once
	closeReq  chan struct{} // the method asked to end the response early
	finished  chan struct{} // no more events will come
}

func (h *Handler) newEventStream(session string) *eventStream {
	es := &eventStream{
		h: h, session: session, name: strconv.FormatInt(h.streams.Add(1), 36),
		closeReq: make(chan struct{}), finished: make(chan struct{}),
	}
	h.live.Store(es.name, es)
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
	id, err := es.h.cfg.store.Append(es.session, es.name, msg)
	if err != nil {
		return err
	}
	if es.w != nil && es.w.eventBuffered(id, msg, last) != nil {
		es.w = nil // the client is gone; the event waits in the store
	}
	return nil
}

// attach makes w the response that carries the stream, after a priming
// event.
func (es *eventStream) attach(w *sseWriter, retryMs int, prime bool) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.w = w
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
		es.w = nil
	}
	es.mu.Unlock()
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

// finish ends the stream: no more events.
func (es *eventStream) finish() {
	es.mu.Lock()
	if es.done {
		es.mu.Unlock()
		return
	}
	es.done = true
	es.w = nil
	es.mu.Unlock()
	close(es.finished)
	es.h.live.Delete(es.name)
}
