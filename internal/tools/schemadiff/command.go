package schemadiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/mcpstack/mcpstack/schema"
)

// Exit codes of Command.
const (
	ExitClean       = 0 // no new and no stale differences
	ExitDifferences = 1 // new or stale differences
	ExitError       = 2 // usage or I/O error
)

const usage = `Usage: mcpstack schemadiff --official FILE --revision REV [--json] [--schemas DIR]
       mcpstack schemadiff --from REV --to REV [--format text|markdown|json] [--schemas DIR]

The second form is the changelog between two of mcpstack's own revisions:
methods added, removed, or changed in direction, request or result;
definitions and properties added or removed, made required or optional,
retyped; enum and const changes; capability changes marked as such. Each
change has its pointer (a method name, or DEFINITION/json/pointer).
docs/revisions.md holds it for each pair of consecutive revisions.

Compare mcpstack's schemas for one MCP revision with the official monolithic
schema.json of that revision, and list every definition, property, type,
required, enum, const, anyOf/allOf branch, items, additionalProperties,
format, minimum/maximum/maxItems and $ref target that differs. Descriptions,
titles, defaults, examples, $schema and x-* annotations are ignored.

Differences listed with a reason in <REV>/differences.json, a JSON array of
{"path": ..., "kind": ..., "reason": ...}, are accepted; a listed difference
that no longer occurs is stale.

Output: one line per difference, "STATUS PATH [KIND] ours=... theirs=...",
where a missing side shows as (absent), then a summary line.

Exit status: 0 clean, 1 new or stale differences, 2 usage or I/O error.

Flags:
`

// Command runs "mcpstack schemadiff" with the arguments that follow the
// subcommand name, and returns the process exit code.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("schemadiff", flag.ContinueOnError)
	fl.SetOutput(stderr)
	official := fl.String("official", "", "official monolithic `FILE` (schema.json of the revision)")
	rev := fl.String("revision", "", "MCP `REV`ision to compare, e.g. 2025-11-25 (built in: "+strings.Join(schema.RevisionsIn(schema.FS), ", ")+")")
	asJSON := fl.Bool("json", false, "print the report as one JSON object instead of text")
	dir := fl.String("schemas", "", "read REV from `DIR`/REV on disk instead of the schemas built into this binary")
	from := fl.String("from", "", "changelog: the older `REV`ision")
	to := fl.String("to", "", "changelog: the newer `REV`ision")
	format := fl.String("format", "text", "changelog: text, markdown or json")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), usage)
		fl.PrintDefaults()
	}
	fl.SetOutput(io.Discard) // the flag package would print the usage itself: once, below
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			fl.Usage()
			return ExitClean
		}
		fl.SetOutput(stderr)
		fmt.Fprintf(stderr, "schemadiff: %v\n", err)
		fl.Usage()
		return ExitError
	}
	fl.SetOutput(stderr)
	if fl.NArg() > 0 {
		return usageError(fl, "unexpected argument %q", fl.Arg(0))
	}
	if *from != "" || *to != "" {
		return changelog(fl, *from, *to, *format, *dir, stdout, stderr)
	}
	if *official == "" || *rev == "" {
		return usageError(fl, "--official and --revision are required (or --from and --to, for a changelog)")
	}
	b, err := os.ReadFile(*official)
	if err != nil {
		fmt.Fprintf(stderr, "schemadiff: %v\n", err)
		return ExitError
	}
	var fsys fs.FS = schema.FS
	if *dir != "" {
		fsys = os.DirFS(*dir)
	} else if !known(*rev) {
		return usageError(fl, "revision %q is not built in (known: %s); use --schemas DIR for a folder on disk", *rev, strings.Join(schema.RevisionsIn(schema.FS), ", "))
	}
	rep, err := Compare(fsys, *rev, b)
	if err != nil {
		fmt.Fprintf(stderr, "schemadiff: %v\n", err)
		return ExitError
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintf(stderr, "schemadiff: %v\n", err)
			return ExitError
		}
	} else if err := WriteText(stdout, rep, *official); err != nil {
		fmt.Fprintf(stderr, "schemadiff: %v\n", err)
		return ExitError
	}
	if !rep.Clean() {
		return ExitDifferences
	}
	return ExitClean
}

// changelog runs the --from/--to form.
func changelog(fl *flag.FlagSet, from, to, format, dir string, stdout, stderr io.Writer) int {
	if from == "" || to == "" {
		return usageError(fl, "--from and --to go together")
	}
	var fsys fs.FS = schema.FS
	if dir != "" {
		fsys = os.DirFS(dir)
	} else {
		for _, r := range []string{from, to} {
			if !known(r) {
				return usageError(fl, "revision %q is not built in (known: %s); use --schemas DIR for a folder on disk", r, strings.Join(schema.RevisionsIn(schema.FS), ", "))
			}
		}
	}
	cl, err := Changes(fsys, from, to)
	if err == nil {
		err = WriteChangelog(stdout, cl, format)
	}
	if err != nil {
		fmt.Fprintf(stderr, "schemadiff: %v\n", err)
		return ExitError
	}
	return ExitClean
}

func usageError(fl *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(fl.Output(), "schemadiff: "+format+"\n", a...)
	fl.Usage()
	return ExitError
}

func known(rev string) bool {
	for _, r := range schema.RevisionsIn(schema.FS) {
		if r == rev {
			return true
		}
	}
	return false
}

// WriteText writes a report as text: one line per difference, then a summary
// line. official names the official file in the summary.
func WriteText(w io.Writer, rep *Report, official string) error {
	var b strings.Builder
	for _, d := range rep.Differences {
		b.WriteString(FormatDifference(d))
		b.WriteByte('\n')
	}
	verdict := "clean"
	if !rep.Clean() {
		verdict = "NOT clean"
	}
	fmt.Fprintf(&b, "schemadiff %s vs %s: %d definitions, %d differences (%d new, %d accepted, %d stale): %s\n",
		rep.Revision, official, rep.Definitions, len(rep.Differences), rep.New, rep.Accepted, rep.Stale, verdict)
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatDifference renders one difference as a line of text (no newline).
func FormatDifference(d Difference) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %s [%s]", d.Status, d.Path, d.Kind)
	if d.Status != StatusStale {
		fmt.Fprintf(&b, " ours=%s theirs=%s", side(d.Ours), side(d.Theirs))
	} else {
		b.WriteString(" listed in " + DifferencesFile + " but no longer occurs")
	}
	if d.Reason != "" {
		b.WriteString(" -- " + d.Reason)
	}
	return b.String()
}

func side(v json.RawMessage) string {
	if v == nil {
		return "(absent)"
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return string(v)
	}
	return b.String()
}
