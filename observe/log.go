package observe

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/logfmt"
)

// LogHandler adds trace_id and span_id to every record logged with a
// context that carries a span (the handler's context in a traced
// request), so that log lines join their traces.
func LogHandler(h slog.Handler) slog.Handler { return traceHandler{logfmt.SinkOf(h)} }

type traceHandler struct{ logfmt.Sink }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if ids, ok := traceIDs(ctx); ok {
		r = r.Clone()
		r.AddAttrs(ids[:]...)
	}
	return h.Handler.Handle(ctx, r)
}

// HandleAttrs is Handle for the parts of a line (logfmt.AttrsHandler):
// the access line of every request takes it.
func (h traceHandler) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if ids, ok := traceIDs(ctx); ok {
		attrs = append(attrs[:len(attrs):len(attrs)], ids[:]...) // a copy: the caller's slice stays as it was
	}
	return h.Sink.Log(ctx, t, level, msg, attrs)
}

// traceIDs are the attributes that join a line to the trace of ctx's span.
func traceIDs(ctx context.Context) ([2]slog.Attr, bool) {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return [2]slog.Attr{}, false
	}
	return [2]slog.Attr{slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String())}, true
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{logfmt.SinkOf(h.Handler.WithAttrs(attrs))}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{logfmt.SinkOf(h.Handler.WithGroup(name))}
}
