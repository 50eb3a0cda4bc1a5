package bench

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"time"
)

// window decides which calls are made and which are measured: calls that
// start during the warmup are made but not measured; then either calls
// start until the deadline, or a fixed number of tickets is handed out.
type window struct {
	start    time.Time     // measurement starts (end of warmup)
	deadline time.Time     // no call starts after it (in --calls mode: a cap)
	tickets  *atomic.Int64 // remaining measured calls in --calls mode, else nil
}

func newWindow(now time.Time, c *Config) *window {
	w := &window{start: now.Add(c.Warmup)}
	if c.Calls > 0 {
		w.tickets = new(atomic.Int64)
		w.tickets.Store(c.Calls)
	}
	w.deadline = w.start.Add(c.Duration)
	return w
}

// admit reports whether a call starting at t is to be made, and whether it
// is measured.
func (w *window) admit(t time.Time) (run, measured bool) {
	if t.Before(w.start) {
		return true, false
	}
	if !t.Before(w.deadline) {
		return false, false
	}
	if w.tickets != nil {
		if w.tickets.Add(-1) < 0 {
			return false, false
		}
	}
	return true, true
}

// recorder collects the outcome of the calls of one goroutine; recorders
// are merged when the run ends.
type recorder struct {
	lat      []int64 // latencies of the measured calls that succeeded, ns
	errs     map[string]int64
	samples  []string
	lastDone time.Time // when the last measured call ended
	kinds    map[string]int64
}

const maxSamples = 5

func newRecorder() *recorder {
	return &recorder{errs: map[string]int64{}, kinds: map[string]int64{}}
}

func (r *recorder) ok(measured bool, start, end time.Time) {
	if !measured {
		return
	}
	r.lat = append(r.lat, int64(end.Sub(start)))
	if end.After(r.lastDone) {
		r.lastDone = end
	}
}

func (r *recorder) fail(err error, measured bool, end time.Time) {
	kind, msg := errTransport, err.Error()
	var ce *callError
	if errors.As(err, &ce) {
		kind, msg = ce.kind, ce.msg
	} else if errors.Is(err, context.DeadlineExceeded) {
		kind = errTimeout
	}
	r.errs[kind]++
	if len(r.samples) < maxSamples {
		r.samples = append(r.samples, kind+": "+msg)
	}
	if measured && end.After(r.lastDone) {
		r.lastDone = end
	}
}

func (r *recorder) merge(o *recorder) {
	r.lat = append(r.lat, o.lat...)
	for k, v := range o.errs {
		r.errs[k] += v
	}
	for _, s := range o.samples {
		if len(r.samples) < maxSamples {
			r.samples = append(r.samples, s)
		}
	}
	if o.lastDone.After(r.lastDone) {
		r.lastDone = o.lastDone
	}
	for k, v := range o.kinds {
		r.kinds[k] += v
	}
}

// Latency is a latency summary in microseconds.
type Latency struct {
	P50  float64 `json:"p50_us"`
	P90  float64 `json:"p90_us"`
	P99  float64 `json:"p99_us"`
	Max  float64 `json:"max_us"`
	Mean float64 `json:"mean_us"`
}

// summarize sorts lat (ns) and returns its percentiles (nearest rank).
func summarize(lat []int64) Latency {
	if len(lat) == 0 {
		return Latency{}
	}
	slices.Sort(lat)
	q := func(p float64) float64 {
		i := int(p*float64(len(lat))+0.5) - 1
		i = max(0, min(i, len(lat)-1))
		return float64(lat[i]) / 1e3
	}
	var sum float64
	for _, v := range lat {
		sum += float64(v)
	}
	return Latency{P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: float64(lat[len(lat)-1]) / 1e3, Mean: sum / float64(len(lat)) / 1e3}
}
