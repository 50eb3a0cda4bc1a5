// Package observe makes what an mcpstack server serves visible: Prometheus
// metrics and OpenTelemetry traces on the MCP semantic conventions
// (opentelemetry.io/docs/specs/semconv/gen-ai/mcp), and an access log
// line per request whose records carry the trace.
//
//	o := observe.New(observe.WithTracerProvider(tp), observe.WithNames(app.Registered))
//	srv := server.New(handler, server.WithObserver(o))
//	o.Watch(srv)                          // sessions open
//	mux.Handle("/metrics", o.Metrics())
//	handler := o.Middleware(mux)          // traceparent headers, HTTP statuses
//
// Without a tracer provider there are no spans, and nothing is paid for
// them; labels are bounded: tool and prompt names only from what is
// registered (WithNames), never from the client's input.
//
// The Prometheus client imports expvar, whose init registers /debug/vars
// (the command line and memory statistics) on http.DefaultServeMux: serve
// a mux of your own, as above, not the default one.
package observe

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpstack/mcpstack/internal/logfmt"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
)

// other is the label of a name that is not registered (OpenTelemetry's
// overflow value): a client cannot make a label of its own.
const other = "_OTHER"

// Observer is a server.Observer with Prometheus metrics, OpenTelemetry
// spans and an access log. It is safe for concurrent use.
type Observer struct {
	reg       *prometheus.Registry // nil when the caller registers elsewhere
	tracer    trace.Tracer         // nil: no spans
	log       *slog.Logger
	names     func(method, name string) bool
	metrics   *metrics
	digests   digests     // of the live sessions' ids
	calls     sync.Pool   // *call, given back by Finish: one per message served
	accessLog logfmt.Sink // log's handler, for the access line
}

var _ server.Observer = (*Observer)(nil)

type config struct {
	registerer prometheus.Registerer
	noMetrics  bool // WithRegisterer(nil)
	tp         trace.TracerProvider
	log        *slog.Logger
	names      func(method, name string) bool
}

// Option configures an Observer.
type Option func(*config)

// WithRegisterer registers the metrics with r instead of a registry of
// the Observer's own (whose Metrics serves them). Observers that share r
// count together, gauges included. WithRegisterer(nil)
// counts no metrics at all (Metrics serves 404), for a server that keeps
// only the access log or spans.
func WithRegisterer(r prometheus.Registerer) Option {
	return func(c *config) { c.registerer, c.noMetrics = r, r == nil }
}

// WithTracerProvider makes spans with tp (default: none).
func WithTracerProvider(tp trace.TracerProvider) Option { return func(c *config) { c.tp = tp } }

// WithLogger writes the access log to l: one line per request at info,
// its arguments at debug (default: no access log).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// WithNames says which tool and prompt names may be labels: known(method,
// name) for tools/call and prompts/get (app.(*App).Registered). Without it
// no name is a label.
func WithNames(known func(method, name string) bool) Option {
	return func(c *config) { c.names = known }
}

// New returns an Observer.
func New(opts ...Option) *Observer {
	c := config{}
	for _, opt := range opts {
		opt(&c)
	}
	o := &Observer{log: c.log, names: c.names}
	if c.log != nil {
		o.accessLog = logfmt.SinkOf(c.log.Handler())
	}
	reg := c.registerer
	if reg == nil && !c.noMetrics {
		o.reg = prometheus.NewRegistry()
		o.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		reg = o.reg
	}
	if reg != nil {
		o.metrics = newMetrics(reg)
	}
	if c.tp != nil {
		o.tracer = c.tp.Tracer("github.com/mcpstack/mcpstack/observe")
	}
	return o
}

// Metrics serves the metrics in the Prometheus text format (for /metrics);
// with WithRegisterer, serve that registry instead.
func (o *Observer) Metrics() http.Handler {
	if o.reg == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(o.reg, promhttp.HandlerOpts{})
}

// Watch adds the sessions srv holds open to the metrics: the gauge is the
// sum over every server watched, each counted once however often it is
// watched. The Observer does not keep srv alive: a server the program
// drops leaves the sum when it is collected.
func (o *Observer) Watch(srv *server.Server) {
	if o.metrics != nil {
		o.metrics.watch(srv)
	}
}

// WatchStreams adds an HTTP transport's open event streams and the bytes
// of events it keeps for resumption to the metrics (mcphttp.WithObserver
// does it for Streamable HTTP). The functions are kept, and summed, for
// the Observer's life: each call adds them again, so watch each transport
// an application keeps once.
func (o *Observer) WatchStreams(open func() int, eventBytes func() int64) {
	if o.metrics != nil {
		o.metrics.watchStreams(open, eventBytes)
	}
}

// label is a tool or prompt name as a label or span name part: only a
// registered one.
func (o *Observer) label(method, name string) string {
	if name == "" {
		return ""
	}
	if o.names != nil && o.names(method, name) {
		return name
	}
	return other
}

// Serve starts observing a request or notification (server.Observer).
func (o *Observer) Serve(ctx context.Context, m server.Served) (context.Context, server.Finisher) {
	method := m.Method
	if !knownMethods[method] {
		method = other
	}
	c, _ := o.calls.Get().(*call)
	if c == nil {
		c = new(call)
	}
	*c = call{o: o, method: method, revision: bounded(m.Revision, knownRevisions), start: time.Now()}
	if o.log != nil {
		c.logged = m
	}
	if o.metrics != nil {
		o.metrics.inflight.Add(1)
	}
	switch m.Method {
	case mcp.MethodCallTool:
		c.tool = o.label(m.Method, m.Target)
	case mcp.MethodGetPrompt:
		c.prompt = o.label(m.Method, m.Target)
	}
	c.transport = networkTransport(m.Transport)
	if m.Session != "" && (o.tracer != nil || o.log != nil) {
		// A session id is a bearer secret: spans and info lines carry a
		// digest that ties a session's together, made once for both.
		c.session = o.digests.of(m.Session)
	}
	if o.tracer != nil {
		ctx, c.span = o.startSpan(ctx, m, method, c.tool, c.prompt, c.transport, c.session)
	}
	if o.log != nil {
		c.ctx = ctx
	}
	return ctx, c
}

// call is one message being observed, from Serve to Finish (the core
// calls Finish once), then reused.
type call struct {
	o                       *Observer
	method, revision        string
	start                   time.Time
	tool, prompt, transport string
	session                 string          // the session id's digest ("" without one)
	span                    trace.Span      // nil without tracing
	ctx                     context.Context // for the access log's line
	logged                  server.Served   // what the access line says (with an access log)
	attrs                   [6]slog.Attr    // the access line's attributes
}

// Finish records how the message was answered (server.Finisher).
func (c *call) Finish(a server.Answer) {
	o := c.o
	if o == nil { // finished already, and not reused yet: a second Finish is the caller's mistake
		return
	}
	now := time.Now()
	d := now.Sub(c.start)
	errType := errorType(a)
	revision := bounded(a.Revision, knownRevisions)
	if revision == "" {
		revision = c.revision
	}
	if m := o.metrics; m != nil {
		m.inflight.Add(-1)
		m.operationFor(operationLabels{c.method, c.tool, c.prompt, errType, revision, c.transport}).Observe(d.Seconds())
		if a.Refused != "" {
			m.refused.WithLabelValues(revision, a.Refused, a.RefusedBy).Inc()
		}
	}
	if span := c.span; span != nil {
		if revision != "" {
			span.SetAttributes(attribute.String("mcp.protocol.version", revision))
		}
		if a.Code != 0 {
			span.SetAttributes(attribute.String("rpc.response.status_code", strconv.Itoa(a.Code)))
		}
		if errType != "" {
			span.SetAttributes(attribute.String("error.type", errType))
			span.SetStatus(codes.Error, errType)
		}
		span.End()
	}
	if o.log != nil {
		o.access(c.ctx, &c.logged, c.session, a, errType, now, d, &c.attrs)
	}
	*c = call{} // nothing of this message stays reachable from the pool
	o.calls.Put(c)
}

// SessionEnded observes a session's end (server.Observer).
func (o *Observer) SessionEnded(s server.EndedSession) {
	o.digests.forget(s.ID)
	if o.metrics == nil || !s.Everywhere {
		return // a copy that leaves this process while the session lives on elsewhere did not last that long
	}
	o.metrics.session.WithLabelValues(s.Revision, networkTransport(s.Transport)).Observe(s.Lasted.Seconds())
}

// errorType is the semantic conventions' error.type: the JSON-RPC error
// code, tool_error for a tool result with isError, cancelled for a request
// the client gave up. A code outside the range JSON-RPC reserves (which a
// handler could pass on from anywhere) is _OTHER: the label set stays
// bounded.
func errorType(a server.Answer) string {
	switch {
	case a.Code != 0 && (a.Code < -32768 || a.Code > -32000):
		return other
	case a.Code != 0:
		return strconv.Itoa(a.Code)
	case a.ToolError:
		return "tool_error"
	case a.Unanswered:
		return "cancelled"
	}
	return ""
}

// known are the method names and revisions of the generated tables: the
// only values of those labels (anything else, which only a client can
// send, is _OTHER).
var knownMethods, knownRevisions = func() (map[string]bool, map[string]bool) {
	methods := map[string]bool{}
	for _, m := range mcp.Methods {
		methods[m.Name] = true
	}
	revisions := map[string]bool{}
	for _, r := range mcp.Revisions {
		revisions[r] = true
	}
	return methods, revisions
}()

// bounded is v where known has it ("" stays ""), else _OTHER.
func bounded(v string, known map[string]bool) string {
	if v == "" || known[v] {
		return v
	}
	return other
}

// networkTransport is network.transport for an mcpstack transport name:
// pipe for stdio, tcp for the HTTP ones.
func networkTransport(t string) string {
	switch t {
	case "":
		return ""
	case "stdio":
		return "pipe"
	}
	return "tcp"
}

// access writes the request's access line (requests only).
// attrs is room for the line's attributes: the pooled call's, since a
// slice handed to a handler through an interface escapes.
func (o *Observer) access(ctx context.Context, m *server.Served, session string, a server.Answer, errType string, at time.Time, d time.Duration, attrs *[6]slog.Attr) {
	if o.log == nil || m.ID.IsZero() {
		return
	}
	if o.accessLog.Enabled(ctx, slog.LevelInfo) {
		outcome := "ok"
		switch {
		case a.Refused != "":
			outcome = "refused"
		case errType != "":
			outcome = "error " + errType
		}
		id := slog.Int64("id", m.ID.Int()) // an integer id prints the same, without formatting a string first
		if !m.ID.IsInt() {
			id = slog.String("id", clip(m.ID.String()))
		}
		// The handler itself: Logger.LogAttrs would walk the stack for a
		// source position the line does not print.
		*attrs = [6]slog.Attr{slog.String("method", clip(m.Method)), id, slog.Duration("duration", d), slog.String("outcome", outcome)}
		n := 4
		if m.Target != "" {
			attrs[n] = slog.String("target", clip(m.Target))
			n++
		}
		if session != "" { // the digest; debug lines carry the id itself
			attrs[n] = slog.String("session", session)
			n++
		}
		_ = o.accessLog.Log(ctx, at, slog.LevelInfo, "mcp request", attrs[:n])
	}
	if o.log.Enabled(ctx, slog.LevelDebug) {
		debug := []slog.Attr{slog.String("id", m.ID.String())}
		if m.Session != "" {
			debug = append(debug, slog.String("session_id", m.Session))
		}
		if m.Arguments != nil {
			debug = append(debug, slog.Any("arguments", m.Arguments))
		}
		o.log.LogAttrs(ctx, slog.LevelDebug, "mcp request detail", debug...)
	}
}
