package observe

import (
	"context"
	"runtime"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
)

// TestOperationForAlternating: the last-used entry never answers for
// another label set, whichever order calls of two tools come in.
func TestOperationForAlternating(t *testing.T) {
	m := newMetrics(prometheus.NewRegistry())
	a := operationLabels{method: "tools/call", tool: "a", transport: "tcp"}
	b := operationLabels{method: "tools/call", tool: "b", transport: "tcp"}
	b2 := b
	b2.tool = string([]byte("b")) // equal labels in another string
	for _, l := range []operationLabels{a, b, a, a, b2, b} {
		m.operationFor(l).Observe(0.001)
	}
	for _, c := range []struct {
		tool string
		want uint64
	}{{"a", 3}, {"b", 3}} {
		var out dto.Metric
		if err := m.operation.WithLabelValues("tools/call", c.tool, "", "", "", "tcp").(prometheus.Histogram).Write(&out); err != nil {
			t.Fatal(err)
		}
		if n := out.GetHistogram().GetSampleCount(); n != c.want {
			t.Errorf("tool %s observed %d times, want %d", c.tool, n, c.want)
		}
	}
}

// TestFinishTwice: a second Finish of a message (a wrapping Observer's
// mistake) before the pooled state is reused counts nothing and does
// not panic.
func TestFinishTwice(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(WithRegisterer(reg))
	_, f := o.Serve(context.Background(), server.Served{Method: "tools/call", Target: "x"})
	f.Finish(server.Answer{})
	f.Finish(server.Answer{})
	var out dto.Metric
	if err := o.metrics.operation.WithLabelValues("tools/call", "_OTHER", "", "", "", "").(prometheus.Histogram).Write(&out); err != nil {
		t.Fatal(err)
	}
	if n := out.GetHistogram().GetSampleCount(); n != 1 {
		t.Errorf("counted %d times, want 1", n)
	}
}

// Two Observers on one registry count together rather than panic, the
// gauges too: they sum every server and transport either watches, and the
// calls in flight of both.
func TestSharedRegistryAndSummedGauges(t *testing.T) {
	reg := prometheus.NewRegistry()
	a, b := New(WithRegisterer(reg)), New(WithRegisterer(reg))
	for _, o := range []*Observer{a, b} {
		_, f := o.Serve(context.Background(), server.Served{Method: "ping"})
		f.Finish(server.Answer{})
	}
	var out dto.Metric
	if err := a.metrics.operation.WithLabelValues("ping", "", "", "", "", "").(prometheus.Histogram).Write(&out); err != nil {
		t.Fatal(err)
	}
	if n := out.GetHistogram().GetSampleCount(); n != 2 {
		t.Errorf("two Observers on one registry counted %d pings, want 2", n)
	}
	a.WatchStreams(func() int { return 2 }, func() int64 { return 10 })
	b.WatchStreams(func() int { return 3 }, func() int64 { return 5 })
	a.metrics.inflight.Add(1)
	b.metrics.inflight.Add(2)
	gauges := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetType() == dto.MetricType_GAUGE {
			gauges[f.GetName()] = f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	if gauges["mcpstack_sse_streams_open"] != 5 || gauges["mcpstack_sse_event_bytes"] != 15 || gauges["mcpstack_calls_in_flight"] != 3 {
		t.Errorf("gauges %v, want the sums of both Observers' transports and calls (5 streams, 15 bytes, 3 calls)", gauges)
	}
}

// A server watched twice counts once in mcpstack_sessions_open, and one
// the program drops leaves the sum instead of being kept alive by it.
func TestWatchedServersCountOnce(t *testing.T) {
	reg := prometheus.NewRegistry()
	o := New(WithRegisterer(reg))
	open := func() float64 {
		t.Helper()
		families, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() == "mcpstack_sessions_open" {
				return f.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no mcpstack_sessions_open")
		return 0
	}
	kept := server.New(conformance.New(conformance.WithStepDelay(0)))
	defer kept.Close()
	openSession(t, kept)
	o.Watch(kept)
	o.Watch(kept)
	if n := open(); n != 1 {
		t.Errorf("one session on a server watched twice: the gauge says %v", n)
	}
	// A server whose *server.Server is dropped while its core serves on
	// (a transport keeps the core) still counts.
	served := func() *core.Server {
		dropped := server.New(plainHandler{}) // no Attach: nothing but the caller keeps the *server.Server
		openSession(t, dropped)
		o.Watch(dropped)
		return core.Of(dropped)
	}()
	runtime.GC()
	runtime.GC()
	if n := open(); n != 2 {
		t.Errorf("two servers with a session each, one served by its core alone: the gauge says %v", n)
	}
	served.Close()
	served = nil
	for range 10 { // a weak pointer clears once the server is collected; Collect forgets it then
		runtime.GC()
		if open(); len(o.metrics.gauges.sessions) == 1 {
			break
		}
	}
	if n := open(); n != 1 || len(o.metrics.gauges.sessions) != 1 {
		t.Errorf("after a server is dropped: the gauge says %v of %d servers, want 1 of 1", n, len(o.metrics.gauges.sessions))
	}
}

// openSession opens an initialized session on srv.
func openSession(t *testing.T, srv *server.Server) {
	t.Helper()
	sess, err := core.Of(srv).NewSession("s", nopStream{}, core.Transport("streamable"))
	if err != nil {
		t.Fatal(err)
	}
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
}

// nopStream takes a session's messages and keeps none.
type nopStream struct{}

func (nopStream) Send([]byte) error { return nil }

// plainHandler is a handler that is not an app: it keeps no reference to
// the server it serves.
type plainHandler struct{ mcp.UnimplementedHandler }
