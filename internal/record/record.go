// Package record writes the traffic of a server to a message log, one JSON
// line per message, in the format of schema/ext/RecordedMessage.json:
//
//	{"ts":"2026-01-02T03:04:05.123456789Z","session":"9f…","dir":"c2s","msg":{"jsonrpc":"2.0",…}}
//
// A Recorder is a server.Tap (`mcpstack serve --record FILE`), so a CI job
// can run a client against the server and check what crossed the wire with
// `mcpstack validate FILE`. Messages are written as they were sent, made
// compact when they spanned lines; bytes that were not JSON are kept as a
// string in "raw".
package record

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// Recorder appends one line per message to a writer. It is safe for
// concurrent use; lines are buffered, flushed every FlushInterval and on
// Flush and Close. A write error stops the recording; Err reports it.
type Recorder struct {
	mu     sync.Mutex
	w      *bufio.Writer
	closer io.Closer
	err    error
	closed bool
	now    func() time.Time
	line   []byte // scratch, reused under mu

	interval time.Duration
	stop     chan struct{}
	done     chan struct{}
}

var _ server.Tap = (*Recorder)(nil)

// Option configures a Recorder.
type Option interface{ apply(*Recorder) }

type optionFunc func(*Recorder)

func (f optionFunc) apply(r *Recorder) { f(r) }

// WithFlushInterval flushes buffered lines this often (default 1s; 0
// only on Flush and Close), so that a log is nearly complete even when the
// process is killed.
func WithFlushInterval(d time.Duration) Option {
	return optionFunc(func(r *Recorder) { r.interval = d })
}

// WithClock sets the clock of the timestamps (tests).
func WithClock(now func() time.Time) Option { return optionFunc(func(r *Recorder) { r.now = now }) }

// ErrClosed is returned by Flush after Close.
var ErrClosed = errors.New("record: recorder closed")

// Create opens path for appending and records to it; Close closes the
// file. A recording holds what users said, so it is readable by its owner
// only: the file is created 0600 (an existing one is narrowed to it), and
// a missing folder 0700.
func Create(path string, opts ...Option) (*Recorder, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, fmt.Errorf("record: narrowing %s to 0600: %w", path, err)
		}
	}
	r := New(f, opts...)
	r.closer = f
	return r, nil
}

// New records to w. Close flushes but does not close w.
func New(w io.Writer, opts ...Option) *Recorder {
	r := &Recorder{w: bufio.NewWriterSize(w, 64<<10), now: time.Now, interval: time.Second}
	for _, o := range opts {
		o.apply(r)
	}
	if r.interval > 0 {
		r.stop, r.done = make(chan struct{}), make(chan struct{})
		go r.flusher(r.interval)
	}
	return r
}

func (r *Recorder) flusher(every time.Duration) {
	defer close(r.done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			_ = r.Flush()
		}
	}
}

// Message records one message (server.Tap).
func (r *Recorder) Message(session string, dir server.Direction, msg []byte) {
	r.write(session, dir, msg, "", nil)
}

// HTTP is what a recording keeps of the HTTP exchange that carried a
// message (mcpstack proxy): the rules of Streamable HTTP need the status
// and the MCP headers. Never Authorization or cookies.
type HTTP struct {
	Method   string            `json:"method,omitempty"`
	SSE      bool              `json:"sse,omitempty"` // HTTP+SSE (2024-11-05), not Streamable HTTP
	Status   int               `json:"status,omitempty"`
	Request  map[string]string `json:"request,omitempty"`
	Response map[string]string `json:"response,omitempty"`
}

// MessageHTTP records a message with the HTTP exchange it came in.
func (r *Recorder) MessageHTTP(session string, dir server.Direction, msg []byte, h *HTTP) {
	if h == nil {
		r.Message(session, dir, msg)
		return
	}
	b, err := json.Marshal(h)
	if err != nil {
		r.Message(session, dir, msg)
		return
	}
	r.write(session, dir, msg, "", append([]byte(`,"http":`), b...))
}

// Shutdown records the end of a session: nothing may follow it in that
// session. dir is the side that ended it (c2s: the client closed stdin or
// sent DELETE; s2c: the server closed the session).
func (r *Recorder) Shutdown(session string, dir server.Direction) {
	r.write(session, dir, nil, "shutdown", nil)
}

// Refused records an HTTP answer without a JSON-RPC body (a 401, a 404)
// to the requests with ids: they are answered, by status.
func (r *Recorder) Refused(session string, status int, ids []wire.ID) {
	answers := make([]any, len(ids))
	for i, id := range ids {
		answers[i] = id.Value()
	}
	a, _ := json.Marshal(answers)
	r.write(session, server.ServerToClient, nil, "refused", fmt.Appendf(nil, `,"status":%d,"answers":%s`, status, a))
}

// write writes one record; extra holds more members (",\"status\":401").
func (r *Recorder) write(session string, dir server.Direction, msg []byte, event string, extra []byte) {
	ts := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.err != nil {
		return
	}
	b := r.line[:0]
	b = append(b, `{"ts":"`...)
	b = ts.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","session":`...)
	b = appendString(b, session)
	b = append(b, `,"dir":"`...)
	b = append(b, dir...)
	b = append(b, '"')
	switch {
	case event != "":
		b = append(b, `,"event":"`...)
		b = append(b, event...)
		b = append(b, '"')
		b = append(b, extra...)
	case json.Valid(msg):
		b = append(b, `,"msg":`...)
		if bytes.ContainsAny(msg, "\r\n") {
			var c bytes.Buffer
			_ = json.Compact(&c, msg)
			b = append(b, c.Bytes()...)
		} else {
			b = append(b, msg...)
		}
	default:
		q, _ := json.Marshal(string(msg))
		b = append(b, `,"raw":`...)
		b = append(b, q...)
	}
	if event == "" {
		b = append(b, extra...)
	}
	b = append(b, "}\n"...)
	r.line = b
	if _, err := r.w.Write(b); err != nil {
		r.err = err
	}
}

// appendString appends s as a JSON string. Session ids are printable
// ASCII, which strconv quotes as JSON does; anything else goes through
// encoding/json.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	return strconv.AppendQuote(b, s)
}

// Flush writes the buffered lines.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	if r.err != nil {
		return r.err
	}
	if err := r.w.Flush(); err != nil {
		r.err = err
	}
	return r.err
}

// Err is the first write error, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close flushes, stops the periodic flush and closes the file of Create.
// Messages after Close are dropped. It returns the first error the
// recording met.
func (r *Recorder) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.err
	}
	r.closed = true
	if r.err == nil {
		if err := r.w.Flush(); err != nil {
			r.err = err
		}
	}
	if r.closer != nil {
		if err := r.closer.Close(); err != nil && r.err == nil {
			r.err = err
		}
	}
	err := r.err
	stop := r.stop
	r.mu.Unlock()
	if stop != nil {
		close(stop)
		<-r.done
	}
	return err
}
