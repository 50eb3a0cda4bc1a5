package bench

import (
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"text/tabwriter"
)

// fmtUs formats microseconds as a short duration.
func fmtUs(us float64) string {
	switch {
	case us <= 0:
		return "-"
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 10_000:
		return fmt.Sprintf("%.2fms", us/1e3)
	case us < 1_000_000:
		return fmt.Sprintf("%.1fms", us/1e3)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}

// fmtNum formats a metric value with a sensible number of digits.
func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func fmtBytes(b int64) string {
	const mib = 1 << 20
	return fmt.Sprintf("%.1f MiB", float64(b)/mib)
}

func fmtKinds(m map[string]int64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// runLine is the one-line summary of a run, for progress output.
func runLine(r *Result) string {
	s := fmt.Sprintf("%8.0f calls/s  p50 %-7s p99 %-7s errors %d", r.CallsPerSec, fmtUs(r.Latency.P50), fmtUs(r.Latency.P99), r.Errors)
	if r.ServerCPUPerCall > 0 {
		s += fmt.Sprintf("  server %.1fµs/call", r.ServerCPUPerCall)
	}
	return s
}

func idleLine(r *IdleResult) string {
	s := fmt.Sprintf("%d/%d sessions opened in %.2fs", r.Opened, r.Requested, r.OpenSeconds)
	if r.Measured {
		s += fmt.Sprintf(", RSS %s -> %s: %.2f KiB/session (second half %.2f)", fmtBytes(r.RSSBefore), fmtBytes(r.RSSOpen), r.BytesPerSession/1024, r.BytesPerSessionSecondHalf/1024)
	}
	if r.Errors > 0 {
		s += fmt.Sprintf(", errors %d", r.Errors)
	}
	return s
}

// PrintResult writes a run's result for a person.
func PrintResult(w io.Writer, r *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	name := r.Target
	if name != "" {
		name += "  "
	}
	fmt.Fprintf(tw, "target\t%s%s\n", name, r.Endpoint)
	per := ""
	if r.Transport == "stdio" {
		per = fmt.Sprintf(" x %d in flight", r.Inflight)
	}
	fmt.Fprintf(tw, "load\t%s%s, text %d B, protocol %s\n", plural(r.Sessions, r.Transport+" session"), per, r.TextSize, r.ProtocolVersion)
	if len(r.Responses) > 0 {
		fmt.Fprintf(tw, "responses\t%s\n", fmtKinds(r.Responses))
	}
	fmt.Fprintf(tw, "calls\t%d answered correctly in %.2fs\n", r.Calls, r.Seconds)
	fmt.Fprintf(tw, "calls/s\t%.1f\n", r.CallsPerSec)
	l := r.Latency
	fmt.Fprintf(tw, "latency\tp50 %s  p90 %s  p99 %s  max %s  mean %s\n", fmtUs(l.P50), fmtUs(l.P90), fmtUs(l.P99), fmtUs(l.Max), fmtUs(l.Mean))
	fmt.Fprintf(tw, "errors\t%d", r.Errors)
	if r.Errors > 0 {
		fmt.Fprintf(tw, " (%s)", fmtKinds(r.ErrorKinds))
	}
	fmt.Fprintln(tw)
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(tw, "\t  %s\n", s)
	}
	cpu := fmt.Sprintf("client %.2f cores", r.ClientCPU)
	if r.ServerCPU > 0 {
		cpu += fmt.Sprintf(", server %.2f cores = %.1fµs per call", r.ServerCPU, r.ServerCPUPerCall)
	}
	fmt.Fprintf(tw, "cpu\t%s\n", cpu)
	tw.Flush()
	if generatorBound(r.ClientCPU) {
		fmt.Fprintln(w, generatorNote())
	}
}

// generatorNote warns that the generator, not the server, may have set the
// pace.
func generatorNote() string {
	return fmt.Sprintf("note: the generator used at least 90%% of the %d cores it may use: it, rather than the server, may be the limit (compare server µs/call)", runtime.GOMAXPROCS(0))
}

func generatorBound(clientCPU float64) bool {
	return clientCPU >= 0.9*float64(runtime.GOMAXPROCS(0))
}

// PrintIdle writes an idle result for a person.
func PrintIdle(w io.Writer, r *IdleResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\t%s\n", strings.TrimSpace(r.Target+"  "+r.Endpoint))
	fmt.Fprintf(tw, "sessions\t%d of %d opened in %.2fs (initialize + initialized), held %.1fs\n", r.Opened, r.Requested, r.OpenSeconds, r.HoldSeconds)
	if r.Measured {
		fmt.Fprintf(tw, "server RSS\t%s before, %s half open, %s open, %s after closing\n", fmtBytes(r.RSSBefore), fmtBytes(r.RSSHalf), fmtBytes(r.RSSOpen), fmtBytes(r.RSSClosed))
		fmt.Fprintf(tw, "per session\t%.2f KiB (second half alone: %.2f KiB)\n", r.BytesPerSession/1024, r.BytesPerSessionSecondHalf/1024)
		if d := r.RSSOpen - r.RSSBefore; d > -idleNoise && d < idleNoise {
			fmt.Fprintf(tw, "\t(a growth under %d MiB is within the noise of the server's memory management: open more sessions to see less)\n", idleNoise>>20)
		}
	} else {
		fmt.Fprintf(tw, "server RSS\tnot measured (no --server-pid)\n")
	}
	fmt.Fprintf(tw, "errors\t%d", r.Errors)
	if r.Errors > 0 {
		fmt.Fprintf(tw, " (%s)", fmtKinds(r.ErrorKinds))
	}
	fmt.Fprintln(tw)
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(tw, "\t  %s\n", s)
	}
	tw.Flush()
}

// PrintComparison writes the table of a comparison, with each target's
// ratio to the baseline, and the checks.
func PrintComparison(w io.Writer, c *Comparison) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	ratio := "x " + c.Baseline
	if c.Mode == "idle" {
		fmt.Fprintf(tw, "target\tKiB/session\trounds (min-max)\tsecond half\tsessions\tRSS before\tRSS open\terrors\t%s\t\n", ratio)
		for _, r := range c.Rows {
			last := r.Idle[len(r.Idle)-1]
			var half float64
			for _, x := range r.Idle {
				half += x.BytesPerSessionSecondHalf / 1024 / float64(len(r.Idle))
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d/%d\t%s\t%s\t%d\t%.2f\t\n", r.Target, fmtNum(r.Value), spread(r.PerRound), fmtNum(half),
				last.Opened, last.Requested, fmtBytes(last.RSSBefore), fmtBytes(last.RSSOpen), r.Errors, r.Ratio)
		}
	} else {
		fmt.Fprintf(tw, "target\tcalls/s\trounds (min-max)\tp50\tp90\tp99\tmax\terrors\tclient cpu\tserver µs/call\t%s\tcpu %s\t\n", ratio, ratio)
		for _, r := range c.Rows {
			l := r.Latency
			srv, cpuRatio := "-", "-"
			if r.ServerCPUPerCall > 0 {
				srv = fmt.Sprintf("%.1f", r.ServerCPUPerCall)
			}
			if r.CPURatio > 0 {
				cpuRatio = fmt.Sprintf("%.2f", r.CPURatio)
			}
			fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%d\t%.2f\t%s\t%.2f\t%s\t\n", r.Target, r.Value, spread(r.PerRound),
				fmtUs(l.P50), fmtUs(l.P90), fmtUs(l.P99), fmtUs(l.Max), r.Errors, r.ClientCPU, srv, r.Ratio, cpuRatio)
		}
	}
	tw.Flush()
	printMemory(w, c)
	for _, r := range c.Rows {
		if c.Mode == "load" && generatorBound(r.ClientCPU) {
			fmt.Fprintf(w, "%s: %s\n", r.Target, generatorNote())
		}
		if c.Mode == "idle" && len(r.Idle) > 0 {
			if d := r.Idle[0].RSSOpen - r.Idle[0].RSSBefore; r.Idle[0].Measured && d > -idleNoise && d < idleNoise {
				fmt.Fprintf(w, "%s: the RSS grew by less than %d MiB, within the noise of the server's memory management\n", r.Target, idleNoise>>20)
			}
		}
		if r.Errors > 0 {
			fmt.Fprintf(w, "errors of %s: %s\n", r.Target, fmtKinds(r.ErrorKinds))
			for _, s := range r.ErrorSamples {
				fmt.Fprintf(w, "  %s\n", s)
			}
		}
	}
	for _, ck := range c.Checks {
		verdict := "PASS"
		if !ck.Pass {
			verdict = "FAIL"
		}
		fmt.Fprintf(w, "%s  %s: %s\n", verdict, ck.Expr, ck.Detail)
	}
}

// printMemory prints the servers' memory after the load, where it was read.
func printMemory(w io.Writer, c *Comparison) {
	var rows []CompareRow
	for _, r := range c.Rows {
		if r.Memory != nil {
			rows = append(rows, r)
		}
	}
	if len(rows) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "target\tRSS at rest\tpeak RSS\tanonymous\tfile-backed\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", r.Target, fmtBytes(r.Memory.Rest), fmtBytes(r.Memory.PeakRSS), fmtBytes(r.Memory.Anon), fmtBytes(r.Memory.File))
	}
	tw.Flush()
}

func spread(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return fmtNum(lo) + "-" + fmtNum(hi)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// idleNoise is the RSS change that a Go server's heap growth, garbage
// collection and scavenging make without any sessions.
const idleNoise = 2 << 20
