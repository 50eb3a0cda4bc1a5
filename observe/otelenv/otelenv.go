// Package otelenv makes an OpenTelemetry tracer provider from the standard
// OTEL_* environment variables, for observe.WithTracerProvider. It is a
// package of its own because the exporters it may pick (OTLP over HTTP or
// gRPC, the console) link gRPC and protobuf: a program that wants metrics
// and the access log of package observe, or a tracer provider of its own,
// links none of them. gRPC links golang.org/x/net/trace, whose init
// registers /debug/requests and /debug/events on http.DefaultServeMux
// (for loopback clients only): a program that imports this package should
// serve a mux of its own.
package otelenv

import (
	"context"
	"fmt"
	"os"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracerProvider makes a tracer provider from the standard OTEL_*
// variables (OTEL_TRACES_EXPORTER: otlp over HTTP or gRPC, console, none;
// OTEL_EXPORTER_OTLP_*; OTEL_SERVICE_NAME; OTEL_TRACES_SAMPLER...), or
// none (nil) when they configure no exporter: then there are no spans.
// shutdown flushes what is left.
func TracerProvider(ctx context.Context) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if !tracingConfigured() {
		return nil, none, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, none, fmt.Errorf("otelenv: trace exporter: %w", err)
	}
	if autoexport.IsNoneSpanExporter(exp) {
		return nil, none, nil
	}
	p := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithRawSpanLimits(spanLimits()))
	return p, p.Shutdown, nil
}

// maxAttributeLength bounds a span attribute's value where the environment
// sets no OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT: the SDK's default is no
// bound, and spans queue for a slow exporter with whatever a client sent.
const maxAttributeLength = 1024

// spanLimits are the SDK's limits from the environment, with a bound on
// attribute values where it sets none.
func spanLimits() sdktrace.SpanLimits {
	l := sdktrace.NewSpanLimits()
	if l.AttributeValueLengthLimit < 0 {
		l.AttributeValueLengthLimit = maxAttributeLength
	}
	return l
}

// tracingConfigured: the environment names a trace exporter or an OTLP
// endpoint (autoexport alone would default to OTLP on localhost).
func tracingConfigured() bool {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		if v := os.Getenv(k); v != "" && v != "none" {
			return true
		}
	}
	return false
}
