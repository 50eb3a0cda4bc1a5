package observe

import (
	"context"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	clipx "github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/internal/tracemeta"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
)

// startSpan starts the server span of a message: its parent is the trace
// context of params._meta, else the one already in ctx (the HTTP
// request's traceparent, see HTTP).
//
// method is the method as a label: a known one, else _OTHER, so that a
// client's made-up method cannot name spans; the attribute keeps it, cut.
func (o *Observer) startSpan(ctx context.Context, m server.Served, method, tool, prompt, transport, session string) (context.Context, trace.Span) {
	if pctx := tracemeta.Extract(ctx, m.Meta); trace.SpanContextFromContext(pctx).IsValid() {
		ctx = pctx
	}
	name := method
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", clip(m.Method)), attribute.String("jsonrpc.protocol.version", "2.0")}
	// The span name has the target only where it is registered: span
	// names stay few, the attribute says what the client asked for.
	switch {
	case tool != "":
		if tool != other {
			name += " " + tool
		}
		attrs = append(attrs, attribute.String("gen_ai.tool.name", clip(m.Target)), attribute.String("gen_ai.operation.name", "execute_tool"))
	case prompt != "":
		if prompt != other {
			name += " " + prompt
		}
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", clip(m.Target)))
	case m.Method == mcp.MethodReadResource && m.Target != "":
		attrs = append(attrs, attribute.String("mcp.resource.uri", clip(m.Target)))
	}
	if !m.ID.IsZero() {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", clip(fmt.Sprint(m.ID.Value()))))
	}
	if m.Revision != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", clip(m.Revision)))
	}
	if session != "" { // the id's digest (Serve); never under 2026-07-28, which has no sessions
		attrs = append(attrs, attribute.String("mcp.session.id", session))
	}
	if transport != "" {
		attrs = append(attrs, attribute.String("network.transport", transport))
	}
	return o.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// Ask starts the client span of a request the server sends the client
// during a call (server.Observer): a child of the call's span, its trace
// context in the request's _meta.
func (o *Observer) Ask(ctx context.Context, r server.Asked, meta map[string]any) func(code int) {
	if o.tracer == nil {
		return func(int) {}
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", r.Method), attribute.String("jsonrpc.protocol.version", "2.0"),
		attribute.String("jsonrpc.request.id", fmt.Sprint(r.ID.Value())), attribute.String("mcp.protocol.version", r.Revision)}
	if r.Session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", sessionid.Digest(r.Session)))
	}
	ctx, span := o.tracer.Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	tracemeta.Inject(ctx, meta)
	return func(code int) {
		if code != 0 {
			e := strconv.Itoa(code)
			span.SetAttributes(attribute.String("error.type", e), attribute.String("rpc.response.status_code", e))
			span.SetStatus(codes.Error, e)
		}
		span.End()
	}
}

// maxClientString bounds what a span or the access line keeps of a string
// the client chose (a tool name, a resource URI, a request id), whatever
// the tracer provider's limits: a library user's provider may have none,
// and its spans wait in memory for a slow exporter.
const maxClientString = 256

// clip cuts s to maxClientString bytes at a rune boundary, marked with "…".
func clip(s string) string { return clipx.String(s, maxClientString) }
