// Package logfmt is a slog.Handler that writes the lines slog.TextHandler
// writes, byte for byte, at a fraction of its cost for the lines a server
// writes most: a message and flat attributes of the scalar kinds (the
// access line of every request). Anything else (groups, LogValuers, Any
// values, times, ReplaceAttr, AddSource) is handed to a slog.TextHandler
// kept beside it, so the output never differs; FuzzSameAsTextHandler holds
// the two to the same bytes.
//
// The saving is in what TextHandler does per line and this does once: the
// attributes of With are formatted when they are added, the time's text
// up to the second is kept for the second, and a line is built in a pooled
// buffer without the handler state TextHandler allocates and walks.
package logfmt

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/swar"
)

// New returns a handler writing to w what slog.NewTextHandler(w, opts)
// would. Each line is one Write, under a lock of the handler's (and of
// the handlers derived from it), as TextHandler's are.
func New(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	lw := &lockedWriter{w: w}
	text := slog.NewTextHandler(lw, opts)
	if opts.ReplaceAttr != nil || opts.AddSource {
		return text // what the fast path would have to repeat
	}
	level := opts.Level
	if level == nil {
		level = slog.LevelInfo
	}
	return &handler{text: text, level: level, w: lw, clock: new(atomic.Pointer[second]), msg: new(atomic.Pointer[message]), fast: true}
}

type handler struct {
	text  slog.Handler // the same handler as TextHandler, for what fast does not take
	level slog.Leveler
	w     *lockedWriter
	clock *atomic.Pointer[second]
	msg   *atomic.Pointer[message] // the last message written, as written
	pre   []byte                   // " k=v" for the attributes of With, formatted once
	fast  bool                     // false once a group or an attribute the fast path does not write is added
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if !h.fast {
		return h.text.Handle(ctx, r)
	}
	bp, b := h.start(r.Time, r.Level, r.Message)
	defer release(bp)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendAttr(b, a)
		return ok
	})
	if !ok {
		*bp = b
		return h.text.Handle(ctx, r)
	}
	return h.end(bp, b)
}

// HandleAttrs writes the line a record of these parts would make (AttrsHandler).
func (h *handler) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if !h.fast {
		return h.text.Handle(ctx, record(t, level, msg, attrs))
	}
	bp, b := h.start(t, level, msg)
	defer release(bp)
	for _, a := range attrs {
		var ok bool
		if b, ok = appendAttr(b, a); !ok {
			*bp = b
			return h.text.Handle(ctx, record(t, level, msg, attrs))
		}
	}
	return h.end(bp, b)
}

// start begins a line in a pooled buffer: time, level, message and the
// attributes of With.
func (h *handler) start(t time.Time, level slog.Level, msg string) (*[]byte, []byte) {
	bp := buffers.Get().(*[]byte)
	b := (*bp)[:0]
	if !t.IsZero() {
		b = append(b, "time="...)
		b = h.appendTime(b, t)
		b = append(b, ' ')
	}
	b = append(b, "level="...)
	b = appendString(b, level.String())
	b = append(b, " msg="...)
	b = h.appendMessage(b, msg)
	return bp, append(b, h.pre...)
}

// end writes the line, in one Write.
func (h *handler) end(bp *[]byte, b []byte) error {
	b = append(b, '\n')
	*bp = b
	_, err := h.w.Write(b)
	return err
}

func release(bp *[]byte) {
	if cap(*bp) <= maxPooled {
		buffers.Put(bp)
	}
}

// AttrsHandler is a slog.Handler that also takes a line's parts without
// a slog.Record: a record keeps five attributes before it allocates, and
// every handler it passes through copies it. serve's handlers (this
// package's, logbuf's and observe's) have it.
type AttrsHandler interface {
	slog.Handler
	// HandleAttrs handles a line as Handle would a record of these parts;
	// it keeps nothing of attrs once it returns (the caller reuses them).
	HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error
}

// Sink is a handler and how a line's parts reach it, decided once (a
// type assertion a line would cost more than the rest of its way).
type Sink struct {
	slog.Handler
	parts AttrsHandler // the handler itself, where it takes parts
}

// SinkOf returns the Sink of h.
func SinkOf(h slog.Handler) Sink {
	parts, _ := h.(AttrsHandler)
	return Sink{Handler: h, parts: parts}
}

// Log hands a line to the handler: its parts where it takes them, else a
// record. The caller has asked Enabled.
func (s Sink) Log(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if s.parts != nil {
		return s.parts.HandleAttrs(ctx, t, level, msg, attrs)
	}
	return s.Handler.Handle(ctx, record(t, level, msg, attrs))
}

func record(t time.Time, level slog.Level, msg string, attrs []slog.Attr) slog.Record {
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(attrs...)
	return r
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.text = h.text.WithAttrs(attrs)
	if h.fast {
		pre := append([]byte(nil), h.pre...)
		for _, a := range attrs {
			var ok bool
			if pre, ok = appendAttr(pre, a); !ok {
				h2.fast = false
				break
			}
		}
		h2.pre = pre
	}
	return &h2
}

func (h *handler) WithGroup(name string) slog.Handler {
	h2 := *h
	h2.text = h.text.WithGroup(name)
	h2.fast = false // TextHandler prefixes keys even for an empty name
	return &h2
}

// appendAttr appends " key=value" for a non-empty key and a value of a
// scalar kind, the only attributes the fast path writes; ok is false for
// any other (the caller hands the record to TextHandler).
func appendAttr(b []byte, a slog.Attr) (_ []byte, ok bool) {
	if a.Key == "" {
		return b, false
	}
	v := a.Value
	switch v.Kind() {
	case slog.KindString, slog.KindInt64, slog.KindUint64, slog.KindFloat64, slog.KindBool, slog.KindDuration:
	default:
		return b, false
	}
	b = append(b, ' ')
	b = appendString(b, a.Key)
	b = append(b, '=')
	switch v.Kind() {
	case slog.KindString:
		b = appendString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindFloat64:
		b = strconv.AppendFloat(b, v.Float64(), 'g', -1, 64)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = appendDuration(b, v.Duration())
	}
	return b, true
}

// appendDuration appends d as time.Duration.String writes it. A duration
// under a second (an access line's, nearly always) is written here, into
// b; Duration.String makes a string of it first.
func appendDuration(b []byte, d time.Duration) []byte {
	if d <= 0 || d >= time.Second {
		return append(b, d.String()...)
	}
	u := uint64(d)
	unit, digits, scale := "ms", 6, uint64(1e6)
	switch {
	case u < 1e3:
		return append(strconv.AppendUint(b, u, 10), "ns"...)
	case u < 1e6:
		unit, digits, scale = "µs", 3, 1e3
	}
	b = strconv.AppendUint(b, u/scale, 10)
	if frac := u % scale; frac != 0 {
		var text [6]byte // the fraction's digits, trailing zeros dropped
		for i := digits - 1; i >= 0; i-- {
			text[i] = byte('0' + frac%10)
			frac /= 10
		}
		for digits > 0 && text[digits-1] == '0' {
			digits--
		}
		b = append(append(b, '.'), text[:digits]...)
	}
	return append(b, unit...)
}

// appendString writes s as TextHandler does: as it is, or quoted when it
// is empty or holds a space, '=', '"', a control or non-printing character
// or invalid UTF-8.
func appendString(b []byte, s string) []byte {
	if needsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func needsQuoting(s string) bool {
	if s == "" {
		return true
	}
	i := 0
	for ; i+8 <= len(s) && !specialIn(s[i:i+8]); i += 8 { // the common case: plain ASCII, 8 bytes a step
	}
	for i < len(s) && !special[s[i]] {
		i++
	}
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if special[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// specialIn reports whether any of the 8 bytes of s is special: a
// control or space (below 0x21), '=', '"' or a byte of a multi-byte
// character (0x80 and above), tested on the 8 bytes at once.
func specialIn(s string) bool {
	w := swar.Word(s)
	return swar.High(w)|swar.Below(w, 0x21)|swar.Has(w, '=')|swar.Has(w, '"') != 0
}

// special marks the bytes needsQuoting looks at more closely: the ASCII
// ones that make TextHandler quote (controls, space, '=', '"') and the
// first bytes of multi-byte characters. It is never written.
var special = func() (t [256]bool) {
	for c := range t {
		t[c] = c <= ' ' || c == '=' || c == '"' || c >= utf8.RuneSelf
	}
	return t
}()

// message is a message as a line writes it (quoted where it must be):
// most lines of a busy server say the same thing ("mcp request").
type message struct {
	text    string
	written []byte
}

func (h *handler) appendMessage(b []byte, msg string) []byte {
	if m := h.msg.Load(); m != nil && m.text == msg {
		return append(b, m.written...)
	}
	start := len(b)
	b = appendString(b, msg)
	if len(msg) <= maxCachedMessage {
		h.msg.Store(&message{text: msg, written: append([]byte(nil), b[start:]...)})
	}
	return b
}

// maxCachedMessage bounds the message kept: a message is a constant in
// the code, not data.
const maxCachedMessage = 64

// second is the text of a time up to its second ("2006-01-02T15:04:05.")
// and its zone ("Z", "+01:00"), kept while the clock is in that second.
type second struct {
	unix   int64
	loc    *time.Location
	prefix string
	zone   string
}

// appendTime writes t in RFC 3339 with milliseconds, as TextHandler does.
func (h *handler) appendTime(b []byte, t time.Time) []byte {
	t = t.Round(0)
	if y := t.Year(); y < 0 || y > 9999 { // not four digits: TextHandler's own way
		const n = len("2006-01-02T15:04:05.000")
		start := len(b)
		b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
		return append(b[:start+n], b[start+n+1:]...)
	}
	unix, loc := t.Unix(), t.Location()
	s := h.clock.Load()
	if s == nil || s.unix != unix || s.loc != loc {
		text := t.Truncate(time.Second).Format("2006-01-02T15:04:05Z07:00")
		const n = len("2006-01-02T15:04:05")
		s = &second{unix: unix, loc: loc, prefix: text[:n] + ".", zone: text[n:]}
		h.clock.Store(s)
	}
	ms := t.Nanosecond() / int(time.Millisecond)
	b = append(b, s.prefix...)
	b = append(b, byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10))
	return append(b, s.zone...)
}

// A line is built in a pooled buffer; an unusually long one is not kept.
const maxPooled = 16 << 10

var buffers = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// lockedWriter makes each line one Write under one lock, shared by the
// fast path and the TextHandler beside it.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
