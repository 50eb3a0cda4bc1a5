package observe

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
