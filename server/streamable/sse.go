package streamable

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// errStreamClosed is returned by Send after the stream ended.
var errStreamClosed = errors.New("streamable: stream closed")

// sseStream writes server-sent events on one HTTP response. Event ids are
// "<stream>-<seq>": unique across the session's streams, and they say which
// stream an event belongs to, as 2025-11-25 asks.
type sseStream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	stream string
	seq    int
	closed bool
}

func newSSEStream(w http.ResponseWriter, stream string) *sseStream {
	return &sseStream{w: w, rc: http.NewResponseController(w), stream: stream}
}

// start writes the headers of an event stream.
func (s *sseStream) start() {
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	_ = s.rc.Flush()
}

// prime sends an event with an id and empty data, so that the client has a
// Last-Event-ID from the start, and tells it how long to wait before it
// reconnects.
func (s *sseStream) prime(retryMs int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	id := s.stream + "-" + strconv.Itoa(s.seq)
	s.seq++
	if _, err := fmt.Fprintf(s.w, "id: %s\nretry: %d\ndata:\n\n", id, retryMs); err != nil {
		s.closed = true
		return err
	}
	return s.rc.Flush()
}

// Send writes one message as a "message" event.
func (s *sseStream) Send(msg []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	id := s.stream + "-" + strconv.Itoa(s.seq)
	s.seq++
	buf := make([]byte, 0, len(msg)+len(id)+32)
	buf = append(buf, "id: "...)
	buf = append(buf, id...)
	buf = append(buf, "\nevent: message\ndata: "...)
	buf = append(buf, msg...)
	buf = append(buf, "\n\n"...)
	if _, err := s.w.Write(buf); err != nil {
		s.closed = true
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.closed = true
		return err
	}
	return nil
}

// keepAlive writes an SSE comment, which clients ignore, so that proxies
// and the client see the stream is alive.
func (s *sseStream) keepAlive() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if _, err := s.w.Write([]byte(": keepalive\n\n")); err != nil {
		s.closed = true
		return err
	}
	return s.rc.Flush()
}

// close marks the stream ended; later sends fail.
func (s *sseStream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}

// lazySSE is an SSE stream whose headers are written with its first
// message, so that a request can still be answered with a plain JSON error
// and its status until then.
type lazySSE struct {
	*sseStream
	once sync.Once
	on   bool
}

func newLazySSE(w http.ResponseWriter, stream string) *lazySSE {
	return &lazySSE{sseStream: newSSEStream(w, stream)}
}

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
	return l.sseStream.Send(msg)
}

func (l *lazySSE) started() bool {
	l.once.Do(func() {}) // no stream from here on
	return l.on
}
