// Package sse reads text/event-stream bodies, as the HTML standard says:
// the one parser of the client's transports and the load generator.
package sse

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
	"time"
)

// Event is one dispatched server-sent event. Data is valid until the next
// call of Next.
type Event struct {
	Type string // "" when the stream named none ("message" by the standard)
	Data []byte // data lines joined with "\n"
	ID   string // the last event id seen so far on the stream
}

// Reader parses a text/event-stream body as the HTML standard says
// (https://html.spec.whatwg.org/multipage/server-sent-events.html): lines end
// with CRLF, LF or CR; a line starting with ':' is a comment; "field: value"
// drops one leading space of the value; a line without a colon is a field
// with an empty value; a blank line dispatches the event, unless its data is
// empty (a priming event carrying only an id is recorded, not dispatched); an
// id counts from the blank line that ends its event, so a stream cut inside
// an event resumes before it; a leading byte order mark is dropped; an event
// not closed by a blank line before the end of the stream is discarded.
//
// One Reader serves many streams in turn: Reset it with the next body.
// Lines and events are bounded (NewReader's max): a stream that sends a
// larger one fails with ErrTooLarge.
type Reader struct {
	br      *bufio.Reader
	max     int
	line    []byte // the current line when it did not fit the bufio buffer
	data    []byte
	event   []byte
	hasData bool
	idBuf   string // the id of the event being read (the standard's last event ID buffer)
	lastID  string // the id as of the last blank line: where a resumption starts
	retry   time.Duration
	first   bool // at the start of the stream (BOM check)
	skipLF  bool // the last line ended with CR: an LF next is its CRLF's
}

// ErrTooLarge is returned for a line or an event larger than the
// Reader's bound.
var ErrTooLarge = errors.New("sse: an event larger than the bound")

// NewReader reads r; max bounds one line and one event's data in bytes
// (<= 0: 16 MiB).
func NewReader(r io.Reader, max int) *Reader {
	if max <= 0 {
		max = 16 << 20
	}
	s := &Reader{br: bufio.NewReaderSize(r, 16<<10), max: max}
	s.Reset(r)
	return s
}

// Reset starts reading the next stream, r.
func (s *Reader) Reset(r io.Reader) {
	s.br.Reset(r)
	s.line = s.line[:0]
	s.data = s.data[:0]
	s.event = s.event[:0]
	s.hasData = false
	s.idBuf, s.lastID = "", ""
	s.retry = 0
	s.first = true
	s.skipLF = false
}

// Next returns the next event with data, or io.EOF when the stream ends
// (a partial event at the end is discarded), or the read error.
func (s *Reader) Next() (Event, error) {
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		if len(line) == 0 {
			s.lastID = s.idBuf
			if !s.hasData {
				s.event = s.event[:0]
				continue
			}
			ev := Event{Type: string(s.event), Data: s.data, ID: s.lastID}
			if n := len(ev.Data); n > 0 && ev.Data[n-1] == '\n' {
				ev.Data = ev.Data[:n-1]
			}
			s.data = s.data[:0]
			s.event = s.event[:0]
			s.hasData = false
			return ev, nil
		}
		s.field(line)
		if len(s.data) > s.max {
			return Event{}, ErrTooLarge
		}
	}
}

// Drain reads the rest of the stream, for a connection to be reused.
func (s *Reader) Drain() error {
	_, err := io.Copy(io.Discard, s.br)
	return err
}

// LastID is the id of the last event the stream ended with a blank line,
// priming events included: where a resumption (Last-Event-ID) starts. An
// id of an event the stream broke off inside does not count.
func (s *Reader) LastID() string { return s.lastID }

// Retry is the reconnection delay the stream asked for (0: none).
func (s *Reader) Retry() time.Duration { return s.retry }

func (s *Reader) field(line []byte) {
	if line[0] == ':' {
		return // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		s.data = append(s.data, value...)
		s.data = append(s.data, '\n')
		s.hasData = true
	case "event":
		s.event = append(s.event[:0], value...)
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			s.idBuf = string(value)
		}
	case "retry":
		if n, err := strconv.ParseUint(string(value), 10, 31); err == nil && len(value) > 0 && value[0] != '+' {
			s.retry = time.Duration(n) * time.Millisecond
		}
	}
}

// readLine returns the next line without its terminator: CRLF, LF or a
// lone CR, each as it arrives (a CR ends its line at once, and an LF right
// after it is skipped when it comes), so that a stream of CR-ended lines
// is not held back waiting for an LF. A line the stream ends inside is
// not returned. The returned slice is valid until the next call.
func (s *Reader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if _, err := s.br.Peek(1); err != nil {
			return nil, err
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				_, _ = s.br.Discard(1)
				continue
			}
		}
		// The first line end: an LF, or a CR before it (looked for up to
		// the LF only: a buffer of many lines is not scanned whole for each).
		i := bytes.IndexByte(buf, '\n')
		upTo := buf
		if i >= 0 {
			upTo = buf[:i]
		}
		if j := bytes.IndexByte(upTo, '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			s.line = append(s.line, buf...)
			_, _ = s.br.Discard(len(buf))
			if len(s.line) > s.max {
				return nil, ErrTooLarge
			}
			continue
		}
		line := buf[:i]
		if len(s.line) > 0 {
			s.line = append(s.line, line...)
			line = s.line
		}
		if len(line) > s.max {
			return nil, ErrTooLarge
		}
		s.skipLF = buf[i] == '\r'
		_, _ = s.br.Discard(i + 1) // buf stays as it is until the next read
		if s.first {
			s.first = false
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		return line, nil
	}
}
