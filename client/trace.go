package client

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/internal/tracemeta"
	"github.com/mcpstack/mcpstack/wire"
)

// startSpan starts the client span of a request (WithTracerProvider) and
// puts its trace context in the request's _meta; end ends it with the
// reply.
func (s *Session) startSpan(ctx context.Context, spec *wire.Spec, m wire.Method, id wire.ID, params map[string]any) (context.Context, map[string]any, func(reply)) {
	name := m.Name
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", m.Name), attribute.String("jsonrpc.protocol.version", "2.0"),
		attribute.String("jsonrpc.request.id", fmt.Sprint(id.Value())), attribute.String("mcp.protocol.version", spec.Revision)}
	target, _ := params[wire.NameParam(m.Name)].(string)
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
		attrs = append(attrs, attribute.String("mcp.session.id", c.sessionID()))
	}
	ctx, span := s.c.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	meta, _ := params["_meta"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
	}
	tracemeta.Inject(ctx, meta)
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = meta
	return ctx, params, func(r reply) {
		if t := spanErrorType(m.Name, r); t != "" {
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
