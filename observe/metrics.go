package observe

import (
	"fmt"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpstack/mcpstack/server"
)

// durationBuckets are the semantic conventions' advice for the MCP
// duration histograms, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// metrics are the Observer's Prometheus collectors.
type metrics struct {
	reg       prometheus.Registerer
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

	// What the gauges read, summed: every server Watch was given and every
	// transport WatchStreams was (a list each, one entry a server or
	// transport an application makes, so bounded by the program).
	watchMu    sync.Mutex
	sessions   []func() int
	streams    []func() int
	eventBytes []func() int64
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		reg: reg,
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
	// The gauges read this Observer's state: on a registry another
	// Observer has registered them with, they stay that one's.
	shared(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpstack_calls_in_flight",
		Help: "Requests and notifications being served.",
	}, func() float64 { return float64(m.inflight.Load()) }))
	shared(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpstack_sessions_open",
		Help: "Sessions the servers hold open.",
	}, func() float64 { return float64(sum(&m.watchMu, m.sessionsNow)) }))
	shared(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpstack_sse_streams_open",
		Help: "Server-sent event streams open (Streamable HTTP).",
	}, func() float64 { return float64(sum(&m.watchMu, m.streamsNow)) }))
	shared(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpstack_sse_event_bytes",
		Help: "Bytes of stream events kept for resumption (Last-Event-ID).",
	}, func() float64 { return float64(sum(&m.watchMu, m.eventBytesNow)) }))
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
	if are, ok := err.(prometheus.AlreadyRegisteredError); ok {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing
		}
	}
	panic(fmt.Sprintf("observe: registering a metric: %v", err)) // a programming error, as MustRegister's
}

// sum adds up what fns give, under mu.
func sum[N int | int64](mu *sync.Mutex, fns func() []func() N) N {
	mu.Lock()
	list := fns()
	mu.Unlock()
	var n N
	for _, f := range list {
		n += f()
	}
	return n
}

func (m *metrics) sessionsNow() []func() int     { return m.sessions }
func (m *metrics) streamsNow() []func() int      { return m.streams }
func (m *metrics) eventBytesNow() []func() int64 { return m.eventBytes }

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
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.streams = append(m.streams, open)
	m.eventBytes = append(m.eventBytes, eventBytes)
}

// watch adds the server's open sessions.
func (m *metrics) watch(srv *server.Server) {
	m.watchMu.Lock()
	defer m.watchMu.Unlock()
	m.sessions = append(m.sessions, srv.SessionCount)
}
