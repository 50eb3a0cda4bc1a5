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
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r = r.Clone()
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

// HandleAttrs is Handle for the parts of a line (logfmt.AttrsHandler):
// the access line of every request takes it.
func (h traceHandler) HandleAttrs(ctx context.Context, t time.Time, level slog.Level, msg string, attrs []slog.Attr) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r := slog.NewRecord(t, level, msg, 0)
		r.AddAttrs(attrs...)
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
		return h.Handler.Handle(ctx, r)
	}
	return h.Sink.Log(ctx, t, level, msg, attrs)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{logfmt.SinkOf(h.Handler.WithAttrs(attrs))}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{logfmt.SinkOf(h.Handler.WithGroup(name))}
}
