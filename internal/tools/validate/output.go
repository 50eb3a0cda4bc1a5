package validate

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/clip"
)

// OutputFormat is how findings are written.
type OutputFormat string

const (
	OutputText   OutputFormat = "text"   // for people: file:line, rule, pointer, reason, excerpt
	OutputJSON   OutputFormat = "json"   // one JSON document: {"findings":[...],"summary":{...}}
	OutputGitHub OutputFormat = "github" // GitHub Actions workflow commands (annotations)
	OutputJUnit  OutputFormat = "junit"  // JUnit XML, one testsuite per log
	OutputHTML   OutputFormat = "html"   // one self-contained page: findings by rule, sessions' timelines
)

// ParseOutput reads an --output value.
func ParseOutput(s string) (OutputFormat, error) {
	switch o := OutputFormat(s); o {
	case OutputText, OutputJSON, OutputGitHub, OutputJUnit, OutputHTML:
		return o, nil
	}
	return "", fmt.Errorf("unknown output %q (want text, json, github, junit or html)", s)
}

// Reporter writes findings as they come and the summary at the end.
type Reporter interface {
	Finding(f Finding)
	// Finish writes what follows the findings; inputs are the names of
	// the logs in the order they were read.
	Finish(rep *Report, inputs []string) error
}

// NewReporter returns the reporter of an output format writing to w.
func NewReporter(o OutputFormat, w io.Writer) Reporter {
	bw := bufio.NewWriterSize(w, 64<<10)
	switch o {
	case OutputJSON:
		return &jsonReporter{w: bw}
	case OutputGitHub:
		return &githubReporter{w: bw}
	case OutputJUnit:
		return &junitReporter{w: bw, byFile: map[string]*junitFile{}}
	case OutputHTML:
		return &htmlReporter{w: bw}
	}
	return &textReporter{w: bw}
}

// Summary is the one-line outcome of a run.
func Summary(rep *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s, %s, %s: ",
		plural(int64(rep.Inputs), "log", "logs"), plural(rep.Lines, "line", "lines"),
		plural(rep.Messages, "message", "messages"), plural(rep.Sessions, "session", "sessions"))
	switch {
	case rep.Errors == 0 && rep.Warnings == 0:
		b.WriteString("valid")
	default:
		b.WriteString(plural(int64(rep.Errors), "error", "errors"))
		b.WriteString(", ")
		b.WriteString(plural(int64(rep.Warnings), "warning", "warnings"))
	}
	if rep.Stopped {
		b.WriteString(" (stopped at --max-errors)")
	}
	if n := len(rep.InputErrors); n > 0 {
		fmt.Fprintf(&b, "; %s could not be read", plural(int64(n), "log", "logs"))
	}
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(n, 10) + " " + many
}

type textReporter struct{ w *bufio.Writer }

func (r *textReporter) Finding(f Finding) {
	fmt.Fprintf(r.w, "%s:%d: %s [%s]", f.File, f.Line, f.Severity, f.Rule)
	if f.Side != "" {
		fmt.Fprintf(r.w, " %s", f.Side) // who sent it
	}
	if f.Pointer != "" {
		fmt.Fprintf(r.w, " at %s", f.Pointer)
	}
	if f.Session != "" {
		fmt.Fprintf(r.w, " (session %s)", f.Session)
	}
	fmt.Fprintf(r.w, ": %s\n", f.Reason)
	if f.Excerpt != "" {
		fmt.Fprintf(r.w, "\t%s\n", f.Excerpt)
	}
}

func (r *textReporter) Finish(rep *Report, _ []string) error {
	fmt.Fprintf(r.w, "mcpstack validate: %s\n", Summary(rep))
	return r.w.Flush()
}

type jsonReporter struct {
	w *bufio.Writer
	n int
}

func (r *jsonReporter) Finding(f Finding) {
	if r.n == 0 {
		r.w.WriteString(`{"findings":[`)
	} else {
		r.w.WriteString(",")
	}
	r.n++
	b, _ := json.Marshal(f)
	r.w.WriteString("\n  ")
	r.w.Write(b)
}

// jsonSummary is the "summary" member of --output json.
type jsonSummary struct {
	Inputs      int      `json:"logs"`
	Lines       int64    `json:"lines"`
	Messages    int64    `json:"messages"`
	Sessions    int64    `json:"sessions"`
	Bytes       int64    `json:"bytes"`
	Errors      int      `json:"errors"`
	Warnings    int      `json:"warnings"`
	Stopped     bool     `json:"stopped"`
	InputErrors []string `json:"unreadable,omitempty"`
	Seconds     float64  `json:"seconds"`
	Text        string   `json:"text"`
}

func (r *jsonReporter) Finish(rep *Report, _ []string) error {
	if r.n == 0 {
		r.w.WriteString(`{"findings":[`)
	} else {
		r.w.WriteString("\n")
	}
	s := jsonSummary{
		Inputs: rep.Inputs, Lines: rep.Lines, Messages: rep.Messages, Sessions: rep.Sessions, Bytes: rep.Bytes,
		Errors: rep.Errors, Warnings: rep.Warnings, Stopped: rep.Stopped, Seconds: rep.Elapsed.Seconds(), Text: Summary(rep),
	}
	for _, e := range rep.InputErrors {
		s.InputErrors = append(s.InputErrors, e.Error())
	}
	b, _ := json.Marshal(s)
	r.w.WriteString(`],"summary":`)
	r.w.Write(b)
	r.w.WriteString("}\n")
	return r.w.Flush()
}

type githubReporter struct{ w *bufio.Writer }

// ghData escapes the message of a workflow command.
func ghData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// ghProp escapes a property of a workflow command.
func ghProp(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func (r *githubReporter) Finding(f Finding) {
	level := "error"
	if f.Severity == Warning {
		level = "warning"
	}
	msg := f.Reason
	if f.Pointer != "" {
		msg = "at " + f.Pointer + ": " + msg
	}
	if f.Session != "" {
		msg += " (session " + f.Session + ")"
	}
	if f.Excerpt != "" {
		msg += "\n" + f.Excerpt
	}
	fmt.Fprintf(r.w, "::%s file=%s,line=%d,title=%s::%s\n", level, ghProp(f.File), max(f.Line, 1), ghProp("mcpstack validate "+f.Rule), ghData(msg))
}

func (r *githubReporter) Finish(rep *Report, _ []string) error {
	fmt.Fprintf(r.w, "mcpstack validate: %s\n", Summary(rep))
	return r.w.Flush()
}

// The junit report is written at the end (a testsuite's counts come
// before its testcases), so it holds the findings until then, within
// bounds: the first maxJUnitFindings of each rule and log in full (their
// reason, pointer and session cut at maxJUnitText bytes), the others
// counted, and one testcase per rule says how many more there were.
const (
	maxJUnitFindings = 1000
	maxJUnitText     = 1 << 10
)

type junitReporter struct {
	w      *bufio.Writer
	byFile map[string]*junitFile
}

// junitFile is what the junit report holds of one log.
type junitFile struct {
	findings []Finding
	perRule  map[string]int        // findings held, by rule
	more     map[string]*junitMore // findings past maxJUnitFindings, by rule
	rules    []string              // the keys of more, in the order they came
}

// junitMore counts the findings of a rule not held.
type junitMore struct{ errors, warnings int }

func (r *junitReporter) Finding(f Finding) {
	jf := r.byFile[f.File]
	if jf == nil {
		jf = &junitFile{perRule: map[string]int{}}
		r.byFile[f.File] = jf
	}
	if jf.perRule[f.Rule] >= maxJUnitFindings {
		m := jf.more[f.Rule]
		if m == nil {
			if jf.more == nil {
				jf.more = map[string]*junitMore{}
			}
			m = &junitMore{}
			jf.more[f.Rule] = m
			jf.rules = append(jf.rules, f.Rule)
		}
		if f.Severity == Error {
			m.errors++
		} else {
			m.warnings++
		}
		return
	}
	jf.perRule[f.Rule]++
	f.Reason, f.Pointer, f.Session = clip.String(f.Reason, maxJUnitText), clip.String(f.Pointer, maxJUnitText), clip.String(f.Session, maxJUnitText)
	jf.findings = append(jf.findings, f)
}

func (r *junitReporter) Finish(rep *Report, inputs []string) error {
	files := append([]string(nil), inputs...)
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
	}
	var extra []string
	for f := range r.byFile {
		if !seen[f] {
			extra = append(extra, f)
		}
	}
	sort.Strings(extra)
	files = append(files, extra...)
	esc := func(s string) string {
		var b strings.Builder
		_ = xml.EscapeText(&b, []byte(s))
		return b.String()
	}
	// A log's testcases: one per finding held, one per rule with more,
	// or one that it is valid (or unreadable).
	counts := func(jf *junitFile) (tests, failures int) {
		if jf == nil {
			return 1, 0
		}
		for _, f := range jf.findings {
			if f.Severity == Error {
				failures++
			}
		}
		for _, m := range jf.more {
			if m.errors > 0 {
				failures++
			}
		}
		return len(jf.findings) + len(jf.more), failures
	}
	tests, failures := 0, 0
	for _, f := range files {
		n, nf := counts(r.byFile[f])
		tests, failures = tests+n, failures+nf
	}
	fmt.Fprintf(r.w, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
	fmt.Fprintf(r.w, "<testsuites name=\"mcpstack validate\" tests=\"%d\" failures=\"%d\" errors=\"%d\" time=\"%.3f\">\n", tests, failures, len(rep.InputErrors), rep.Elapsed.Seconds())
	unreadable := map[string]string{}
	for _, e := range rep.InputErrors {
		unreadable[e.Name] = e.Err.Error()
	}
	for _, file := range files {
		jf := r.byFile[file]
		n, nf := counts(jf)
		nerr := 0
		if _, bad := unreadable[file]; bad {
			nerr = 1
		}
		fmt.Fprintf(r.w, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" errors=\"%d\">\n", esc(file), n, nf, nerr)
		var fs []Finding
		if jf != nil {
			fs = jf.findings
		}
		if len(fs) == 0 {
			if msg, bad := unreadable[file]; bad {
				fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"read\"><error message=\"%s\"/></testcase>\n", esc(file), esc(msg))
			} else {
				fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"valid\"/>\n", esc(file))
			}
		}
		for _, f := range fs {
			name := fmt.Sprintf("line %d: %s", f.Line, f.Rule)
			body := f.Reason
			if f.Pointer != "" {
				body = "at " + f.Pointer + ": " + body
			}
			if f.Session != "" {
				body += " (session " + f.Session + ")"
			}
			if f.Excerpt != "" {
				body += "\n" + f.Excerpt
			}
			if f.Severity == Error {
				fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"%s\"><failure type=\"%s\" message=\"%s\">%s</failure></testcase>\n",
					esc(file), esc(name), esc(f.Rule), esc(f.Reason), esc(body))
			} else {
				fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"%s (warning)\"><system-out>%s</system-out></testcase>\n",
					esc(file), esc(name), esc("warning: "+body))
			}
		}
		if jf != nil {
			for _, rule := range jf.rules {
				m := jf.more[rule]
				more := plural(int64(m.errors+m.warnings), "more "+rule+" finding is", "more "+rule+" findings are")
				name := fmt.Sprintf("%s: %s not listed", rule, strings.TrimSuffix(strings.TrimSuffix(more, " is"), " are"))
				msg := fmt.Sprintf("%s not listed: the report lists the first %d of each rule in each log (the summary counts them all)", more, maxJUnitFindings)
				if m.errors > 0 {
					fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"%s\"><failure type=\"%s\" message=\"%s\">%s</failure></testcase>\n",
						esc(file), esc(name), esc(rule), esc(msg), esc(msg))
				} else {
					fmt.Fprintf(r.w, "    <testcase classname=\"%s\" name=\"%s (warning)\"><system-out>%s</system-out></testcase>\n",
						esc(file), esc(name), esc("warning: "+msg))
				}
			}
		}
		fmt.Fprintf(r.w, "  </testsuite>\n")
	}
	fmt.Fprintf(r.w, "</testsuites>\n")
	return r.w.Flush()
}
