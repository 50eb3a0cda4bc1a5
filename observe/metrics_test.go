package observe

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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
