package client

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// event is one server-sent event.
type event struct {
	id    string
	name  string // "message" when the stream gave none
	data  []byte
	retry time.Duration // 0: none given
	hasID bool
}

// sseReader reads the events of a text/event-stream body, bounded per
// event.
type sseReader struct {
	r   *bufio.Reader
	max int
}

func newSSEReader(r io.Reader, max int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// next returns the next event with data or an id (a priming event has an
// id and empty data); comments and empty events are skipped.
func (s *sseReader) next() (event, error) {
	ev := event{name: "message"}
	var data bytes.Buffer
	size, hasData := 0, false
	for {
		line, err := s.line(s.max - size)
		if err != nil && len(line) == 0 {
			return ev, err
		}
		size += len(line)
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 { // end of the event
			if hasData || ev.hasID || ev.retry > 0 {
				ev.data = data.Bytes()
				return ev, nil
			}
			ev = event{name: "message"}
			size = 0
			continue
		}
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		case "event":
			ev.name = string(value)
		case "id":
			ev.id, ev.hasID = string(value), true
		case "retry":
			if ms, err := strconv.Atoi(string(value)); err == nil && ms >= 0 {
				ev.retry = time.Duration(ms) * time.Millisecond
			}
		}
		if err != nil { // the stream ended without the blank line
			if hasData || ev.hasID {
				ev.data = data.Bytes()
				return ev, nil
			}
			return ev, err
		}
	}
}

// line reads one line of at most max bytes, however long (a data line
// holds a whole message).
func (s *sseReader) line(max int) ([]byte, error) {
	var line []byte
	for {
		part, err := s.r.ReadSlice('\n')
		if len(line)+len(part) > max {
			return nil, fmt.Errorf("an event exceeds %d bytes", s.max)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			if line == nil {
				return part, err // the common case: no copy
			}
			return append(line, part...), err
		}
		line = append(line, part...)
	}
}
