package proxy

import (
	"bytes"
	"io"
)

// sseBody records each event of an event stream as it passes: in the
// Read that hands the client the event's last bytes, so that what the
// client does about it cannot come first in the recording.
type sseBody struct {
	io.ReadCloser
	events  eventSplitter
	message func(event string, data []byte)
}

func (b *sseBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.events.write(p[:n], b.message)
	return n, err
}

// eventSplitter cuts an event stream into events as the HTML standard
// reads one (server-sent events, "interpreting an event stream"), bytes
// pushed in as they come: lines end with CRLF, LF or CR (a CR at the end
// of a push may be followed by its LF in the next); a line starting with
// ":" is a comment; "field: value" drops one leading space; a blank line
// dispatches the event when it has data (a message; a priming event has
// none). A line or an event's data over
// max is not held: that event is dropped whole, never recorded in part.
type eventSplitter struct {
	max     int
	line    []byte
	data    []byte
	event   string
	hasData bool
	tooBig  bool // the current event went over max
	afterCR bool // the last byte ended a line with CR
	started bool // past a leading byte order mark
}

var bom = []byte("\xef\xbb\xbf")

func (s *eventSplitter) write(p []byte, dispatch func(event string, data []byte)) {
	for _, c := range p {
		if !s.started {
			// A stream may start with a byte order mark, itself split
			// across pushes: hold it in line until it is told apart.
			s.line = append(s.line, c)
			if bytes.HasPrefix(bom, s.line) {
				if len(s.line) == len(bom) {
					s.line, s.started = s.line[:0], true
				}
				continue
			}
			s.started = true
			held := s.line
			s.line = nil
			s.write(held, dispatch)
			continue
		}
		if s.afterCR {
			s.afterCR = false
			if c == '\n' {
				continue // the LF of a CRLF
			}
		}
		switch c {
		case '\r':
			s.afterCR = true
			s.endLine(dispatch)
		case '\n':
			s.endLine(dispatch)
		default:
			if len(s.line) < s.max {
				s.line = append(s.line, c)
			} else {
				s.tooBig = true
			}
		}
	}
}

func (s *eventSplitter) endLine(dispatch func(event string, data []byte)) {
	line := s.line
	s.line = s.line[:0]
	switch {
	case len(line) == 0: // a blank line: the event is complete
		// An event without data (a priming event: an id, data empty)
		// carries no message.
		if data := bytes.TrimSpace(s.data); s.hasData && !s.tooBig && len(data) > 0 {
			dispatch(s.event, data)
		}
		s.data, s.event, s.hasData, s.tooBig = s.data[:0], "", false, false
	case line[0] == ':': // a comment (keep-alive)
	default:
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if len(s.data)+len(value)+1 > s.max {
				s.tooBig = true
				return
			}
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			s.data, s.hasData = append(s.data, value...), true
		case "event":
			s.event = string(value)
		}
	}
}
