// Package check is `mcpstack check`: it tests a live MCP server against
// the schemas of every revision it accepts. It negotiates each revision,
// walks what the server declares (every list to its last page, resources,
// templates, prompts, completions, logging, subscriptions), calls the
// tools it may with arguments made from their own input schemas (valid
// ones, and invalid ones that each break one keyword), and probes the
// transport with what a client should not send. Everything its client
// sends and receives is recorded and validated as `mcpstack validate`
// validates a recording; what check finds beyond the message schemas
// (a pagination loop, an invalid argument answered as a success, a hang)
// joins those findings, in validate's output formats.
package check

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
)

const usage = `Usage: mcpstack check [flags] URL
       mcpstack check [flags] -- CMD ARGS...

Test a live MCP server against the schemas of every revision it accepts
(Streamable HTTP at URL, or a stdio server started with CMD ARGS: once per
revision, and once more for its probes).

For each revision (--revision narrows them) it negotiates the revision
(initialize, or server/discover for 2026-07-28), then:
  - walks every list to its last page (a cursor that repeats, an item listed
    twice or a list longer than --max-pages is a finding), reads the listed
    resources and the templates' (filled from completions), gets each prompt
    with its required arguments, sets the log level, pings, subscribes and
    unsubscribes where declared;
  - calls the tools it may with arguments made from each inputSchema: valid
    ones (defaults, examples, enums, bounds) must answer a result that
    matches the outputSchema where one is declared; invalid ones (a required
    member left out, a wrong type, a value past a bound, a value not in the
    enum, an extra member where additionalProperties is false) must answer
    a tool error (isError) or -32602, never a success, a crash or a hang;
  - probes the transport: an unknown method, malformed JSON, an invalid
    request, a batch (answered where the revision has batches; elsewhere any
    answer will do, silence is a warning), and over HTTP an unsupported
    MCP-Protocol-Version, a request without its session id, with an unknown
    one, and after DELETE.

Safety: only the tools that declare readOnlyHint are called, unless
--call-all (every tool but those that declare destructiveHint) or
--call NAME,... (those tools, whatever they declare); --skip NAME,... never
calls those. --dry-run prints the tool calls instead of making them.

Every message is recorded (--record FILE keeps the recording); those of the
walk are validated against the negotiated revision as 'mcpstack validate'
would, the probes' answers are judged by the probes (a probe sends what is
invalid on purpose); the findings of both are written as --output says. Exit status: 0 nothing found, 1 findings
(of --fail-on severity or worse), 2 the check could not run (no revision
could be negotiated, a usage error) or did not finish within --max-time.

Examples:
  mcpstack check http://127.0.0.1:8000/mcp
  mcpstack check --header "Authorization: Bearer $TOKEN" --output junit https://mcp.example.com/mcp > check.xml
  mcpstack check --revision 2025-11-25 --call-all -- npx -y @modelcontextprotocol/server-everything
  mcpstack check --dry-run --call-all -- ./my-server --stdio

Flags:
`

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ", ") }
func (m *multi) Set(v string) error { *m = append(*m, v); return nil }

// Command runs `mcpstack check`.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("check", flag.ContinueOnError)
	var (
		cfg       Config
		revs      = fl.String("revision", "", "check only these revisions (`LIST`, comma-separated; default: every one)")
		call      = fl.String("call", "", "call these tools (`NAMES`, comma-separated) whatever their hints say")
		skip      = fl.String("skip", "", "never call these tools (`NAMES`, comma-separated): slow ones, or any you would rather not")
		headers   multi
		output    = fl.String("output", "text", "findings as `text`, json, github (workflow annotations), junit or html (a page with the check's recording as the timeline)")
		recPath   = fl.String("record", "", "keep the recording of the check in `FILE` (what 'mcpstack validate' reads)")
		failOn    = fl.String("fail-on", "error", "exit 1 on findings of this `severity` or worse: error or warning")
		maxTime   = fl.Duration("max-time", 5*time.Minute, "the whole check ends after this `duration`")
		listRules = fl.Bool("list-rules", false, "list check's rules (beside validate's) and exit")
		quiet     = fl.Bool("quiet", false, "no progress lines on stderr")
	)
	fl.Var(&headers, "header", "send this `NAME: VALUE` header with every HTTP request (repeatable): Authorization, ...")
	fl.BoolVar(&cfg.CallAll, "call-all", false, "call every tool but those that declare destructiveHint (default: only those that declare readOnlyHint)")
	fl.BoolVar(&cfg.DryRun, "dry-run", false, "print the tool calls that would be made, on stdout, and make none")
	fl.DurationVar(&cfg.Timeout, "timeout", 10*time.Second, "how long a request may take before it is a hang")
	fl.Float64Var(&cfg.Rate, "rate", 20, "at most this many requests a `second` (0: no limit)")
	fl.IntVar(&cfg.MaxItems, "max-items", 50, "per revision, at most `N` tools called, resources read, templates expanded and prompts got")
	fl.IntVar(&cfg.MaxPages, "max-pages", 100, "a list longer than `N` pages is a finding (it does not end)")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	fl.SetOutput(io.Discard)
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			fl.Usage()
			return 0
		}
		fmt.Fprintf(stderr, "mcpstack check: %v\nRun 'mcpstack check --help' for usage.\n", err)
		return 2
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "mcpstack check: "+format+"\n", a...)
		return 2
	}
	if *listRules {
		writeRules(stdout)
		return 0
	}
	rest := fl.Args()
	switch {
	case len(rest) == 0:
		return fail("no server given: a URL, or -- CMD ARGS\nRun 'mcpstack check --help' for usage.")
	case len(rest) == 1 && (strings.HasPrefix(rest[0], "http://") || strings.HasPrefix(rest[0], "https://")):
		if _, err := url.Parse(rest[0]); err != nil {
			return fail("%v", err)
		}
		cfg.URL = rest[0]
	default:
		cfg.Command = rest
	}
	if cfg.URL == "" && len(headers) > 0 {
		return fail("--header is for an HTTP server")
	}
	cfg.Header = http.Header{}
	for _, h := range headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return fail("--header %q: want NAME: VALUE", h)
		}
		cfg.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	var err error
	var names []string
	if *revs != "" {
		names = list(*revs)
	}
	if cfg.Revisions, err = revisions(names); err != nil {
		return fail("--revision: %v", err)
	}
	cfg.Call, cfg.Skip = list(*call), list(*skip)
	out, err := validate.ParseOutput(*output)
	if err != nil {
		return fail("--output: %v", err)
	}
	failSev := validate.Error
	switch *failOn {
	case "error":
	case "warning":
		failSev = validate.Warning
	default:
		return fail("--fail-on must be error or warning, not %q", *failOn)
	}
	if cfg.Timeout <= 0 || *maxTime <= 0 || cfg.Rate < 0 || cfg.MaxItems < 0 || cfg.MaxPages < 1 {
		return fail("--timeout and --max-time must be positive, --rate and --max-items not negative, --max-pages at least 1")
	}
	cfg.Log = stderr
	if *quiet {
		cfg.Log = io.Discard
	}
	cfg.ServerLog = io.Discard // a stdio server's log is its own, not the report's
	path := *recPath
	if path == "" {
		f, err := os.CreateTemp("", "mcpstack-check-*.jsonl")
		if err != nil {
			return fail("%v", err)
		}
		path = f.Name()
		f.Close()
		defer os.Remove(path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fail("--record: %v", err)
	}
	rec := record.New(f, record.WithFlushInterval(0))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *maxTime)
	defer cancel()
	start := time.Now()
	if cfg.DryRun {
		cfg.DryRunOut = stdout
	}
	c := &checker{cfg: cfg, rec: newRecording(rec, cfg.Rate), file: path}
	c.run(ctx)
	closeErr := rec.Close()
	if err := f.Close(); closeErr == nil {
		closeErr = err
	}
	if closeErr != nil {
		return fail("writing the recording: %v", closeErr)
	}
	for _, s := range c.statuses {
		fmt.Fprintln(cfg.Log, "mcpstack check: "+s)
	}
	if c.ran == 0 {
		return fail("no revision could be checked: the server accepted none of %s", strings.Join(cfg.Revisions, ", "))
	}
	if cfg.DryRun {
		return 0 // what would be sent is on stdout; nothing was judged
	}
	report, err := c.report(validate.NewReporter(out, stdout))
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(cfg.Log, "mcpstack check: %d of %d revisions checked in %v: %d errors, %d warnings\n",
		c.ran, len(cfg.Revisions), time.Since(start).Round(time.Millisecond), report.Errors, report.Warnings)
	for _, e := range report.InputErrors {
		fmt.Fprintf(stderr, "mcpstack check: %v\n", e)
	}
	switch {
	case len(report.InputErrors) > 0:
		return 2
	case report.Failed(failSev):
		return 1
	case c.cut:
		// Nothing found in part of the check is not "nothing found".
		fmt.Fprintf(stderr, "mcpstack check: the check did not finish within --max-time (%v): nothing found in what it checked, the rest unchecked\n", *maxTime)
		return 2
	}
	return 0
}

// list splits a comma-separated flag value, without blanks.
func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

func writeRules(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSEVERITY\tWHAT THE SPECIFICATION SAYS")
	for _, r := range rules {
		spec := r.Spec
		if spec == "" {
			spec = "each probe of the transport says what its revision requires (an error, or a warning for what it only recommends)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.ID, r.Severity, spec)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nand validate's rules on every message the server sent ('mcpstack validate --list-rules').")
}
