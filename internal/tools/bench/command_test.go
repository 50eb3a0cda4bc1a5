package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

func runCommand(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := command(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestCommandHelp(t *testing.T) {
	code, out, errs := runCommand(t, "--help")
	if code != ExitOK || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	for _, want := range []string{"Usage:", "--url", "--stdio", "--sessions", "--inflight", "--duration", "--calls", "--text-size", "--protocol-version", "--warmup", "--json", "--idle", "--server-pid", "--target", "--baseline", "--check"} {
		if !strings.Contains(out, strings.TrimPrefix(want, "-")) {
			t.Errorf("help lacks %s", want)
		}
	}
}

func TestCommandUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--url", "http://127.0.0.1:1/mcp", "--stdio", "x"},
		{"--url", "http://127.0.0.1:1/mcp", "extra"},
		{"--url", "http://127.0.0.1:1/mcp", "--sessions", "0"},
		{"--url", "http://127.0.0.1:1/mcp", "--check", "a>=b"},
		{"--url", "http://127.0.0.1:1/mcp", "--server-pid", "x"},
		{"--url", "http://10.0.0.1/mcp"},
		{"--stdio", "'unterminated"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--url", "http://127.0.0.1:1/mcp"},
		{"--target", "noequals"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--target", "a=http://127.0.0.1:2/mcp"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--server-pid", "b=1"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--check", "a>=2*"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--check", "a>=b"},
		{"--target", "a=http://127.0.0.1:1/mcp", "--baseline", "b"},
		{"--bogus"},
	} {
		code, out, errs := runCommand(t, args...)
		if code != ExitUsage || out != "" || errs == "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}

func TestCommandRun(t *testing.T) {
	_, srv := newFakeServer(t, "sse", "")
	code, out, errs := runCommand(t, "--url", srv.URL+"/mcp", "--calls", "50", "--warmup", "0", "--sessions", "2")
	if code != ExitOK {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	for _, want := range []string{`calls/s\s+\d`, `p50 \d`, `p99 \d`, `errors\s+0\n`, `responses\s+sse 52\n`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	_, bad := newFakeServer(t, "json", "wrong-text")
	code, out, _ = runCommand(t, "--url", bad.URL+"/mcp", "--calls", "50", "--warmup", "0", "--json")
	if code != ExitErrors {
		t.Fatalf("exit %d with errors", code)
	}
	var r Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if r.Errors == 0 || r.ErrorKinds[errContent] != r.Errors || r.Calls+r.Errors != 50 {
		t.Errorf("result %+v", r)
	}
}

func TestCommandCompare(t *testing.T) {
	_, a := newFakeServer(t, "sse", "")
	_, b := newFakeServer(t, "json", "")
	args := []string{"--target", "a=" + a.URL + "/mcp", "--target", "b=" + b.URL + "/mcp", "--baseline", "b",
		"--rounds", "2", "--duration", "200ms", "--warmup", "50ms", "--sessions", "2", "--check", "a>=0.001*b", "--check", "a>=1"}
	code, out, errs := runCommand(t, args...)
	if code != ExitOK {
		t.Fatalf("exit %d:\n%s\n%s", code, out, errs)
	}
	if strings.Count(errs, "round ") != 4 || !strings.Contains(errs, "round 2/2  b") {
		t.Errorf("progress:\n%s", errs)
	}
	for _, want := range []string{"x b", "PASS  a>=0.001*b", "PASS  a>=1"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCommand(t, append(args, "--check", "a>=1000*b", "--json")...)
	if code != ExitErrors {
		t.Fatalf("exit %d with a failing check", code)
	}
	var cmp Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatal(err)
	}
	if len(cmp.Rows) != 2 || cmp.Rows[1].Ratio != 1 || len(cmp.Rows[0].PerRound) != 2 || len(cmp.Checks) != 3 || cmp.Checks[2].Pass {
		t.Errorf("comparison %+v", cmp)
	}
}

func TestCompareIdle(t *testing.T) {
	_, a := newFakeServer(t, "sse", "")
	_, b := newFakeServer(t, "json", "")
	cmp, err := Compare(context.Background(), Config{}, []Target{{Name: "a", URL: a.URL + "/mcp"}, {Name: "b", URL: b.URL + "/mcp"}},
		CompareOptions{Rounds: 1, Idle: 20, IdleHold: time.Millisecond, Checks: []string{"a<=100000"}})
	if err != nil {
		t.Fatal(err)
	}
	// Without --server-pid there is no RSS: the check cannot pass.
	if cmp.Mode != "idle" || len(cmp.Checks) != 1 || cmp.Checks[0].Pass || !strings.Contains(cmp.Checks[0].Detail, "no measurement") {
		t.Errorf("%+v", cmp)
	}
	var buf bytes.Buffer
	PrintComparison(&buf, cmp)
	if !strings.Contains(buf.String(), "KiB/session") {
		t.Errorf("table:\n%s", buf.String())
	}
}

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"server --stdio", []string{"server", "--stdio"}},
		{"  taskset -c 0  bin/x  ", []string{"taskset", "-c", "0", "bin/x"}},
		{`a 'b c' "d e" f\ g`, []string{"a", "b c", "d e", "f g"}},
		{`a "x\"y" 'it''s'`, []string{"a", `x"y`, "its"}},
		{`a "" ''`, []string{"a", "", ""}},
		{`a "$HOME"`, []string{"a", "$HOME"}},
	}
	for _, tt := range tests {
		got, err := splitCommand(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: %q, %v; want %q", tt.in, got, err, tt.want)
		}
		if again, _ := splitCommand(joinCommand(got)); !reflect.DeepEqual(again, got) {
			t.Errorf("joinCommand(%q) = %q does not split back", got, joinCommand(got))
		}
	}
	for _, bad := range []string{"", "   ", `a 'b`, `a "b`, `a\`} {
		if _, err := splitCommand(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseTarget(t *testing.T) {
	tg, err := parseTarget("ours=stdio:bin/mcpstack serve --stdio")
	if err != nil || tg.Name != "ours" || !reflect.DeepEqual(tg.Command, []string{"bin/mcpstack", "serve", "--stdio"}) {
		t.Errorf("%+v, %v", tg, err)
	}
	tg, err = parseTarget("gosdk=http://127.0.0.1:9/mcp?x=1")
	if err != nil || tg.Name != "gosdk" || tg.URL != "http://127.0.0.1:9/mcp?x=1" {
		t.Errorf("%+v, %v", tg, err)
	}
	for _, bad := range []string{"x", "=http://a", "a=", "a b=http://x", "a*b=http://x"} {
		if _, err := parseTarget(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseCheck(t *testing.T) {
	value := map[string]float64{"ours": 200, "gosdk": 100, "mcpgo": 250, "ours-novalidate": 220}
	measured := map[string]bool{"ours": true, "gosdk": true, "mcpgo": true, "ours-novalidate": true}
	tests := []struct {
		expr string
		pass bool
	}{
		{"ours>=2*gosdk", true},
		{"ours >= 2.5 * gosdk", false},
		{"ours>=mcpgo", false},
		{"ours<=mcpgo", true},
		{"ours>=0.85*ours-novalidate", true},
		{"ours>=.95*ours-novalidate", false},
		{"ours<=8", false},
		{"ours>=150", true},
	}
	for _, tt := range tests {
		ck, err := ParseCheck(tt.expr)
		if err != nil {
			t.Errorf("%q: %v", tt.expr, err)
			continue
		}
		if r := ck.eval(value, func(t string) bool { return measured[t] }, "calls/s"); r.Pass != tt.pass {
			t.Errorf("%q: pass %v (%s), want %v", tt.expr, r.Pass, r.Detail, tt.pass)
		}
	}
	ck, err := ParseCheck("cpu:ours>=2*gosdk")
	if err != nil || ck.metric != "cpu" || ck.left != "ours" || ck.right != "gosdk" || ck.factor != 2 {
		t.Errorf("cpu: check %+v, %v", ck, err)
	}
	for _, metric := range []string{"hwm", "anon", "rest"} {
		ck, err := ParseCheck(metric + ":ours<=1.2*mcpgo")
		if err != nil || ck.metric != metric || ck.op != "<=" || ck.factor != 1.2 || ck.right != "mcpgo" {
			t.Errorf("%s: check %+v, %v", metric, ck, err)
		}
	}
	for _, bad := range []string{"", "ours", "ours>gosdk", "ours>=2*", "ours>=2*3", "2>=ours", "ours=>gosdk", "cpu:", "mem:ours>=1"} {
		if _, err := ParseCheck(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestSummarize(t *testing.T) {
	var lat []int64
	for i := 100; i >= 1; i-- {
		lat = append(lat, int64(i)*1000) // 1µs..100µs, shuffled order
	}
	l := summarize(lat)
	if l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 || l.Mean != 50.5 {
		t.Errorf("%+v", l)
	}
	if (summarize(nil) != Latency{}) {
		t.Error("empty")
	}
	if l := summarize([]int64{5000}); l.P50 != 5 || l.P99 != 5 {
		t.Errorf("one sample: %+v", l)
	}
}

func TestWindow(t *testing.T) {
	now := time.Now()
	w := newWindow(now, &Config{Warmup: time.Second, Duration: time.Second})
	if run, m := w.admit(now); !run || m {
		t.Error("warmup call")
	}
	if run, m := w.admit(now.Add(1500 * time.Millisecond)); !run || !m {
		t.Error("measured call")
	}
	if run, _ := w.admit(now.Add(2 * time.Second)); run {
		t.Error("call after the deadline")
	}
	w = newWindow(now, &Config{Calls: 2, Duration: time.Minute})
	for i, want := range []bool{true, true, false, false} {
		if run, _ := w.admit(now); run != want {
			t.Errorf("ticket %d: %v", i, run)
		}
	}
}

func TestCompareStdioCPU(t *testing.T) {
	if _, err := procCPU(os.Getpid()); err != nil {
		t.Skip("no /proc")
	}
	a, b := stdioTarget(t, "ok"), stdioTarget(t, "ok")
	a.Name, b.Name = "a", "b"
	// A fixed number of calls: a race-instrumented child may take longer
	// to start than a short measuring window lasts. Enough of them that
	// the child's CPU time, counted in clock ticks (10 ms), is not zero on
	// a fast or a busy machine (the flake: 2000 echo calls could take less
	// than a tick).
	c := Config{Inflight: 4, Calls: 20000, Duration: 30 * time.Second, Warmup: -1}
	cmp, err := Compare(context.Background(), c, []Target{a, b}, CompareOptions{Rounds: 1, Checks: []string{"cpu:a>=0.01*b", "a>=0.01*b"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cmp.Rows {
		if r.Errors != 0 || r.Calls == 0 || r.ServerCPUPerCall <= 0 || r.CPURatio <= 0 {
			t.Errorf("row %+v", r)
		}
	}
	if !cmp.Passed() {
		t.Errorf("checks %+v", cmp.Checks)
	}
	if _, err := Compare(context.Background(), c, []Target{a}, CompareOptions{Idle: 5, Checks: []string{"cpu:a>=1"}}); err == nil {
		t.Error("cpu: check in idle mode: no error")
	}
}

// With the servers' PIDs, a comparison reads their memory at rest and
// after the load, prints it, and checks it (both fakes serve from this
// process: the test holds the reads and the checks, not what they read).
func TestCompareMemory(t *testing.T) {
	if _, err := procRSS(os.Getpid()); err != nil {
		t.Skip("no /proc")
	}
	_, a := newFakeServer(t, "json", "")
	_, b := newFakeServer(t, "json", "")
	pid := os.Getpid() // both fakes serve from this process
	c := Config{Sessions: 1, Duration: 100 * time.Millisecond, Warmup: -1}
	cmp, err := Compare(context.Background(), c, []Target{{Name: "a", URL: a.URL + "/mcp", PID: pid}, {Name: "b", URL: b.URL + "/mcp", PID: pid}},
		CompareOptions{Rounds: 1, Checks: []string{"rest:a<=2*b", "hwm:a<=2*b", "anon:a<=2*b", "rest:a<=1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range cmp.Rows {
		// Not PeakRSS >= Rest: the kernel sums its RSS counters per CPU,
		// so two reads can disagree by a few hundred KiB.
		if m := r.Memory; m == nil || m.Rest <= 0 || m.PeakRSS <= 0 || m.Anon <= 0 {
			t.Errorf("%s: memory %+v", r.Target, r.Memory)
		}
	}
	for i, want := range []bool{true, true, true, false} { // no process rests in 1 KiB
		if cmp.Checks[i].Pass != want {
			t.Errorf("check %+v, want pass %v", cmp.Checks[i], want)
		}
	}
	var buf bytes.Buffer
	PrintComparison(&buf, cmp)
	if !strings.Contains(buf.String(), "RSS at rest") {
		t.Errorf("table:\n%s", buf.String())
	}
}
