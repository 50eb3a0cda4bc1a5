package proxy

import (
	"bytes"
	"io"
	"log/slog"
)

// sseBody records each event of an event stream as it passes: in the
// Read that hands the client the event's last bytes, so that what the
// client does about it cannot come first in the recording. What it holds
// of an event is taken from its splitter's budget, and given back when
// the stream closes.
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

func (b *sseBody) Close() error {
	b.events.free()
	return b.ReadCloser.Close()
}

// eventSplitter cuts an event stream into events as the HTML standard
// reads one (server-sent events, "interpreting an event stream"), bytes
// pushed in as they come: lines end with CRLF, LF or CR (a CR at the end
// of a push may be followed by its LF in the next); a line starting with
// ":" is a comment; "field: value" drops one leading space; a blank line
// dispatches the event when it has data (a message; a priming event has
// none). A line or an event's data over max, or over what hold's budget
// has left, is not held: that event is dropped whole, never recorded in
// part, with a warning. What it holds past an event (or a line) larger
// than keepCap is let go.
type eventSplitter struct {
	max      int
	hold     hold
	line     []byte
	data     []byte
	event    string
	hasData  bool
	tooBig   bool // the current event is dropped
	lineOver bool // the current line is not held
	afterCR  bool // the last byte ended a line with CR
	started  bool // past a leading byte order mark
	pre      [3]byte
	npre     int // bytes in pre, maybe a byte order mark
}

// keepCap is what an event splitter keeps of a buffer between events (a
// stream may stay open, quiet, for long; many may).
const keepCap = minGrow

var bom = []byte("\xef\xbb\xbf")

func (s *eventSplitter) write(p []byte, dispatch func(event string, data []byte)) {
	for _, c := range p {
		if !s.started {
			// A stream may start with a byte order mark, itself split
			// across pushes: hold it until it is told apart.
			s.pre[s.npre] = c
			s.npre++
			if bytes.HasPrefix(bom, s.pre[:s.npre]) {
				if s.npre == len(bom) {
					s.npre, s.started = 0, true
				}
				continue
			}
			s.started = true
			held, n := s.pre, s.npre
			s.npre = 0
			s.write(held[:n], dispatch)
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
			if s.lineOver {
				continue
			}
			if len(s.line) == cap(s.line) {
				line, ok := s.hold.grow(s.line, 1, s.max)
				if !ok {
					s.lineOver = true
					s.drop()
					s.hold.free(s.line)
					s.line = nil
					continue
				}
				s.line = line
			}
			s.line = append(s.line, c)
		}
	}
}

func (s *eventSplitter) endLine(dispatch func(event string, data []byte)) {
	line, over := s.line, s.lineOver
	s.line, s.lineOver = s.line[:0], false
	defer func() {
		if cap(s.line) > keepCap {
			s.hold.free(s.line)
			s.line = nil
		}
	}()
	switch {
	case over: // a line not held: its event is dropped already
	case len(line) == 0: // a blank line: the event is complete
		// An event without data (a priming event: an id, data empty)
		// carries no message.
		if data := bytes.TrimSpace(s.data); s.hasData && !s.tooBig && len(data) > 0 {
			dispatch(s.event, data)
		}
		s.data, s.event, s.hasData, s.tooBig = s.data[:0], "", false, false
		if cap(s.data) > keepCap {
			s.hold.free(s.data)
			s.data = nil
		}
	case line[0] == ':': // a comment (keep-alive)
	default:
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if s.tooBig {
				return
			}
			n := len(value)
			if s.hasData {
				n++
			}
			data, ok := s.hold.grow(s.data, n, s.max)
			if !ok {
				s.drop()
				return
			}
			if s.data = data; s.hasData {
				s.data = append(s.data, '\n')
			}
			s.data, s.hasData = append(s.data, value...), true
		case "event":
			s.event = string(value)
		}
	}
}

// drop drops the current event, and lets go of its data.
func (s *eventSplitter) drop() {
	if !s.tooBig {
		slog.Warn("mcpstack proxy: an event larger than the recording's bound, or than what is left of --body-memory (or of its client's share), passes unrecorded", "bound", s.max)
	}
	s.tooBig = true
	s.hold.free(s.data)
	s.data = nil
}

// free lets go of all the splitter holds.
func (s *eventSplitter) free() {
	s.hold.release()
	s.line, s.data = nil, nil
}
