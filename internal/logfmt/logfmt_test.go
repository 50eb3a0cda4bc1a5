package logfmt

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"
)

// same logs the records through ours, as records and from their parts
// (Sink.Log), and through slog.TextHandler, each handler built once by
// build (With attributes and groups) and kept across the records, and
// fails where the lines differ.
func same(t *testing.T, opts *slog.HandlerOptions, build func(slog.Handler) slog.Handler, records ...slog.Record) {
	t.Helper()
	var want, got, fromParts bytes.Buffer
	w := build(slog.NewTextHandler(&want, opts))
	g := build(New(&got, opts))
	p := SinkOf(build(New(&fromParts, opts)))
	ctx := context.Background()
	for _, r := range records {
		if w.Enabled(ctx, r.Level) != g.Enabled(ctx, r.Level) {
			t.Fatalf("Enabled(%v): TextHandler %v, ours %v", r.Level, w.Enabled(ctx, r.Level), g.Enabled(ctx, r.Level))
		}
		if err := w.Handle(ctx, r.Clone()); err != nil {
			t.Fatal(err)
		}
		if err := g.Handle(ctx, r.Clone()); err != nil {
			t.Fatal(err)
		}
		var attrs []slog.Attr
		r.Attrs(func(a slog.Attr) bool { attrs = append(attrs, a); return true })
		if err := p.Log(ctx, r.Time, r.Level, r.Message, attrs); err != nil {
			t.Fatal(err)
		}
	}
	if got.String() != want.String() {
		t.Errorf("lines differ:\nTextHandler %q\nours        %q", want.String(), got.String())
	}
	if fromParts.String() != want.String() {
		t.Errorf("lines from parts differ:\nTextHandler %q\nours        %q", want.String(), fromParts.String())
	}
}

type stringer struct{}

func (stringer) LogValue() slog.Value { return slog.StringValue("resolved") }

func TestSameAsTextHandler(t *testing.T) {
	at := time.Date(2026, 12, 2, 9, 44, 19, 123456789, time.UTC)
	zone := time.FixedZone("X", -(3*3600 + 30*60))
	none := func(h slog.Handler) slog.Handler { return h }
	tests := []struct {
		name  string
		time  time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
		opts  *slog.HandlerOptions
		build func(slog.Handler) slog.Handler
	}{
		{name: "access line", time: at, msg: "mcp request", attrs: []slog.Attr{
			slog.String("method", "tools/call"), slog.Int64("id", 7), slog.Duration("duration", 1234567*time.Nanosecond),
			slog.String("outcome", "ok"), slog.String("target", "echo"), slog.String("session", "a1b2")}},
		{name: "no time", msg: "x"},
		{name: "whole millisecond", time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), msg: "x"},
		{name: "zone", time: at.In(zone), msg: "x"},
		{name: "local", time: at.Local(), msg: "x"},
		{name: "year past 9999", time: time.Date(12026, 1, 1, 0, 0, 0, 5e6, time.UTC), msg: "x"},
		{name: "before 1970", time: time.Date(1969, 12, 31, 23, 59, 59, 999e6, time.UTC), msg: "x"},
		{name: "levels", time: at, level: slog.LevelDebug - 2, msg: "x", opts: &slog.HandlerOptions{Level: slog.LevelDebug - 4}},
		{name: "below the level", time: at, level: slog.LevelDebug, msg: "x"},
		{name: "quoting", time: at, msg: "two words", attrs: []slog.Attr{
			slog.String("empty", ""), slog.String("eq", "a=b"), slog.String("quote", `say "hi"`), slog.String("back", `a\b`),
			slog.String("nl", "a\nb"), slog.String("tab", "a\tb"), slog.String("del", "a\x7fb"), slog.String("utf8", "héllo"),
			slog.String("nbsp", "a\u00a0b"), slog.String("bad", "a\xffb"), slog.String("key with space", "v"), slog.String("k=", "v")}},
		{name: "numbers", time: at, msg: "x", attrs: []slog.Attr{
			slog.Int64("neg", -5), slog.Uint64("u", math.MaxUint64), slog.Float64("f", 1.5e-9), slog.Float64("inf", math.Inf(-1)),
			slog.Float64("nan", math.NaN()), slog.Bool("b", true), slog.Duration("d", -time.Hour)}},
		{name: "empty key", time: at, msg: "x", attrs: []slog.Attr{slog.String("", "v")}},
		{name: "empty attr", time: at, msg: "x", attrs: []slog.Attr{{}}},
		{name: "error", time: at, msg: "x", attrs: []slog.Attr{slog.Any("err", errors.New("it broke"))}},
		{name: "time attr", time: at, msg: "x", attrs: []slog.Attr{slog.Time("when", at)}},
		{name: "group attr", time: at, msg: "x", attrs: []slog.Attr{slog.Group("g", slog.Int("a", 1))}},
		{name: "log valuer", time: at, msg: "x", attrs: []slog.Attr{slog.Any("v", stringer{})}},
		{name: "with", time: at, msg: "x", attrs: []slog.Attr{slog.Int("b", 2)},
			build: func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("a", "one two")}) }},
		{name: "with a group value", time: at, msg: "x", attrs: []slog.Attr{slog.Int("b", 2)},
			build: func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.Group("g", slog.Int("a", 1))}) }},
		{name: "with group", time: at, msg: "x", attrs: []slog.Attr{slog.Int("b", 2)},
			build: func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.Int("a", 1)}).WithGroup("g") }},
		{name: "empty group name", time: at, msg: "x", attrs: []slog.Attr{slog.Int("b", 2)},
			build: func(h slog.Handler) slog.Handler { return h.WithGroup("") }},
		{name: "replace attr", time: at, msg: "x", attrs: []slog.Attr{slog.Int("b", 2)},
			opts: &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr { a.Key += "!"; return a }}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := tt.build
			if build == nil {
				build = none
			}
			r := slog.NewRecord(tt.time, tt.level, tt.msg, 0)
			r.AddAttrs(tt.attrs...)
			same(t, tt.opts, build, r)
		})
	}
}

// FuzzSameAsTextHandler holds the fast path to TextHandler's bytes for any
// message, key and string value, at any time.
func FuzzSameAsTextHandler(f *testing.F) {
	f.Add("mcp request", "method", "tools/call", int64(1764668659123456789), "with", "x y")
	f.Add("", "", "", int64(0), "", "")
	f.Add("a\u2028b", "k\x00", "é\xff", int64(-1), "w=", `"`)
	f.Fuzz(func(t *testing.T, msg, key, value string, nanos int64, withKey, withValue string) {
		r := slog.NewRecord(time.Unix(0, nanos).UTC(), slog.LevelWarn, msg, 0)
		r.AddAttrs(slog.String(key, value), slog.Int("n", len(value)), slog.Duration("d", time.Duration(nanos%int64(3*time.Second))))
		same(t, nil, func(h slog.Handler) slog.Handler {
			return h.WithAttrs([]slog.Attr{slog.String(withKey, withValue)})
		}, r)
	})
}

// TestDurations: durations are written as time.Duration.String writes
// them, at each unit's edges and with the fraction's zeros dropped.
func TestDurations(t *testing.T) {
	for _, d := range []time.Duration{0, 1, 999, 1000, 1001, 1500, 12345, 999999, 1e6, 1000001, 1234567, 1200000, 999999999,
		time.Second, 1500 * time.Millisecond, time.Hour + time.Nanosecond, -1, -1500} {
		if got, want := string(appendDuration(nil, d)), d.String(); got != want {
			t.Errorf("appendDuration(%d) = %q, want %q", int64(d), got, want)
		}
	}
}

// BenchmarkAccessLine compares the access line through ours and through
// slog.TextHandler: the ratio is the saving.
func BenchmarkAccessLine(b *testing.B) {
	for _, bb := range []struct {
		name string
		h    slog.Handler
	}{{"TextHandler", slog.NewTextHandler(discard{}, nil)}, {"logfmt", New(discard{}, nil)}} {
		b.Run(bb.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "mcp request", 0)
				r.AddAttrs(slog.String("method", "tools/call"), slog.Int64("id", 7), slog.Duration("duration", 1234567), slog.String("outcome", "ok"), slog.String("target", "echo"), slog.String("session", "a1b2c3d4"))
				_ = bb.h.Handle(ctx, r)
			}
		})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// One handler over a sequence of records, as a server logs them: its
// kept second, zone and message are used, and refreshed, exactly when
// TextHandler would write other bytes; concurrent use stays line by line.
func TestCachesAcrossRecords(t *testing.T) {
	base := time.Date(2026, 12, 2, 9, 44, 19, 0, time.UTC)
	zone := time.FixedZone("Y", 2*3600)
	times := []time.Time{base, base.Add(5 * time.Millisecond), base.In(zone), base.Add(999 * time.Millisecond), base.Add(time.Second), base.Add(time.Second).Local(), base}
	msgs := []string{"mcp request", "mcp request", "other thing", "mcp request", "a=b", "mcp request", ""}
	var records []slog.Record
	for i, at := range times {
		r := slog.NewRecord(at, slog.LevelInfo, msgs[i], 0)
		r.AddAttrs(slog.Int("i", i))
		records = append(records, r)
	}
	same(t, nil, func(h slog.Handler) slog.Handler { return h.WithAttrs([]slog.Attr{slog.String("app", "x")}) }, records...)
	var mu sync.Mutex
	lines := 0
	h := New(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if bytes.Count(p, []byte("\n")) != 1 {
			t.Errorf("a write of %d lines: %q", bytes.Count(p, []byte("\n")), p)
		}
		lines++
		return len(p), nil
	}), nil)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				r := slog.NewRecord(time.Now(), slog.LevelInfo, "mcp request", 0)
				r.AddAttrs(slog.Int("g", g), slog.Int("i", i))
				_ = h.Handle(context.Background(), r)
			}
		})
	}
	wg.Wait()
	if lines != 800 {
		t.Errorf("%d lines written, want 800", lines)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// FuzzSpecialIn holds the 8-bytes-at-once test to the table, byte by byte.
func FuzzSpecialIn(f *testing.F) {
	f.Add("abcdefgh")
	f.Add("abc=defg")
	f.Add("a\"cdefgh")
	f.Add("abcdefg\x80")
	f.Add("\x00bcdefgh")
	f.Add("!!!!!!!!")
	f.Add("        ")
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) < 8 {
			return
		}
		s = s[:8]
		want := false
		for i := 0; i < 8; i++ {
			want = want || special[s[i]]
		}
		if got := specialIn(s); got != want {
			t.Errorf("specialIn(%q) = %v, want %v", s, got, want)
		}
	})
}
