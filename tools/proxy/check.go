package proxy

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/record"
	"github.com/mcpstack/mcpstack/tools/validate"
)

// tap records what passes through the proxy, to a file (--record) and to
// a live check (--check), in the recording format of server/record.
type tap struct {
	rec    *record.Recorder
	close  []func() error
	report chan validate.Report // the check's, when it ends
}

// newTap records to w (nil: nowhere) and checks when check is set; each
// finding goes to findings as the validator reaches it.
func newTap(w io.Writer, check bool, findings io.Writer) (*tap, error) {
	t := &tap{}
	var outs []io.Writer
	if w != nil {
		outs = append(outs, w)
	}
	if check {
		pr, pw := io.Pipe()
		outs = append(outs, pw)
		v, err := validate.New(validate.WithFindingHandler(func(f validate.Finding) { fmt.Fprintln(findings, "mcpstack proxy:", f) }))
		if err != nil {
			return nil, err
		}
		t.report = make(chan validate.Report, 1)
		go func() {
			t.report <- v.Check(context.Background(), []validate.Input{validate.ReaderInput("proxied", pr)})
			_, _ = io.Copy(io.Discard, pr) // a check that stopped early must not block the proxy
		}()
		t.close = append(t.close, pw.Close)
	}
	t.rec = record.New(io.MultiWriter(outs...), record.WithFlushInterval(0))
	return t, nil
}

// message records one message of a session.
func (t *tap) message(session string, dir server.Direction, msg []byte) {
	t.rec.Message(session, dir, msg)
}

// end flushes the recording, ends the check and returns its report (nil
// without --check).
func (t *tap) end() (*validate.Report, error) {
	err := t.rec.Close()
	for _, c := range t.close {
		_ = c()
	}
	if t.report == nil {
		return nil, err
	}
	rep := <-t.report
	return &rep, err
}

// lines splits a stream of newline-delimited messages (stdio framing) for
// the tap, without changing what passes: Write gets the bytes as they
// flow, whole or in pieces.
type lines struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	message func(msg []byte)
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := indexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if line := trimCR(l.buf[:i]); len(line) > 0 {
			l.message(append([]byte(nil), line...))
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > l.max { // a line longer than any message: recorded as it is, in pieces
		l.message(append([]byte(nil), l.buf...))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

// flush records what is left without a final newline.
func (l *lines) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line := trimCR(l.buf); len(line) > 0 {
		l.message(append([]byte(nil), line...))
	}
	l.buf = nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
