package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Exit codes of Command.
const (
	ExitOK     = 0 // the run completed without errors (and every check passed)
	ExitErrors = 1 // calls or sessions failed, or a check failed
	ExitUsage  = 2 // usage error, or the run could not start
)

const usage = `Usage:
  mcpstack bench --url URL | --stdio "CMD ARGS" [flags]
  mcpstack bench --idle N --url URL [--server-pid PID] [flags]
  mcpstack bench --target NAME=URL --target 'NAME=stdio:CMD ARGS' ... [--baseline NAME] [--rounds N] [--check EXPR] [flags]

Load an MCP server with concurrent sessions that call the tool "echo"
({"text": string}, answered by one text content with the same text), as
served by "mcpstack serve --profile bench", and report calls/s and latency.

Over Streamable HTTP (--url) each session initializes, sends
notifications/initialized, then POSTs one tools/call after another, reading
the answer from a JSON body or an SSE stream (both are accepted; the counts
are shown). Over stdio (--stdio) each session is a server process started
with the command (split like a shell would, without expansion), spoken to
with newline-delimited JSON-RPC, with --inflight calls outstanding at all
times. From protocol 2026-07-28 on there is no initialize: each call
carries params._meta and the Mcp-Method and Mcp-Name headers.

Every answer is checked: a non-2xx status, a JSON-RPC error, isError, or
anything but one text content with exactly the text sent (each call's text
differs) counts as an error. Latency is measured per call from sending to
the matching response; p50/p90/p99 are nearest-rank percentiles over the
calls of the measured window (after --warmup). "client cpu" is the CPU this
process used; if it nears one core per core it may have, the generator
rather than the server is the limit. Server CPU per call is shown for stdio
servers and for --server-pid.

--idle N opens N sessions (initialize and notifications/initialized, after
8 warm-up sessions that call once and close), holds them for --idle-hold,
and with --server-pid reports the growth of the server's VmRSS
(/proc/PID/status) per session; then it closes them with DELETE.

With --target (repeated) the targets run in rounds, interleaved (A, B, C,
A, B, C, ...), and a table relates each to --baseline (default: the first).
--server-pid NAME=PID names a target's server process. --check EXPR tests
the compared metric: "A>=B", "A>=K*B", "A<=K*B" between targets, "A>=N" or
"A<=N" against a constant in the table's unit (calls/s, or KiB per session
with --idle). Prefixed with "cpu:", a check compares calls per second of
server CPU (1e6 / server µs/call; needs the server's PID), which a busy
machine or a saturated generator disturbs far less than calls/s. The
"cpu x BASE" column is that ratio. Prefixed with "hwm:" or "anon:", it
compares the server's peak RSS or its anonymous RSS, in KiB, read right
after the target's last round; with "rest:", its RSS before the first
round (a table prints them, with the file-backed part, for every target
with a PID). Examples: --check 'ours>=2*gosdk'
--check 'cpu:ours>=2*gosdk' --check 'hwm:ours<=1.2*mcpgo' --check 'ours<=8'
(with --idle).

Only loopback targets (127.0.0.0/8, ::1, localhost) are loaded unless
--allow-remote is given. Every run is bounded: --duration (or --calls,
capped at 5m) plus --warmup plus a grace period.

Exit status: 0 no errors and every check passed, 1 errors or a failed check,
2 usage error or a run that could not start.

Flags:
`

// Command runs "mcpstack bench" with the arguments that follow the
// subcommand name and returns the process exit code.
func Command(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return command(ctx, args, stdout, stderr)
}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ", ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func command(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("bench", flag.ContinueOnError)
	// flag prints the usage itself on -h and on errors; collect it and
	// send it to stdout for -h, to stderr otherwise.
	var parseOut strings.Builder
	fl.SetOutput(&parseOut)
	var (
		c                  Config
		targets, pids, cks multiFlag
		urlF, stdioF, base string
		rounds, idle       int
		idleHold           time.Duration
		asJSON             bool
		cpuProfile         string
	)
	fl.StringVar(&urlF, "url", "", "Streamable HTTP endpoint `URL` to load, e.g. http://127.0.0.1:8080/mcp")
	fl.StringVar(&stdioF, "stdio", "", "start the server `\"CMD ARGS\"` (once per session) and speak MCP over its stdin and stdout")
	fl.Var(&targets, "target", "`NAME=URL` or NAME=stdio:CMD ARGS; repeat to compare targets in interleaved rounds")
	fl.StringVar(&base, "baseline", "", "`NAME` of the target the ratios are relative to (default: the first --target)")
	fl.IntVar(&rounds, "rounds", 3, "rounds of a comparison: each target runs `N` times, interleaved")
	fl.Var(&cks, "check", "check `EXPR` over the compared metric, e.g. 'ours>=2*gosdk' (repeatable)")
	fl.IntVar(&c.Sessions, "sessions", 0, "concurrent sessions `N` (default 16 over HTTP, 1 over stdio: each stdio session is a server process)")
	fl.IntVar(&c.Inflight, "inflight", DefaultInflight, "calls `N` outstanding at once on each stdio connection (HTTP sessions have one)")
	fl.DurationVar(&c.Duration, "duration", DefaultDuration, "measured time `D` of each run, after the warmup")
	fl.Int64Var(&c.Calls, "calls", 0, "end each run after `N` measured calls instead (capped at 5m, or at --duration if given)")
	fl.DurationVar(&c.Warmup, "warmup", DefaultWarmup, "call for `D` before measuring (0 for none)")
	fl.IntVar(&c.TextSize, "text-size", DefaultTextSize, "length `N` in bytes of the echoed text")
	fl.StringVar(&c.ProtocolVersion, "protocol-version", DefaultProtocolVersion, "MCP protocol `REVISION` to ask for")
	fl.DurationVar(&c.Timeout, "timeout", DefaultTimeout, "longest wait `D` for one answer")
	fl.Var(&pids, "server-pid", "server process `PID` (or NAME=PID with --target) whose CPU and RSS are measured")
	fl.IntVar(&idle, "idle", 0, "open `N` idle sessions and report the server's RSS growth per session instead of loading it")
	fl.DurationVar(&idleHold, "idle-hold", 2*time.Second, "how long `D` the idle sessions stay open before the RSS is read")
	fl.BoolVar(&asJSON, "json", false, "print the result as one JSON object")
	fl.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the generator itself to `FILE` (to see what a call costs the client)")
	fl.BoolVar(&c.AllowRemote, "allow-remote", false, "allow targets that are not on a loopback address")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(stdout, parseOut.String())
			return ExitOK
		}
		io.WriteString(stderr, parseOut.String())
		return ExitUsage
	}
	set := map[string]bool{}
	fl.Visit(func(f *flag.Flag) { set[f.Name] = true })
	bad := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "bench: "+format+"\n", a...)
		fmt.Fprintln(stderr, "Run 'mcpstack bench --help' for usage.")
		return ExitUsage
	}
	if fl.NArg() > 0 {
		return bad("unexpected argument %q", fl.Arg(0))
	}
	if c.Calls > 0 && !set["duration"] {
		c.Duration = DefaultCallsCap
	}
	if set["warmup"] && c.Warmup == 0 {
		c.Warmup = -1 // Config: negative is none, 0 the default
	}
	for name, v := range map[string]int{"sessions": c.Sessions, "inflight": c.Inflight, "text-size": c.TextSize, "rounds": rounds, "idle": idle} {
		if set[name] && v <= 0 {
			return bad("--%s must be positive", name)
		}
	}
	if c.Duration <= 0 || c.Timeout <= 0 || c.Calls < 0 || idleHold <= 0 {
		return bad("--duration, --timeout and --idle-hold must be positive, --calls not negative")
	}

	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return bad("--cpuprofile: %v", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return bad("--cpuprofile: %v", err)
		}
		defer pprof.StopCPUProfile()
	}

	compare := len(targets) > 0
	if compare && (urlF != "" || stdioF != "") {
		return bad("give either --target (repeated) or one of --url and --stdio")
	}
	if !compare {
		if (urlF == "") == (stdioF == "") {
			return bad("give exactly one of --url and --stdio (or --target NAME=...)")
		}
		if base != "" || set["rounds"] || len(cks) > 0 {
			return bad("--baseline, --rounds and --check need --target")
		}
		t := Target{URL: urlF}
		if stdioF != "" {
			argv, err := splitCommand(stdioF)
			if err != nil {
				return bad("--stdio: %v", err)
			}
			t = Target{Command: argv}
		}
		if len(pids) > 1 {
			return bad("--server-pid given more than once")
		}
		if len(pids) == 1 {
			pid, err := strconv.Atoi(pids[0])
			if err != nil || pid <= 0 {
				return bad("--server-pid %q: want a process id", pids[0])
			}
			t.PID = pid
		}
		if idle > 0 {
			r, err := Idle(ctx, c, t, idle, idleHold)
			if err != nil {
				fmt.Fprintf(stderr, "bench: %v\n", err)
				return ExitUsage
			}
			printOut(stdout, asJSON, r, func() { PrintIdle(stdout, r) })
			return exitFor(r.Errors, true)
		}
		r, err := Run(ctx, c, t)
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return ExitUsage
		}
		printOut(stdout, asJSON, r, func() { PrintResult(stdout, r) })
		return exitFor(r.Errors, true)
	}

	var ts []Target
	index := map[string]int{}
	for _, spec := range targets {
		t, err := parseTarget(spec)
		if err != nil {
			return bad("--target %q: %v", spec, err)
		}
		if _, dup := index[t.Name]; dup {
			return bad("--target %q: the name %s is taken", spec, t.Name)
		}
		index[t.Name] = len(ts)
		ts = append(ts, t)
	}
	for _, p := range pids {
		name, v, ok := strings.Cut(p, "=")
		pid, err := strconv.Atoi(v)
		i, known := index[name]
		if !ok || err != nil || pid <= 0 || !known {
			return bad("--server-pid %q: want NAME=PID with the NAME of a --target", p)
		}
		ts[i].PID = pid
	}
	o := CompareOptions{Baseline: base, Rounds: rounds, Idle: idle, IdleHold: idleHold, Checks: cks, Progress: stderr}
	for _, s := range cks {
		if _, err := ParseCheck(s); err != nil {
			return bad("%v", err)
		}
	}
	cmp, err := Compare(ctx, c, ts, o)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return ExitUsage
	}
	printOut(stdout, asJSON, cmp, func() { PrintComparison(stdout, cmp) })
	return exitFor(cmp.Errors(), cmp.Passed())
}

// parseTarget parses NAME=URL or NAME=stdio:CMD ARGS.
func parseTarget(spec string) (Target, error) {
	name, v, ok := strings.Cut(spec, "=")
	if !ok || name == "" || v == "" {
		return Target{}, errors.New("want NAME=URL or NAME=stdio:CMD ARGS")
	}
	if strings.ContainsAny(name, " \t<>=*") {
		return Target{}, errors.New("a target name has no spaces and none of < > = *")
	}
	if cmd, ok := strings.CutPrefix(v, "stdio:"); ok {
		argv, err := splitCommand(cmd)
		if err != nil {
			return Target{}, err
		}
		return Target{Name: name, Command: argv}, nil
	}
	return Target{Name: name, URL: v}, nil
}

func printOut(w io.Writer, asJSON bool, v any, text func()) {
	if !asJSON {
		text()
		return
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}

func exitFor(errs int64, passed bool) int {
	if errs > 0 || !passed {
		return ExitErrors
	}
	return ExitOK
}
