package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CompareOptions say how Compare runs its targets.
type CompareOptions struct {
	// Baseline names the target the ratios are relative to (default: the
	// first).
	Baseline string
	// Rounds is how many times each target runs (default 3). Runs are
	// interleaved: A, B, C, A, B, C, ... so that drift of the machine
	// spreads over all targets alike.
	Rounds int
	// Idle, when positive, measures idle sessions instead of load: each
	// run opens this many sessions (see Idle).
	Idle int
	// IdleHold is how long the idle sessions stay open before the RSS is
	// read (default 2s).
	IdleHold time.Duration
	// Checks are expressions over the compared metric, such as
	// "ours>=2*gosdk", "ours>=mcpgo" or "ours<=8" (see ParseCheck).
	Checks []string
	// Pause is the rest between two runs (default 200ms).
	Pause time.Duration
	// Progress gets one line per run; nil for none.
	Progress io.Writer
}

// Comparison is the outcome of Compare.
type Comparison struct {
	Mode     string        `json:"mode"`   // "load" or "idle"
	Metric   string        `json:"metric"` // "calls_per_sec" or "rss_kib_per_session"
	Baseline string        `json:"baseline"`
	Rounds   int           `json:"rounds"`
	Config   Config        `json:"-"`
	Rows     []CompareRow  `json:"rows"`
	Checks   []CheckResult `json:"checks,omitempty"`
}

// CompareRow is one target's results over all rounds.
type CompareRow struct {
	Target   string    `json:"target"`
	Endpoint string    `json:"endpoint"`
	Value    float64   `json:"value"`     // the metric over all rounds
	PerRound []float64 `json:"per_round"` // the metric of each round
	Ratio    float64   `json:"ratio"`     // Value / the baseline's Value

	// Load mode.
	Calls            int64            `json:"calls,omitempty"`
	Errors           int64            `json:"errors"`
	ErrorKinds       map[string]int64 `json:"error_kinds,omitempty"`
	ErrorSamples     []string         `json:"error_samples,omitempty"`
	Latency          *Latency         `json:"latency,omitempty"`
	Responses        map[string]int64 `json:"responses,omitempty"`
	ClientCPU        float64          `json:"client_cpu_cores,omitempty"`
	ServerCPUPerCall float64          `json:"server_cpu_us_per_call,omitempty"`
	// CPURatio is the baseline's server CPU per call over this target's:
	// how many times fewer CPU cycles this server spends on a call.
	CPURatio float64   `json:"server_cpu_ratio,omitempty"`
	Runs     []*Result `json:"runs,omitempty"`
	// Memory is the server's right after its last round (needs its PID).
	Memory *Memory `json:"memory,omitempty"`

	// Idle mode.
	Idle []*IdleResult `json:"idle,omitempty"`
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Expr   string  `json:"expr"`
	Left   float64 `json:"left"`
	Right  float64 `json:"right"` // factor × the other target, or the constant
	Ratio  float64 `json:"ratio"` // left / the other target's value (0 for a constant)
	Pass   bool    `json:"pass"`
	Detail string  `json:"detail"`
}

// Compare runs every target Rounds times, interleaved, and relates each
// one's metric to the baseline's: calls/s under load, or RSS KiB per idle
// session when o.Idle is set.
func Compare(ctx context.Context, c Config, targets []Target, o CompareOptions) (*Comparison, error) {
	if len(targets) == 0 {
		return nil, errors.New("compare: no targets")
	}
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.IdleHold <= 0 {
		o.IdleHold = 2 * time.Second
	}
	if o.Pause <= 0 {
		o.Pause = 200 * time.Millisecond
	}
	if o.Baseline == "" {
		o.Baseline = targets[0].Name
	}
	base := -1
	seen := map[string]bool{}
	for i, t := range targets {
		if t.Name == "" || seen[t.Name] {
			return nil, fmt.Errorf("compare: target names must be unique and not empty (%q)", t.Name)
		}
		seen[t.Name] = true
		if t.Name == o.Baseline {
			base = i
		}
		if err := t.validate(c.AllowRemote); err != nil {
			return nil, err
		}
	}
	if base < 0 {
		return nil, fmt.Errorf("compare: baseline %q is not a target", o.Baseline)
	}
	checks := make([]check, len(o.Checks))
	for i, s := range o.Checks {
		ck, err := ParseCheck(s)
		if err != nil {
			return nil, err
		}
		for _, n := range []string{ck.left, ck.right} {
			if n != "" && !seen[n] {
				return nil, fmt.Errorf("check %q: no target %q", s, n)
			}
		}
		if ck.metric != "" && o.Idle > 0 {
			return nil, fmt.Errorf("check %q: %s: compares load runs, not idle sessions", s, ck.metric)
		}
		checks[i] = ck
	}

	cmp := &Comparison{Mode: "load", Metric: "calls_per_sec", Baseline: o.Baseline, Rounds: o.Rounds, Config: c}
	if o.Idle > 0 {
		cmp.Mode, cmp.Metric = "idle", "rss_kib_per_session"
	}
	rows := make([]CompareRow, len(targets))
	rest := make([]int64, len(targets)) // VmRSS at rest, before any round; 0: not read
	for i, t := range targets {
		rows[i] = CompareRow{Target: t.Name, Endpoint: t.endpoint()}
		if t.PID > 0 && o.Idle == 0 {
			if rss, err := procRSS(t.PID); err == nil {
				rest[i] = rss
			} else if o.Progress != nil {
				fmt.Fprintf(o.Progress, "%s: no RSS at rest: %v\n", t.Name, err)
			}
		}
	}
	for round := 1; round <= o.Rounds; round++ {
		for i, t := range targets {
			if round > 1 || i > 0 {
				if !sleepCtx(ctx, o.Pause) {
					return nil, ctx.Err()
				}
			}
			if o.Idle > 0 {
				r, err := Idle(ctx, c, t, o.Idle, o.IdleHold)
				if err != nil {
					return nil, fmt.Errorf("%s, round %d: %w", t.Name, round, err)
				}
				rows[i].Idle = append(rows[i].Idle, r)
				rows[i].PerRound = append(rows[i].PerRound, r.BytesPerSession/1024)
				if o.Progress != nil {
					fmt.Fprintf(o.Progress, "round %d/%d  %-16s %s\n", round, o.Rounds, t.Name, idleLine(r))
				}
				continue
			}
			r, err := Run(ctx, c, t)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", t.Name, round, err)
			}
			rows[i].Runs = append(rows[i].Runs, r)
			rows[i].PerRound = append(rows[i].PerRound, r.CallsPerSec)
			if round == o.Rounds && t.PID > 0 {
				// Right after its last round: a server read later has
				// rested longer and given memory back.
				if m, err := procMemory(t.PID); err == nil {
					m.Rest = rest[i]
					rows[i].Memory = &m
				}
			}
			if o.Progress != nil {
				fmt.Fprintf(o.Progress, "round %d/%d  %-16s %s\n", round, o.Rounds, t.Name, runLine(r))
			}
		}
	}
	for i := range rows {
		rows[i].aggregate(o.Idle > 0)
	}
	for i := range rows {
		if b := rows[base].Value; b > 0 {
			rows[i].Ratio = rows[i].Value / b
		}
		if b, v := rows[base].ServerCPUPerCall, rows[i].ServerCPUPerCall; b > 0 && v > 0 {
			rows[i].CPURatio = b / v
		}
	}
	cmp.Rows = rows
	value, measured := map[string]float64{}, map[string]bool{}
	// The prefixed metrics' values; a target is there only when measured.
	other := map[string]map[string]float64{}
	for m := range metricUnits {
		other[m] = map[string]float64{}
	}
	for _, r := range rows {
		value[r.Target] = r.Value
		measured[r.Target] = r.measured()
		if r.ServerCPUPerCall > 0 {
			other["cpu"][r.Target] = 1e6 / r.ServerCPUPerCall
		}
		if r.Memory != nil {
			other["hwm"][r.Target], other["anon"][r.Target] = float64(r.Memory.PeakRSS>>10), float64(r.Memory.Anon>>10)
			if r.Memory.Rest > 0 {
				other["rest"][r.Target] = float64(r.Memory.Rest >> 10)
			}
		}
	}
	for _, ck := range checks {
		if ck.metric == "" {
			cmp.Checks = append(cmp.Checks, ck.eval(value, func(t string) bool { return measured[t] }, cmp.unit()))
			continue
		}
		m := other[ck.metric]
		cmp.Checks = append(cmp.Checks, ck.eval(m, func(t string) bool { _, ok := m[t]; return ok }, metricUnits[ck.metric]))
	}
	return cmp, nil
}

func (c *Comparison) unit() string {
	if c.Mode == "idle" {
		return "KiB/session"
	}
	return "calls/s"
}

// Passed reports whether every check passed.
func (c *Comparison) Passed() bool {
	for _, ck := range c.Checks {
		if !ck.Pass {
			return false
		}
	}
	return true
}

// Errors is the number of failed calls and sessions over all runs.
func (c *Comparison) Errors() int64 {
	var n int64
	for _, r := range c.Rows {
		n += r.Errors
	}
	return n
}

// measured reports whether the row's value rests on a measurement.
func (row *CompareRow) measured() bool {
	if len(row.Idle) > 0 {
		for _, r := range row.Idle {
			if !r.Measured || r.Opened == 0 {
				return false
			}
		}
		return true
	}
	return row.Calls > 0
}

func (row *CompareRow) aggregate(idle bool) {
	kinds := map[string]int64{}
	addKinds := func(m map[string]int64, samples []string) {
		for k, v := range m {
			kinds[k] += v
		}
		for _, s := range samples {
			if len(row.ErrorSamples) < maxSamples {
				row.ErrorSamples = append(row.ErrorSamples, s)
			}
		}
	}
	if idle {
		var sum float64
		for _, r := range row.Idle {
			sum += r.BytesPerSession / 1024
			row.Errors += r.Errors
			addKinds(r.ErrorKinds, r.ErrorSamples)
		}
		row.Value = sum / float64(len(row.Idle))
	} else {
		var secs, cpu float64
		var lat []int64
		srvKnown := true
		var srvNs int64
		for _, r := range row.Runs {
			row.Calls += r.Calls
			row.Errors += r.Errors
			secs += r.Seconds
			cpu += r.ClientCPU * r.Seconds
			lat = append(lat, r.lat...)
			srvNs += r.serverNs
			srvKnown = srvKnown && r.serverNs > 0
			addKinds(r.ErrorKinds, r.ErrorSamples)
			for k, v := range r.Responses {
				if row.Responses == nil {
					row.Responses = map[string]int64{}
				}
				row.Responses[k] += v
			}
		}
		if secs > 0 {
			row.Value = float64(row.Calls) / secs
			row.ClientCPU = cpu / secs
		}
		if srvKnown && row.Calls > 0 {
			row.ServerCPUPerCall = float64(srvNs) / 1e3 / float64(row.Calls)
		}
		l := summarize(lat)
		row.Latency = &l
	}
	if len(kinds) > 0 {
		row.ErrorKinds = kinds
	}
}

// check is a parsed check expression: left op factor*right, or left op
// constant when right is "".
type check struct {
	metric string // "" (the table's), cpu, hwm or anon
	expr   string
	left   string
	op     string
	factor float64
	right  string
}

// checkRE is compiled on first use: every mcpstack command links this
// package, and only bench parses checks.
var checkRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*(>=|<=)\s*(?:([0-9]*\.?[0-9]+)\s*\*\s*)?([A-Za-z_][A-Za-z0-9_.-]*|[0-9]*\.?[0-9]+)\s*$`)
})

// metricUnits are the metrics a check's prefix names, with their units.
var metricUnits = map[string]string{
	"cpu":  "calls per server CPU-second",
	"hwm":  "KiB peak RSS",
	"anon": "KiB anonymous RSS",
	"rest": "KiB RSS at rest",
}

// ParseCheck parses a check: "A>=B", "A>=K*B", "A<=K*B" relate target A's
// metric to target B's; "A>=N" and "A<=N" compare it with a constant in the
// unit of the table (calls/s, or KiB per idle session). Under load, a
// prefix compares another metric: "cpu:" calls per second of server CPU
// (the inverse of server µs/call), which does not depend on how busy the
// machine or the generator was; "hwm:" the server's peak RSS in KiB,
// "anon:" its anonymous RSS after the load and "rest:" its RSS before the
// first round (all need its PID).
func ParseCheck(s string) (check, error) {
	rest, metric := strings.TrimSpace(s), ""
	if p, after, ok := strings.Cut(rest, ":"); ok && metricUnits[p] != "" {
		rest, metric = after, p
	}
	m := checkRE().FindStringSubmatch(rest)
	if m == nil {
		return check{}, fmt.Errorf("check %q: want [cpu:|hwm:|anon:|rest:]NAME>=NAME, NAME>=K*NAME, NAME<=K*NAME or NAME<=NUMBER", s)
	}
	ck := check{metric: metric, expr: s, left: m[1], op: m[2], factor: 1, right: m[4]}
	if m[3] != "" {
		ck.factor, _ = strconv.ParseFloat(m[3], 64)
	}
	if v, err := strconv.ParseFloat(m[4], 64); err == nil {
		if m[3] != "" {
			return check{}, fmt.Errorf("check %q: a constant takes no factor", s)
		}
		ck.factor, ck.right = v, ""
	}
	return ck, nil
}

func (ck check) eval(value map[string]float64, measured func(target string) bool, unit string) CheckResult {
	l := value[ck.left]
	r := ck.factor
	what := strconv.FormatFloat(ck.factor, 'g', -1, 64) + " " + unit
	res := CheckResult{Expr: ck.expr, Left: l}
	if ck.right != "" {
		r = ck.factor * value[ck.right]
		what = fmt.Sprintf("%s×%s %s", strconv.FormatFloat(ck.factor, 'g', -1, 64), ck.right, fmtNum(value[ck.right]))
		if value[ck.right] > 0 {
			res.Ratio = l / value[ck.right]
		}
	}
	res.Right = r
	if ck.op == ">=" {
		res.Pass = l >= r
	} else {
		res.Pass = l <= r
	}
	res.Detail = fmt.Sprintf("%s %s %s %s (%s)", ck.left, fmtNum(l), ck.op, what, fmtNum(r))
	if !measured(ck.left) || ck.right != "" && !measured(ck.right) {
		// A target without a measurement (every call failed, or no RSS
		// read) proves nothing.
		res.Pass = false
		res.Detail += ": no measurement"
	}
	if res.Ratio > 0 {
		res.Detail += fmt.Sprintf(", ratio %.2f", res.Ratio)
	}
	return res
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
