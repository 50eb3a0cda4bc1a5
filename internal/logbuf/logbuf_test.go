package logbuf_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/logbuf"
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

func TestFlushAtWarn(t *testing.T) {
	var out bytes.Buffer
	var mu sync.Mutex
	s := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
	w := logbuf.New(s, 1<<10, time.Hour)
	log := slog.New(logbuf.FlushAt(slog.NewTextHandler(w, nil), w, slog.LevelWarn)).With("app", "x")
	log.Info("first")
	mu.Lock()
	if out.Len() != 0 {
		t.Fatalf("an info line went out at once: %q", out.String())
	}
	mu.Unlock()
	log.Warn("second")
	mu.Lock()
	defer mu.Unlock()
	if got := out.String(); !strings.Contains(got, "msg=first app=x") || !strings.Contains(got, "msg=second app=x") || strings.Index(got, "first") > strings.Index(got, "second") {
		t.Fatalf("a warning must flush itself and every line before it, in order: %q", got)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
