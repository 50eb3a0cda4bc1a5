package observe

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/logfmt"
)

// TestLogHandlerTraceIDs: a line logged in a traced context carries its
// trace and span ids, whether it comes as a record or from its parts (the
// access line's way); a line without a span carries none.
func TestLogHandlerTraceIDs(t *testing.T) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:  trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
	})
	traced := trace.ContextWithSpanContext(context.Background(), sc)
	const ids = "trace_id=0102030405060708090a0b0c0d0e0f10 span_id=0102030405060708"
	for _, inner := range []struct {
		name string
		new  func(*bytes.Buffer) slog.Handler
	}{
		{"logfmt", func(b *bytes.Buffer) slog.Handler { return logfmt.New(b, nil) }},
		{"TextHandler", func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) }},
	} {
		for _, parts := range []bool{false, true} {
			for _, ctx := range []context.Context{traced, context.Background()} {
				var out bytes.Buffer
				h := LogHandler(inner.new(&out))
				attrs := []slog.Attr{slog.String("method", "tools/call"), slog.Int("id", 1)}
				if parts {
					_ = logfmt.SinkOf(h).Log(ctx, time.Now(), slog.LevelInfo, "mcp request", attrs)
				} else {
					slog.New(h).LogAttrs(ctx, slog.LevelInfo, "mcp request", attrs...)
				}
				line := out.String()
				if !strings.Contains(line, "method=tools/call id=1") {
					t.Fatalf("%s (parts %v): %q lacks its attributes", inner.name, parts, line)
				}
				if want := ctx == traced; strings.Contains(line, ids) != want {
					t.Errorf("%s (parts %v, traced %v): %q", inner.name, parts, want, line)
				}
			}
		}
	}
}
