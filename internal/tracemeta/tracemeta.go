// Package tracemeta carries the OpenTelemetry trace context in a
// message's params._meta (traceparent, tracestate, baggage), as the MCP
// semantic conventions do, for the server's observer and the client alike.
package tracemeta

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

// Propagator reads and writes W3C trace context and baggage.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Carrier is a _meta object as a propagation.TextMapCarrier.
type Carrier map[string]any

func (c Carrier) Get(key string) string { s, _ := c[key].(string); return s }
func (c Carrier) Set(key, value string) { c[key] = value }
func (c Carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Extract returns ctx with the trace context of meta, when it has one.
func Extract(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return Propagator.Extract(ctx, Carrier(meta))
}

// Inject writes the trace context of ctx into meta.
func Inject(ctx context.Context, meta map[string]any) { Propagator.Inject(ctx, Carrier(meta)) }
