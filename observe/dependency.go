package observe

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Dependency times a call a handler makes to what it depends on: kind is
// what ("store", "model"), operation which call ("get", the provider's
// name). It returns the call's context, with a child span of the request
// where tracing is on, and the func to call with its error when it ends.
// chat.WithTiming takes it.
func (o *Observer) Dependency(ctx context.Context, kind, operation string) (context.Context, func(error)) {
	start := time.Now()
	var span trace.Span
	if o.tracer != nil {
		ctx, span = o.tracer.Start(ctx, kind+" "+operation, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("mcpstack.dependency", kind), attribute.String("mcpstack.operation", operation)))
	}
	return ctx, func(err error) {
		outcome := "ok"
		switch {
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
			outcome = "cancelled"
		case err != nil:
			outcome = "error"
		}
		if o.metrics != nil {
			o.metrics.dependency.WithLabelValues(kind, operation, outcome).Observe(time.Since(start).Seconds())
		}
		if span != nil {
			if err != nil {
				span.SetAttributes(attribute.String("error.type", outcome))
				span.SetStatus(codes.Error, clip(err.Error())) // a peer may have written it
			}
			span.End()
		}
	}
}
