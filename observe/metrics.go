package observe

import (
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/server"
)

// durationBuckets are the semantic conventions' advice for the MCP
// duration histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// metrics are the Observer's Prometheus collectors.
type metrics struct {
	operation *prometheus.HistogramVec
	// operations caches operation's children by their labels, copied on
	// write: a lock-free map lookup on the hot path instead of the
	// vector's hashing and locking.
	mu         sync.Mutex // orders the writers
	operations atomic.Pointer[map[operationLabels]*operation]
	// last is the operation observed last: a server mostly answers the
	// same call again, and comparing six strings (most the same pointers)
	// is cheaper than hashing them for the map.
	last       atomic.Pointer[operation]
	session    *prometheus.HistogramVec
	inflight   atomic.Int64 // read by the mcpstack_calls_in_flight gauge
	refused    *prometheus.CounterVec
	http       *prometheus.CounterVec
	byStatus   [600]atomic.Pointer[prometheus.Counter] // http's children by status, made once
	authFails  *prometheus.CounterVec
	dependency *prometheus.HistogramVec

	gauges *gauges
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		operation: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_server_operation_duration_seconds",
			Help:    "How long the server took to answer an MCP request or take a notification (mcp.server.operation.duration).",
			Buckets: durationBuckets,
		}, []string{"mcp_method_name", "gen_ai_tool_name", "gen_ai_prompt_name", "error_type", "mcp_protocol_version", "network_transport"}),
		session: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mcp_server_session_duration_seconds",
			Help:    "How long MCP sessions lasted (mcp.server.session.duration).",
			Buckets: durationBuckets,
		}, []string{"mcp_protocol_version", "network_transport"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpstack_messages_refused_total",
			Help: "Messages refused by schema validation, by revision, the definition that refused them and the failed keyword.",
		}, []string{"mcp_protocol_version", "definition", "reason"}),
		http: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpstack_http_responses_total",
			Help: "HTTP answers, by status code.",
		}, []string{"code"}),
		authFails: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpstack_auth_failures_total",
			Help: "Requests refused by authentication or authorization, by the WWW-Authenticate error (missing_token when none).",
		}, []string{"reason"}),
	}
	m.dependency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcpstack_dependency_duration_seconds",
		Help:    "How long the calls of handlers to what they depend on took: the chat app's store and model providers.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 11), // 0.5 ms to ~9 min
	}, []string{"kind", "operation", "outcome"})
	m.operation = shared(reg, m.operation)
	m.session = shared(reg, m.session)
	m.refused = shared(reg, m.refused)
	m.http = shared(reg, m.http)
	m.authFails = shared(reg, m.authFails)
	m.dependency = shared(reg, m.dependency)
	m.gauges = shared(reg, &gauges{})
	m.gauges.add(&m.inflight)
	return m
}

// shared registers c with reg, or, where an equal collector is registered
// already (a second Observer on the same registry), returns that one, so
// that the two count together rather than panic.
func shared[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	if are := (prometheus.AlreadyRegisteredError{}); errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("observe: registering a metric: %v", err)) // a programming error, as MustRegister's
}

// operationLabels are the labels of mcp_server_operation_duration_seconds.
type operationLabels struct {
	method, tool, prompt, errType, revision, transport string
}

// operation is one child of the operation histogram, with its labels.
type operation struct {
	labels operationLabels
	obs    prometheus.Observer
}

// operationFor is the operation histogram of a label set.
func (m *metrics) operationFor(l operationLabels) prometheus.Observer {
	if op := m.last.Load(); op != nil && op.labels == l {
		return op.obs
	}
	op := m.operationOf(l)
	m.last.Store(op)
	return op.obs
}

func (m *metrics) operationOf(l operationLabels) *operation {
	if cur := m.operations.Load(); cur != nil {
		if op, ok := (*cur)[l]; ok {
			return op
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.operations.Load()
	next := map[operationLabels]*operation{}
	if cur != nil {
		if op, ok := (*cur)[l]; ok {
			return op
		}
		maps.Copy(next, *cur)
	}
	op := &operation{labels: l, obs: m.operation.WithLabelValues(l.method, l.tool, l.prompt, l.errType, l.revision, l.transport)}
	next[l] = op
	m.operations.Store(&next)
	return op
}

// httpAnswer counts an HTTP answer of status code.
func (m *metrics) httpAnswer(code int) {
	if code < 100 || code >= len(m.byStatus) {
		m.http.WithLabelValues(strconv.Itoa(code)).Inc()
		return
	}
	c := m.byStatus[code].Load()
	if c == nil {
		child := m.http.WithLabelValues(strconv.Itoa(code))
		c = &child
		m.byStatus[code].Store(c)
	}
	(*c).Inc()
}

// watchStreams adds the event streams of an HTTP transport.
func (m *metrics) watchStreams(open func() int, eventBytes func() int64) {
	g := m.gauges
	g.mu.Lock()
	defer g.mu.Unlock()
	g.streams = append(g.streams, open)
	g.eventBytes = append(g.eventBytes, eventBytes)
}

// watch adds the server's open sessions, once however often it is
// watched; a server the program drops leaves the sum.
func (m *metrics) watch(srv *server.Server) {
	g := m.gauges
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions == nil {
		g.sessions = map[weak.Pointer[core.Server]]struct{}{}
	}
	// The core, not srv: the transports keep the core and may outlive the
	// *server.Server they were made from.
	g.sessions[weak.Make(core.Of(srv))] = struct{}{}
}

// gaugeDescs describe the gauges: the calls in flight, the sessions, the
// streams and their events' bytes, in the order Collect sums them.
var gaugeDescs = [4]*prometheus.Desc{
	prometheus.NewDesc("mcpstack_calls_in_flight", "Requests and notifications being served.", nil, nil),
	prometheus.NewDesc("mcpstack_sessions_open", "Sessions the servers hold open.", nil, nil),
	prometheus.NewDesc("mcpstack_sse_streams_open", "Server-sent event streams open (Streamable HTTP).", nil, nil),
	prometheus.NewDesc("mcpstack_sse_event_bytes", "Bytes of stream events kept for resumption (Last-Event-ID).", nil, nil),
}

// gauges collects the gauges, each the sum of what it reads: the calls in
// flight of every Observer on the registry (a second one gets the first
// one's gauges from shared, and adds its own), the sessions of every
// server watched (held weakly, each once), the streams of every
// transport. The lists hold an entry per Observer and transport a program
// makes.
type gauges struct {
	mu         sync.Mutex
	inflight   []*atomic.Int64
	sessions   map[weak.Pointer[core.Server]]struct{}
	streams    []func() int
	eventBytes []func() int64
}

func (g *gauges) add(inflight *atomic.Int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inflight = append(g.inflight, inflight)
}

// Describe is prometheus.Collector's.
func (g *gauges) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range gaugeDescs {
		ch <- d
	}
}

// Collect is prometheus.Collector's: it reads the lists under the lock
// and calls what they hold without it.
func (g *gauges) Collect(ch chan<- prometheus.Metric) {
	g.mu.Lock()
	inflight, streams, eventBytes := g.inflight, g.streams, g.eventBytes
	servers := make([]*core.Server, 0, len(g.sessions))
	for p := range g.sessions {
		if srv := p.Value(); srv != nil {
			servers = append(servers, srv)
		} else {
			delete(g.sessions, p) // collected
		}
	}
	g.mu.Unlock()
	var n [4]float64
	for _, c := range inflight {
		n[0] += float64(c.Load())
	}
	for _, srv := range servers {
		n[1] += float64(srv.SessionCount())
	}
	for _, f := range streams {
		n[2] += float64(f())
	}
	for _, f := range eventBytes {
		n[3] += float64(f())
	}
	for i, d := range gaugeDescs {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, n[i])
	}
}
