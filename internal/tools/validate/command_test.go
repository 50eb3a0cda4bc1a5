package validate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// A small log with one error, one warning and a valid line.
const cmdLog = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}
{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text"}]}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
`

const validLog = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func runCLI(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	if stdin != "" {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() { w.WriteString(stdin); w.Close() }()
		old := os.Stdin
		os.Stdin = r
		defer func() { os.Stdin = old; r.Close() }()
	}
	code = Command(args, &o, &e)
	return o.String(), e.String(), code
}

func TestCommandExitCodes(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.jsonl", cmdLog)
	good := writeFile(t, dir, "good.jsonl", validLog)
	warn := writeFile(t, dir, "warn.jsonl", validLog+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	empty := writeFile(t, dir, "empty.jsonl", "")
	for _, c := range []struct {
		name string
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{"valid", []string{good}, 0, ": valid", ""},
		{"findings", []string{bad}, 1, "1 error, 1 warning", ""},
		{"warning only", []string{warn}, 0, "0 errors, 1 warning", ""},
		{"fail on warning", []string{"--fail-on", "warning", warn}, 1, "1 warning", ""},
		{"rule off", []string{"--rules=-result-schema", bad}, 0, "0 errors, 1 warning", ""},
		{"only some rules", []string{"--rules", "envelope,schema", bad}, 0, ": valid", ""},
		{"no input", nil, 2, "", "no log given"},
		{"missing file", []string{filepath.Join(dir, "nope.jsonl")}, 2, "", "no such file"},
		{"empty glob", []string{filepath.Join(dir, "*.nothing")}, 2, "", "no file matches"},
		{"bad flag", []string{"--bogus", good}, 2, "", "flag provided but not defined"},
		{"bad format", []string{"--format", "xml", good}, 2, "", "unknown format"},
		{"bad output", []string{"--output", "pdf", good}, 2, "", "unknown output"},
		{"bad rule", []string{"--rules", "-nonsense", good}, 2, "", `unknown rule "nonsense"`},
		{"bad revision", []string{"--revision", "2020-01-01", good}, 2, "", "unknown revision"},
		{"half a pair", []string{"--client-log", good}, 2, "", "go together"},
		{"stdin twice", []string{"-", "-"}, 2, "", "once only"},
		{"stdin as both sides of a pair", []string{"--client-log", "-", "--server-log", "-"}, 2, "", "once only"},
		{"an empty log", []string{empty}, 1, "empty.jsonl:0: error [empty]", ""},
		{"an empty log beside a good one", []string{good, empty}, 1, "empty.jsonl:0: error [empty]", ""},
		{"an empty side of a pair", []string{"--client-log", good, "--server-log", empty}, 1, "empty.jsonl:0: error [empty]", ""},
		{"list rules", []string{"--list-rules"}, 0, "response-unmatched", ""},
		{"help", []string{"--help"}, 0, "Exit status: 0 valid", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCLI(t, "", c.args...)
			if code != c.code || !strings.Contains(out, c.out) || !strings.Contains(errOut, c.err) {
				t.Errorf("validate %v = %d, want %d\nstdout: %s\nstderr: %s", c.args, code, c.code, out, errOut)
			}
		})
	}
}

func TestCommandHelpListsEveryRule(t *testing.T) {
	out, _, _ := runCLI(t, "", "--help")
	for _, r := range Rules {
		if !strings.Contains(out, r.ID) {
			t.Errorf("--help does not list rule %s", r.ID)
		}
	}
	if strings.Count(out, "Usage: mcpstack validate") != 1 {
		t.Errorf("--help printed the usage %d times", strings.Count(out, "Usage: mcpstack validate"))
	}
}

func TestCommandInputs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "logs/a.jsonl", validLog)
	writeFile(t, dir, "logs/sub/b.ndjson", cmdLog)
	writeFile(t, dir, "logs/notes.txt", "not a log")
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(cmdLog))
	zw.Close()
	writeFile(t, dir, "logs/c.jsonl.gz", gz.String())
	t.Chdir(dir)

	out, _, code := runCLI(t, "", "logs")
	if code != 1 || !strings.Contains(out, "3 logs,") || !strings.Contains(out, "logs/c.jsonl.gz:5: error [result-schema]") || !strings.Contains(out, "logs/sub/b.ndjson:5:") {
		t.Errorf("a directory: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "logs/*.jsonl*")
	if code != 1 || !strings.Contains(out, "2 logs,") {
		t.Errorf("a glob: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, cmdLog, "-")
	if code != 1 || !strings.Contains(out, "-:5: error [result-schema]") {
		t.Errorf("stdin: %d\n%s", code, out)
	}
	out, _, code = runCLI(t, "", "--format", "recorded", "logs/a.jsonl")
	if code != 1 || !strings.Contains(out, "[record] at /dir: missing property 'dir'") {
		t.Errorf("--format recorded on plain lines: %d\n%s", code, out)
	}
	writeFile(t, dir, "broken.jsonl.gz", gz.String()[:gz.Len()/2])
	out, errOut, code := runCLI(t, "", "logs/a.jsonl", "broken.jsonl.gz")
	if code != 2 || !strings.Contains(errOut, "broken.jsonl.gz: unexpected EOF") || !strings.Contains(out, "1 log could not be read") {
		t.Errorf("a truncated gzip: %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = runCLI(t, "", "--max-errors", "1", "logs/c.jsonl.gz", "logs/sub/b.ndjson")
	if code != 1 || strings.Count(out, "error [") != 1 || !strings.Contains(out, "stopped at --max-errors") {
		t.Errorf("--max-errors: %d\n%s", code, out)
	}
}

func TestCommandOutputs(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.jsonl", cmdLog)
	good := writeFile(t, dir, "good.jsonl", validLog)

	out, _, code := runCLI(t, "", "--output", "json", bad, good)
	var doc struct {
		Findings []Finding `json:"findings"`
		Summary  struct {
			Logs     int   `json:"logs"`
			Messages int64 `json:"messages"`
			Errors   int   `json:"errors"`
			Warnings int   `json:"warnings"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("--output json (%d): %v\n%s", code, err, out)
	}
	if len(doc.Findings) != 2 || doc.Findings[0].Rule != RuleResultSchema || doc.Findings[0].Pointer != "/result/content/0/text" ||
		doc.Findings[0].Line != 5 || doc.Findings[0].Excerpt == "" || doc.Summary.Logs != 2 || doc.Summary.Errors != 1 || doc.Summary.Warnings != 1 {
		t.Errorf("--output json: %+v", doc)
	}
	out, _, _ = runCLI(t, "", "--output", "json", good)
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Findings) != 0 {
		t.Errorf("--output json, no findings: %v\n%s", err, out)
	}

	out, _, code = runCLI(t, "", "--output", "github", bad)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 1 || len(lines) != 3 ||
		!strings.HasPrefix(lines[0], "::error file="+strings.ReplaceAll(bad, ":", "%3A")+",line=5,title=mcpstack validate result-schema::at /result/content/0/text: missing property 'text'") ||
		!strings.Contains(lines[0], "%0A{") || !strings.HasPrefix(lines[1], "::warning file=") || !strings.HasPrefix(lines[2], "mcpstack validate: ") {
		t.Errorf("--output github:\n%s", out)
	}

	out, _, code = runCLI(t, "", "--output", "junit", bad, good)
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Type string `xml:"type,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(out), &suites); err != nil || code != 1 {
		t.Fatalf("--output junit (%d): %v\n%s", code, err, out)
	}
	if suites.Tests != 3 || suites.Failures != 1 || len(suites.Suites) != 2 || suites.Suites[0].Name != bad ||
		suites.Suites[0].Cases[0].Failure == nil || suites.Suites[0].Cases[0].Failure.Type != RuleResultSchema ||
		suites.Suites[1].Cases[0].Name != "valid" {
		t.Errorf("--output junit: %+v\n%s", suites, out)
	}
}

// The HTML report: the findings by rule, each linked to its line in its
// session's timeline, and what a log holds escaped, never markup.
func TestCommandOutputHTML(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.jsonl", strings.Replace(cmdLog, `"name":"c"`, `"name":"<script>alert(1)</script>"`, 1))
	good := writeFile(t, dir, "good.jsonl", validLog)
	out, _, code := runCLI(t, "", "--output", "html", bad, good)
	if code != 1 || !strings.HasPrefix(out, "<!DOCTYPE html>") || !strings.HasSuffix(strings.TrimSpace(out), "</html>") {
		t.Fatalf("--output html (%d):\n%s", code, out)
	}
	for _, want := range []string{
		`<code>result-schema</code>: 1`,
		`<a href="#t-`, // a finding links to its timeline line
		`missing property &#39;text&#39;`,
		`Timelines of the sessions with findings`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<script>") {
		t.Errorf("a log's text is markup in the report:\n%s", out)
	}
	for _, id := range regexp.MustCompile(`href="#(t-[0-9a-f]+-[0-9]+)"`).FindAllStringSubmatch(out, -1) {
		if !strings.Contains(out, `id="`+id[1]+`"`) {
			t.Errorf("the link #%s goes nowhere", id[1])
		}
	}
	// A HAR entry's records share its number: one anchor, its findings once.
	out, _, _ = runCLI(t, "", "--output", "html", "../../../testdata/logs/invalid/http-status/notification-200-har.har")
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`id="(t-[^"]+)"`).FindAllStringSubmatch(out, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		if n > 1 {
			t.Errorf("anchor %s given %d times", id, n)
		}
	}
	if len(ids) == 0 || strings.Count(out, "<code>http-status</code> at") != 1 {
		t.Errorf("the HAR's report: %d anchors, %d findings in the timeline:\n%s", len(ids), strings.Count(out, "<code>http-status</code> at"), out)
	}
}

// TestCommandPair checks a stdio pair given as two files.
func TestCommandPair(t *testing.T) {
	dir := t.TempDir()
	cl := writeFile(t, dir, "client.jsonl", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	sv := writeFile(t, dir, "server.jsonl", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}
{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t"}]}}
{"jsonrpc":"2.0","id":9,"result":{}}
`)
	out, _, code := runCLI(t, "", "--client-log", cl, "--server-log", sv)
	if code != 1 || !strings.Contains(out, "server.jsonl:2: error [result-schema] server at /result/tools/0/inputSchema") ||
		!strings.Contains(out, "server.jsonl:3: error [response-unmatched]") || !strings.Contains(out, "1 log, 6 lines") {
		t.Errorf("pair: %d\n%s", code, out)
	}
	// --side keeps one side's findings: the client here did nothing wrong.
	if out, _, code := runCLI(t, "", "--side", "client", "--client-log", cl, "--server-log", sv); code != 0 || !strings.Contains(out, ": valid") {
		t.Errorf("--side client: %d\n%s", code, out)
	}
	if out, _, code := runCLI(t, "", "--side", "server", "--client-log", cl, "--server-log", sv); code != 1 || !strings.Contains(out, "2 errors") {
		t.Errorf("--side server: %d\n%s", code, out)
	}
}

// gzipLines is a gzipped log of n copies of line.
func gzipLines(t *testing.T, line string, n int) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := 0; i < n; i++ {
		zw.Write([]byte(line + "\n"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// heapObjects is the heap the live objects take, after a collection.
func heapObjects() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// The junit report holds the first maxJUnitFindings findings of a rule
// and log until its end, and counts the others: a million bad lines (a 2
// KB gzip) took 659 MB when it held them all.
func TestJUnitBounded(t *testing.T) {
	const n = 200000
	log := gzipLines(t, "not JSON", n)
	var out bytes.Buffer
	rep := NewReporter(OutputJUnit, &out)
	v, err := New(WithFindingHandler(rep.Finding))
	if err != nil {
		t.Fatal(err)
	}
	before := heapObjects()
	report := v.Check(context.Background(), []Input{ReaderInput("bad.jsonl.gz", bytes.NewReader(log))})
	held := int64(heapObjects()) - int64(before) // what the reporter holds until Finish
	if err := rep.Finish(&report, []string{"bad.jsonl.gz"}); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes gzipped, %d held, %d bytes of report", len(log), held, out.Len())
	if report.Errors != n+1 { // and the empty log
		t.Fatalf("%s, want %d errors", Summary(&report), n+1)
	}
	if held > 4<<20 {
		t.Errorf("the junit reporter holds %d bytes for %d findings, want at most 4 MiB", held, n)
	}
	if out.Len() > 1<<20 {
		t.Errorf("the junit report is %d bytes, want at most 1 MiB", out.Len())
	}
	var suites struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(out.Bytes(), &suites); err != nil {
		t.Fatalf("junit: %v", err)
	}
	if suites.Tests != maxJUnitFindings+2 || suites.Failures != maxJUnitFindings+2 || len(suites.Suites) != 1 {
		t.Fatalf("junit: %d tests, %d failures, %d suites; want %d, %d, 1", suites.Tests, suites.Failures, len(suites.Suites), maxJUnitFindings+2, maxJUnitFindings+2)
	}
	cases := suites.Suites[0].Cases
	more := cases[len(cases)-1]
	want := fmt.Sprintf("%d more json findings are not listed: the report lists the first %d of each rule in each log", n-maxJUnitFindings, maxJUnitFindings)
	if more.Name != fmt.Sprintf("json: %d more json findings not listed", n-maxJUnitFindings) || more.Failure == nil || !strings.HasPrefix(more.Failure.Message, want) {
		t.Errorf("the last testcase %+v, want the count of the json findings not listed: %s", more, want)
	}
}

// The HTML report shows at most maxShownLine bytes of a line, JSON or
// not, and says it cut it (a 130 KB gzip of a long line not JSON became a
// 537 MB page); its timelines stop at maxTimelineLines lines and say how
// many they left out.
func TestHTMLBounded(t *testing.T) {
	dir := t.TempDir()
	message := `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"` + strings.Repeat("b", 1<<20) + `"}}`
	long := writeFile(t, dir, "long.jsonl", validLog+strings.Repeat("a", 10<<20)+"\n"+message+"\n")
	out, _, code := runCLI(t, "", "--output", "html", long)
	if code != 1 || len(out) > 64<<10 {
		t.Errorf("--output html of a 10 MiB line not JSON and a 1 MiB message: exit %d, a page of %d bytes, want 1 and at most 64 KiB", code, len(out))
	}
	for _, want := range []string{
		"(truncated: the line is 10485760 bytes, the page shows 1024 at most)",
		fmt.Sprintf("(truncated: the line is %d bytes, the page shows 1024 at most)", len(message)),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the page does not say %q", want)
		}
	}

	many := writeFile(t, dir, "many.jsonl", strings.Repeat("x\n", maxTimelineLines+2000))
	out, _, _ = runCLI(t, "", "--output", "html", many)
	if n := strings.Count(out, "<tr id="); n != maxTimelineLines {
		t.Errorf("%d timeline lines, want %d", n, maxTimelineLines)
	}
	if want := fmt.Sprintf("stop at its line %d: the page shows %d lines of timeline at most, and left out the 2000 lines from there on", maxTimelineLines+1, maxTimelineLines); !strings.Contains(out, want) {
		t.Errorf("the page does not say %q", want)
	}
}

// TestHTMLLeftOutBounded: once the timelines' bound is spent, the page
// counts the lines it left out in at most maxLeftCounted bytes more of
// that log ("at least N"), and does not read the later logs again at all
// (each was read to its end just to count its lines): a later log that
// is gone by then is not missed.
func TestHTMLLeftOutBounded(t *testing.T) {
	defer func(old int64) { maxLeftCounted = old }(maxLeftCounted)
	maxLeftCounted = 64 << 10
	dir := t.TempDir()
	const after = 500000 // lines from where the timelines stop
	big := writeFile(t, dir, "big.jsonl", strings.Repeat("x\n", maxTimelineLines-1+after))
	later := writeFile(t, dir, "later.jsonl", "x\n")
	var out bytes.Buffer
	r := NewReporter(OutputHTML, &out)
	for _, name := range []string{big, later} {
		r.Finding(Finding{File: name, Line: 1, Rule: RuleJSON, Severity: Error, Reason: "not JSON"})
	}
	if err := os.Remove(later); err != nil {
		t.Fatal(err)
	}
	if err := r.Finish(&Report{Inputs: 2, Errors: 2}, []string{big, later}); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	m := regexp.MustCompile(`stop at its line (\d+): the page shows \d+ lines of timeline at most, and left out at least (\d+) lines from there on`).FindStringSubmatch(page)
	var n int
	if m != nil {
		fmt.Sscan(m[2], &n)
	}
	switch {
	case m == nil || m[1] != fmt.Sprint(maxTimelineLines+1):
		t.Errorf("the page does not say it stopped at line %d and left out at least N lines: %v", maxTimelineLines+1, m)
	case n <= 0 || n >= after/2: // 2 bytes a line: at most (64 KiB and a buffer)/2 are counted
		t.Errorf("counted %d lines left out, want some, and far fewer than the %d there are", n, after)
	}
	if strings.Contains(page, "Could not read") || !strings.Contains(page, "the timelines of <code>"+later+"</code> are left out") {
		t.Errorf("the page does not say it left out %s without reading it", later)
	}
}
