package validate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
)

const usage = `Usage: mcpstack validate [flags] LOG...
       mcpstack validate [flags] --client-log FILE --server-log FILE

Check MCP message logs against the protocol: every message against the
JSON Schema of its revision, in the right direction, and the rules that
need a session's history (ids, lifecycle, capabilities, progress,
cancellation). Made for CI: findings as text, JSON, GitHub annotations or
JUnit XML, and an exit code.

LOG is a file, "-" for stdin, a directory (its *.jsonl, *.ndjson, *.log
and *.har files, recursively) or a glob ('logs/*.jsonl'). Gzipped files are read as
they are. Logs are checked one after another, each on its own; lines are
parsed and validated on every core, findings come out in log order, and
memory does not grow with the size of a log.

Formats (--format, detected from the first line by default):
  recorded  one JSON object per line: {"dir":"c2s"|"s2c","msg":MESSAGE}
            with optional "ts" (RFC 3339) and "session"; {"dir":...,
            "raw":"..."} for bytes that were not JSON and {"dir":...,
            "event":"shutdown"} for the end of a session, "refused" for
            an HTTP answer without a JSON-RPC body; "http" holds the facts
            of the exchange (schema/ext/RecordedMessage.json). 'mcpstack
            serve --record FILE' and 'mcpstack proxy --record FILE' write
            it. Sessions are told apart by "session".
  jsonl     one JSON-RPC message (or batch) per line, as on stdio: one
            session; who sent what is inferred (responses by the request
            they answer, requests and notifications by the method table)
  har       an HTTP Archive (browser devtools and proxies export one; a
            .har name or a document opening with {"log" is detected): read
            as the recording of its exchanges; a finding's line is the
            number of its entry
  --client-log FILE --server-log FILE
            a stdio pair: what the client wrote and what the server wrote,
            merged in causal order (a response after its request, the
            client first otherwise)

Revision: from the initialize exchange (the protocolVersion of the
result); for 2026-07-28 from each request's params._meta
"io.modelcontextprotocol/protocolVersion"; otherwise --revision. Supported:
%s.

Exit status: 0 valid (warnings allowed, unless --fail-on warning),
1 findings, 2 usage or I/O error (also when a log could not be read).

Examples:
  mcpstack validate session.jsonl
  mcpstack validate --output github 'recordings/*.jsonl.gz'
  mcpstack validate --revision 2025-06-18 --format jsonl capture.log
  mcpstack validate --client-log stdin.log --server-log stdout.log
  mcpstack validate --rules=-unanswered,-server-early --max-errors 50 logs/
  mcpstack serve --stdio --record rec.jsonl ... && mcpstack validate rec.jsonl

Flags:
`

// Command is `mcpstack validate`.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("validate", flag.ContinueOnError)
	var (
		format    = fl.String("format", "auto", "log `format`: auto, recorded, jsonl or har")
		clientLog = fl.String("client-log", "", "stdio pair: what the client wrote (`FILE`, one message a line)")
		serverLog = fl.String("server-log", "", "stdio pair: what the server wrote (`FILE`)")
		revision  = fl.String("revision", "", "the `REV` of sessions whose log does not tell it")
		output    = fl.String("output", "text", "findings as `text`, json, github (workflow annotations), junit or html (a self-contained page: findings by rule, each session's timeline)")
		rules     = fl.String("rules", "all", "rules to apply: `LIST` of ids, -id turns one off, +id on (e.g. -unanswered,-server-early; schema,envelope for only those)")
		listRules = fl.Bool("list-rules", false, "list the rules with their ids and severities, and exit")
		maxErrors = fl.Int("max-errors", 0, "stop after `N` errors (0: no limit)")
		failOn    = fl.String("fail-on", "error", "exit 1 on findings of this `severity` or worse: error or warning")
		workers   = fl.Int("workers", 0, "parse and validate with `N` goroutines (0: one per CPU)")
		maxLine   = fl.Int("max-line", 64<<20, "longest line in `bytes`; a longer one is a finding and skipped")
		sideOnly  = fl.String("side", "", "keep only the findings on what one `side` sent: client or server")
	)
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), usage, strings.Join(revisionNames(), ", "))
		fl.PrintDefaults()
		fmt.Fprintln(fl.Output(), "\nRules:")
		writeRules(fl.Output())
	}
	fl.SetOutput(io.Discard) // parse errors are reported below, once
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			fl.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "mcpstack validate: %v\nRun 'mcpstack validate --help' for usage.\n", err)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mcpstack validate: "+format+"\n", a...)
		return 2
	}
	if *listRules {
		writeRules(stdout)
		return 0
	}
	f, err := ParseFormat(*format)
	if err != nil {
		return fail("--format: %v", err)
	}
	out, err := ParseOutput(*output)
	if err != nil {
		return fail("--output: %v", err)
	}
	rs, err := ParseRules(*rules)
	if err != nil {
		return fail("--rules: %v", err)
	}
	var failSev Severity
	switch *failOn {
	case "error":
		failSev = Error
	case "warning":
		failSev = Warning
	default:
		return fail("--fail-on must be error or warning, not %q", *failOn)
	}
	if *maxErrors < 0 || *workers < 0 || *maxLine <= 0 {
		return fail("--max-errors and --workers must not be negative, --max-line must be positive")
	}
	if (*clientLog == "") != (*serverLog == "") {
		return fail("--client-log and --server-log go together")
	}
	if fl.NArg() == 0 && *clientLog == "" {
		fmt.Fprintln(stderr, "mcpstack validate: no log given (use - for stdin)")
		fmt.Fprintln(stderr, "Run 'mcpstack validate --help' for usage.")
		return 2
	}
	paths, err := ExpandArgs(fl.Args())
	if err != nil {
		return fail("%v", err)
	}
	var inputs []Input
	var names []string
	stdin := 0
	for _, p := range paths {
		if p == "-" {
			stdin++
		}
		inputs = append(inputs, FileInput(p))
		names = append(names, p)
	}
	if *clientLog != "" {
		for _, side := range []string{*clientLog, *serverLog} {
			if side == "-" {
				stdin++
			}
		}
		inputs = append(inputs, PairInput(FileInput(*clientLog), FileInput(*serverLog)))
		names = append(names, *clientLog, *serverLog)
	}
	if stdin > 1 {
		return fail("stdin (-) can be read once only")
	}
	if *sideOnly != "" && *sideOnly != "client" && *sideOnly != "server" {
		return fail("--side must be client or server, not %q", *sideOnly)
	}
	rep := NewReporter(out, stdout)
	v, err := New(WithFormat(f), WithRevision(*revision), WithRules(rs), WithMaxErrors(*maxErrors),
		WithWorkers(*workers), WithMaxLine(*maxLine), WithSide(*sideOnly), WithFindingHandler(rep.Finding))
	if err != nil {
		return fail("%v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	report := v.Check(ctx, inputs)
	if err := rep.Finish(&report, names); err != nil {
		return fail("writing the report: %v", err)
	}
	for _, e := range report.InputErrors {
		fmt.Fprintf(stderr, "mcpstack validate: %v\n", e)
	}
	switch {
	case len(report.InputErrors) > 0 || ctx.Err() != nil:
		return 2
	case report.Failed(failSev):
		return 1
	}
	return 0
}

func writeRules(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, r := range Rules {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", r.ID, r.Severity, r.Summary)
	}
	tw.Flush()
}
