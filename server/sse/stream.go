package sse

import (
	"bytes"
	"errors"
	"net/http"
	"sync"
)

// errStreamClosed is returned by Send after the stream ended.
var errStreamClosed = errors.New("sse: stream closed")

// stream writes server-sent events on the GET response; it is the
// session's server.Outbox. Events have no id: 2024-11-05 has no
// resumption, a client that reconnects opens a new session.
type stream struct {
	mu     sync.Mutex
	w      http.ResponseWriter
	rc     *http.ResponseController
	closed bool
}

func newStream(w http.ResponseWriter) *stream {
	return &stream{w: w, rc: http.NewResponseController(w)}
}

// start writes the headers of an event stream.
func (s *stream) start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	_ = s.rc.Flush()
}

// Send writes one JSON-RPC message (or batch answer) as a "message" event.
func (s *stream) Send(msg []byte) error { return s.event("message", msg) }

// event writes one event. Line breaks in data (JSON whitespace only: they
// cannot occur inside JSON strings) become separate data lines, which the
// client joins with "\n" again.
func (s *stream) event(name string, data []byte) error {
	buf := make([]byte, 0, len(data)+len(name)+24)
	buf = append(buf, "event: "...)
	buf = append(buf, name...)
	buf = append(buf, '\n')
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	data = bytes.ReplaceAll(data, []byte("\r"), []byte("\n"))
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		buf = append(buf, "data: "...)
		buf = append(buf, line...)
		buf = append(buf, '\n')
	}
	buf = append(buf, '\n')
	return s.write(buf)
}

// keepAlive writes an SSE comment, which clients ignore, so that proxies
// and the client see the stream is alive.
func (s *stream) keepAlive() error { return s.write([]byte(": keepalive\n\n")) }

func (s *stream) write(b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errStreamClosed
	}
	if _, err := s.w.Write(b); err != nil {
		s.closed = true
		return err
	}
	if err := s.rc.Flush(); err != nil {
		s.closed = true
		return err
	}
	return nil
}

// close marks the stream ended; later sends fail. The handler calls it
// before it returns, as the ResponseWriter is dead after that.
func (s *stream) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
}
