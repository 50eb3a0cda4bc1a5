// Package logbuf batches log lines into fewer writes. One write(2) per
// access line cost a busy server about as much as formatting the line; a
// line here waits at most a flush interval, or until a line that must not
// wait (a warning or an error) flushes everything before it.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/logfmt"
)

// Writer buffers what is written to it, up to a bound, and writes it on to
// the underlying writer when the bound would be passed, an interval after
// the first unwritten byte, on Flush, and on Close. It is safe for
// concurrent use; each Write is kept whole.
type Writer struct {
	w        io.Writer
	max      int
	interval time.Duration

	mu     sync.Mutex
	buf    []byte
	timer  *time.Timer // armed while buf holds bytes
	err    error       // the first error of the underlying writer
	closed bool
}

// New returns a Writer on w that holds at most max bytes for at most
// interval.
func New(w io.Writer, max int, interval time.Duration) *Writer {
	b := &Writer{w: w, max: max, interval: interval}
	b.timer = time.AfterFunc(time.Hour, func() { _ = b.Flush() })
	b.timer.Stop()
	return b
}

// Write buffers p; a p larger than the bound is written at once, after what
// is buffered. It reports the underlying writer's first error.
func (b *Writer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || len(b.buf)+len(p) > b.max {
		b.flushLocked()
	}
	if b.closed || len(p) > b.max {
		if _, err := b.w.Write(p); err != nil && b.err == nil {
			b.err = err
		}
		return len(p), b.err
	}
	if len(b.buf) == 0 {
		b.timer.Reset(b.interval)
	}
	b.buf = append(b.buf, p...)
	return len(p), b.err
}

// Flush writes what is buffered.
func (b *Writer) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	return b.err
}

func (b *Writer) flushLocked() {
	if len(b.buf) == 0 {
		return
	}
	b.timer.Stop()
	if _, err := b.w.Write(b.buf); err != nil && b.err == nil {
		b.err = err
	}
	b.buf = b.buf[:0]
}

// Close flushes and makes every later Write go straight through, so that
// nothing logged after it is held back.
func (b *Writer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.flushLocked()
	b.closed = true
	return b.err
}

// FlushAt wraps h so that a record at level or above is flushed from b at
// once, with every line before it: warnings and errors never wait.
func FlushAt(h slog.Handler, b *Writer, level slog.Leveler) slog.Handler {
	return flushing{Sink: logfmt.SinkOf(h), b: b, level: level}
}

type flushing struct {
	logfmt.Sink
	b     *Writer
	level slog.Leveler
}

func (f flushing) Handle(ctx context.Context, r slog.Record) error {
	err := f.Handler.Handle(ctx, r)
	if r.Level >= f.level.Level() {
		_ = f.b.Flush()
	}
	return err
}

// HandleAttrs is Handle for the parts of a line (logfmt.AttrsHandler).
func (f flushing) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	err := f.Sink.Log(ctx, t, level, msg, attrs)
	if level >= f.level.Level() {
		_ = f.b.Flush()
	}
	return err
}

func (f flushing) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushing{Sink: logfmt.SinkOf(f.Handler.WithAttrs(attrs)), b: f.b, level: f.level}
}

func (f flushing) WithGroup(name string) slog.Handler {
	return flushing{Sink: logfmt.SinkOf(f.Handler.WithGroup(name)), b: f.b, level: f.level}
}
