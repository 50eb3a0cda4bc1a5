package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/internal/tracemeta"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// durationBuckets are the semantic conventions' advice for the MCP
// duration histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// meters are the client's histograms (WithMeterProvider).
type meters struct {
	operation, session metric.Float64Histogram
}

func newMeters(m metric.Meter) *meters {
	op, _ := m.Float64Histogram("mcp.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("How long MCP requests took, as the client saw them."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	sess, _ := m.Float64Histogram("mcp.client.session.duration", metric.WithUnit("s"),
		metric.WithDescription("How long MCP sessions lasted."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	return &meters{operation: op, session: sess}
}

// instrument starts the client span of a request (WithTracerProvider),
// with its trace context in the request's _meta, and its duration
// (WithMeterProvider); end ends both with the reply.
func (s *Session) instrument(ctx context.Context, spec *protocol.Spec, m protocol.Method, id wire.ID, params map[string]any) (context.Context, map[string]any, func(reply)) {
	start := time.Now()
	name := m.Name
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", m.Name), attribute.String("jsonrpc.protocol.version", "2.0"),
		attribute.String("jsonrpc.request.id", fmt.Sprint(id.Value())), attribute.String("mcp.protocol.version", spec.Revision)}
	target, _ := params[generated.NameParam(m.Name)].(string)
	switch m.Name {
	case mcp.MethodCallTool:
		if target != "" {
			name += " " + target
		}
		attrs = append(attrs, attribute.String("gen_ai.tool.name", target), attribute.String("gen_ai.operation.name", "execute_tool"))
	case mcp.MethodGetPrompt:
		if target != "" {
			name += " " + target
		}
		attrs = append(attrs, attribute.String("gen_ai.prompt.name", target))
	case mcp.MethodReadResource:
		attrs = append(attrs, attribute.String("mcp.resource.uri", target))
	}
	if c, ok := s.conn.(interface{ sessionID() string }); ok && c.sessionID() != "" { // Streamable HTTP
		attrs = append(attrs, attribute.String("mcp.session.id", sessionid.Digest(c.sessionID())))
	}
	var span trace.Span
	if s.c.tracer != nil {
		ctx, span = s.c.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		meta, _ := params["_meta"].(map[string]any)
		if meta == nil {
			meta = map[string]any{}
		}
		tracemeta.Inject(ctx, meta)
		if params == nil {
			params = map[string]any{}
		}
		params["_meta"] = meta
	}
	return ctx, params, func(r reply) {
		t := spanErrorType(m.Name, r)
		if ms := s.c.meters; ms != nil {
			mattrs := []attribute.KeyValue{attribute.String("mcp.method.name", m.Name), attribute.String("mcp.protocol.version", spec.Revision)}
			if t != "" {
				mattrs = append(mattrs, attribute.String("error.type", t))
			}
			if m.Name == mcp.MethodCallTool && target != "" {
				mattrs = append(mattrs, attribute.String("gen_ai.tool.name", target))
			}
			ms.operation.Record(context.Background(), time.Since(start).Seconds(), metric.WithAttributes(mattrs...))
		}
		if span == nil {
			return
		}
		if t != "" {
			span.SetAttributes(attribute.String("error.type", t))
			span.SetStatus(codes.Error, t)
		}
		var we *wire.Error
		if errors.As(r.err, &we) {
			span.SetAttributes(attribute.String("rpc.response.status_code", strconv.Itoa(we.Code)))
		}
		span.End()
	}
}

// spanErrorType is error.type for a reply: the JSON-RPC error code,
// tool_error for a tool result with isError, else what went wrong.
func spanErrorType(method string, r reply) string {
	var we *wire.Error
	var v *Violation
	switch {
	case r.err == nil:
		if obj, _ := r.result.(map[string]any); method == mcp.MethodCallTool && obj["isError"] == true {
			return "tool_error"
		}
		return ""
	case errors.As(r.err, &we) && (we.Code < -32768 || we.Code > -32000):
		// A code outside the range JSON-RPC reserves is the server's to
		// choose: as a metric attribute it is bounded to one value (the
		// semantic conventions' overflow), as the server's own observer
		// bounds it.
		return "_OTHER"
	case errors.As(r.err, &we):
		return strconv.Itoa(we.Code)
	case errors.As(r.err, &v):
		return "violation"
	case errors.Is(r.err, context.Canceled):
		return "cancelled"
	case errors.Is(r.err, context.DeadlineExceeded):
		return "timeout"
	}
	return "transport"
}
