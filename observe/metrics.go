package observe

import (
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
	session   *prometheus.HistogramVec
	inflight  prometheus.Gauge
	refused   *prometheus.CounterVec
	http      *prometheus.CounterVec
	authFails *prometheus.CounterVec
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
		inflight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mcpstack_calls_in_flight",
			Help: "Requests and notifications being served.",
		}),
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
	reg.MustRegister(m.operation, m.session, m.inflight, m.refused, m.http, m.authFails)
	return m
}

// watch adds the server's open sessions.
func (m *metrics) watch(srv *server.Server) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "mcpstack_sessions_open",
		Help: "Sessions the server holds open.",
	}, func() float64 { return float64(srv.SessionCount()) }))
}
