package logbuf_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/logbuf"
	"github.com/mcpstack/mcpstack/internal/logfmt"
)

// sink is an io.Writer that records each write it is given.
type sink struct {
	mu     sync.Mutex
	writes []string
}

func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writes = append(s.writes, string(p))
	return len(p), nil
}

func (s *sink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.writes...)
}

func TestWriterBatches(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		max   int
		want  []string // the writes that reach the sink before any flush
	}{
		{"lines wait for the interval", []string{"a\n", "b\n"}, 64, nil},
		{"the bound flushes what came before", []string{"aaaa\n", "bbbb\n", "cc\n"}, 10, []string{"aaaa\nbbbb\n"}},
		{"a line over the bound goes through, after what is buffered", []string{"a\n", "0123456789abc\n", "b\n"}, 10, []string{"a\n", "0123456789abc\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &sink{}
			w := logbuf.New(s, tt.max, time.Hour)
			for _, l := range tt.lines {
				if _, err := w.Write([]byte(l)); err != nil {
					t.Fatal(err)
				}
			}
			if got := s.got(); strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Fatalf("before Flush the sink got %q, want %q", got, tt.want)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(s.got(), ""); got != strings.Join(tt.lines, "") {
				t.Fatalf("after Flush the sink has %q, want every line in order", got)
			}
		})
	}
}

func TestWriterFlushesAfterInterval(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, 1<<10, 20*time.Millisecond)
	_, _ = w.Write([]byte("late\n"))
	deadline := time.Now().Add(5 * time.Second)
	for len(s.got()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the line never reached the sink")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := s.got(); len(got) != 1 || got[0] != "late\n" {
		t.Fatalf("sink got %q", got)
	}
}

func TestWriterCloseLetsLinesThrough(t *testing.T) {
	s := &sink{}
	w := logbuf.New(s, 1<<10, time.Hour)
	_, _ = w.Write([]byte("before\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("after\n"))
	if got := s.got(); strings.Join(got, "") != "before\nafter\n" {
		t.Fatalf("sink got %q", got)
	}
}

// TestFlushAtWarn: a warning flushes itself and every line before it,
// logged as a record or from its parts (logfmt.Log, the access line's
// way), over serve's handler and over TextHandler.
func TestFlushAtWarn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		inner func(io.Writer) slog.Handler
		parts bool
	}{
		{"TextHandler", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }, false},
		{"logfmt", func(w io.Writer) slog.Handler { return logfmt.New(w, nil) }, false},
		{"logfmt from parts", func(w io.Writer) slog.Handler { return logfmt.New(w, nil) }, true},
		{"TextHandler from parts", func(w io.Writer) slog.Handler { return slog.NewTextHandler(w, nil) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			var mu sync.Mutex
			s := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
			w := logbuf.New(s, 1<<10, time.Hour)
			h := logbuf.FlushAt(tc.inner(w), w, slog.LevelWarn).WithAttrs([]slog.Attr{slog.String("app", "x")})
			logAt := func(level slog.Level, msg string) {
				if tc.parts {
					_ = logfmt.SinkOf(h).Log(context.Background(), time.Now(), level, msg, nil)
					return
				}
				slog.New(h).Log(context.Background(), level, msg)
			}
			logAt(slog.LevelInfo, "first")
			mu.Lock()
			if out.Len() != 0 {
				t.Fatalf("an info line went out at once: %q", out.String())
			}
			mu.Unlock()
			logAt(slog.LevelWarn, "second")
			mu.Lock()
			defer mu.Unlock()
			if got := out.String(); !strings.Contains(got, "msg=first app=x") || !strings.Contains(got, "msg=second app=x") || strings.Index(got, "first") > strings.Index(got, "second") {
				t.Fatalf("a warning must flush itself and every line before it, in order: %q", got)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
