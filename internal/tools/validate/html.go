package validate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/clip"
)

// The HTML report (--output html) is one self-contained page a person
// opens from a CI artifact: the findings grouped by rule, and for each
// session with a finding its timeline, every message of it in order with
// the findings at their lines. It re-reads the logs after the check for
// the timelines (not stdin), within bounds: at most maxTimelineLines
// lines of timeline in all (the page says how many lines it left out,
// counted in at most maxLeftCounted bytes more of the log where it
// stopped, and which logs it did not read again),
// maxShownLine bytes of each line, JSON or not, and of its HTTP exchange
// (marked as truncated), maxShownName bytes of a method, id, time or
// session, and maxHTMLFindings findings listed (the summary counts them
// all), their reasons and pointers cut at maxShownLine.
const (
	maxTimelineLines = 10000
	maxShownLine     = 1 << 10
	maxShownName     = 200
	maxHTMLFindings  = 10000
)

// maxLeftCounted bounds the bytes read past the line where the timelines
// stop, to count the lines left out: past it the page says "at least".
// A variable: tests lower it.
var maxLeftCounted int64 = 16 << 20

// truncated cuts the text shown of a line of size bytes to maxShownLine,
// and says so.
func truncated(s string, size int) string {
	if len(s) <= maxShownLine {
		return s
	}
	n := maxShownLine
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "") + fmt.Sprintf("\n… (truncated: the line is %d bytes, the page shows %d at most)", size, maxShownLine)
}

type htmlReporter struct {
	w        *bufio.Writer
	findings []Finding
	dropped  int // findings beyond maxHTMLFindings
}

func (r *htmlReporter) Finding(f Finding) {
	if len(r.findings) >= maxHTMLFindings {
		r.dropped++
		return
	}
	f.Reason, f.Pointer = clip.String(f.Reason, maxShownLine), clip.String(f.Pointer, maxShownLine)
	r.findings = append(r.findings, f)
}

// htmlRule is a rule and its findings, for the page.
type htmlRule struct {
	Rule     Rule
	Findings []htmlFinding
}

type htmlFinding struct {
	Finding
	Anchor string // the timeline line it links to ("" without one)
}

// htmlTimeline is one session of one log.
type htmlTimeline struct {
	File, Session, Anchor string
	Lines                 []htmlLine
	Cut                   bool   // the bound stopped it
	Err                   string // the log could not be read again
	LeftOut               int64  // a note: the lines of File the bound left out,
	From                  int    // from this one on,
	AtLeast               bool   // counted up to maxLeftCounted bytes only;
	Skipped               bool   // or a note: File was not read again, the bound spent
}

type htmlLine struct {
	Line             int
	Anchor           string
	TS, Dir, Summary string
	Text             string // the message, indented
	Findings         []Finding
	Bad              bool // a finding is at this line
	Event            string
}

func (r *htmlReporter) Finish(rep *Report, inputs []string) error {
	// Which lines of which sessions the findings are at.
	type key struct{ file, session string }
	at := map[key]map[int][]Finding{}
	for _, f := range r.findings {
		k := key{f.File, f.Session}
		if at[k] == nil {
			at[k] = map[int][]Finding{}
		}
		at[k][f.Line] = append(at[k][f.Line], f)
	}
	anchor := func(file, session string, line int) string {
		return fmt.Sprintf("t-%x-%d", hash(file+"\x00"+session), line)
	}
	var timelines []*htmlTimeline
	budget := maxTimelineLines
	for _, name := range inputs {
		if name == "-" {
			continue
		}
		wanted := map[string]bool{}
		for k := range at {
			if k.file == name {
				wanted[k.session] = true
			}
		}
		if len(wanted) == 0 {
			continue
		}
		if budget <= 0 { // not read again just to count its lines
			timelines = append(timelines, &htmlTimeline{File: name, Skipped: true})
			continue
		}
		bySession := map[string]*htmlTimeline{}
		var order []string
		seen := map[string]bool{} // anchors given: a HAR entry's records share its number
		left, from, exact, err := eachRecord(name, func(line int, rec map[string]any, size int, tooLong bool) bool {
			session, _ := rec["session"].(string)
			if !wanted[session] {
				return true
			}
			tl := bySession[session]
			if budget <= 0 {
				if tl != nil {
					tl.Cut = true
				}
				return false
			}
			if tl == nil {
				tl = &htmlTimeline{File: name, Session: clip.String(session, maxShownName), Anchor: anchor(name, session, 0)}
				bySession[session] = tl
				order = append(order, session)
			}
			budget--
			l := timelineLine(line, rec, size, tooLong)
			if a := anchor(name, session, line); !seen[a] {
				seen[a] = true
				l.Anchor = a
				l.Findings = at[key{name, session}][line]
			}
			l.Bad = len(l.Findings) > 0
			tl.Lines = append(tl.Lines, l)
			return true
		})
		if err != nil {
			timelines = append(timelines, &htmlTimeline{File: name, Err: err.Error()})
		}
		for _, s := range order {
			timelines = append(timelines, bySession[s])
		}
		if left > 0 {
			timelines = append(timelines, &htmlTimeline{File: name, LeftOut: left, From: from, AtLeast: !exact})
		}
	}
	linked := map[string]bool{}
	for _, tl := range timelines {
		for _, l := range tl.Lines {
			linked[l.Anchor] = true
		}
	}
	var rules []htmlRule
	for _, rule := range Rules {
		var fs []htmlFinding
		for _, f := range r.findings {
			if f.Rule != rule.ID {
				continue
			}
			hf := htmlFinding{Finding: f}
			if a := anchor(f.File, f.Session, f.Line); linked[a] {
				hf.Anchor = a
			}
			hf.Session = clip.String(f.Session, maxShownName)
			fs = append(fs, hf)
		}
		if len(fs) > 0 {
			rules = append(rules, htmlRule{Rule: rule, Findings: fs})
		}
	}
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Rule.Severity == Error && rules[j].Rule.Severity != Error })
	err := htmlPage().Execute(r.w, map[string]any{
		"Summary": Summary(rep), "Rules": rules, "Timelines": timelines, "Inputs": inputs,
		"Failed": rep.Errors > 0, "Unreadable": rep.InputErrors, "Dropped": r.dropped, "MaxLines": maxTimelineLines,
		"MaxLeftCounted": maxLeftCounted,
	})
	if err != nil {
		return err
	}
	return r.w.Flush()
}

// eachRecord calls fn with every line of a log as a record (a plain
// JSON-RPC line becomes {"msg":...}, one that is not JSON {"raw":...},
// of its first bytes only), its size and whether it is too long to be
// read; fn returns false to stop. It returns how many lines were left,
// from which: the one fn stopped at and those after it, counted (not read
// as JSON) in at most maxLeftCounted bytes more; exact is false when the
// count stopped there, before the end of the log. (A HAR file's records
// are all in memory: they are counted to the end.)
func eachRecord(name string, fn func(line int, rec map[string]any, size int, tooLong bool) bool) (left int64, from int, exact bool, err error) {
	in := FileInput(name)
	rc, err := openLog(in)
	if err != nil {
		return 0, 0, false, err
	}
	defer rc.Close()
	capped := &io.LimitedReader{R: rc, N: math.MaxInt64} // capped once the page has what it shows
	var src lineSource
	if isHAR(in, FormatAuto, rc) {
		h, err := readHAR(rc, 64<<20)
		if err != nil {
			return 0, 0, false, err
		}
		src = h
	} else {
		src = newLineReader(capped, 64<<20)
	}
	stopped := false
	for {
		data, line, tooLong, ok := src.next()
		if !ok {
			if capped.N <= 0 {
				return left, from, false, nil
			}
			return left, from, true, src.failure()
		}
		if stopped {
			left++
			continue
		}
		var rec map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // ids and numbers as they were written
		if tooLong || dec.Decode(&rec) != nil {
			rec = map[string]any{"raw": string(data[:min(len(data), maxShownLine+utf8.UTFMax)])}
		} else if _, isRecord := rec["dir"]; !isRecord {
			rec = map[string]any{"msg": rec}
		}
		if !fn(line, rec, len(data), tooLong) {
			stopped, left, from = true, 1, line
			capped.N = maxLeftCounted
		}
	}
}

// timelineLine is what the page shows of a record, a line of size bytes.
func timelineLine(line int, rec map[string]any, size int, tooLong bool) htmlLine {
	l := htmlLine{Line: line}
	if tooLong {
		l.Summary = "longer than the line bound: not shown"
		return l
	}
	ts, _ := rec["ts"].(string)
	l.TS = clip.String(ts, maxShownName)
	switch rec["dir"] {
	case "c2s":
		l.Dir = "client → server"
	case "s2c":
		l.Dir = "server → client"
	}
	if ev, _ := rec["event"].(string); ev != "" {
		l.Event = ev
		l.Summary = ev
		if ev == eventRefused {
			l.Summary = clip.String(fmt.Sprintf("refused: HTTP %v, answers %v", rec["status"], rec["answers"]), maxShownName)
		}
		l.Summary = clip.String(l.Summary, maxShownName)
		return l
	}
	msg := rec["msg"]
	if msg == nil {
		s, _ := rec["raw"].(string)
		l.Summary, l.Text = "not JSON", truncated(s, size)
		return l
	}
	b, _ := json.MarshalIndent(msg, "", "  ")
	l.Text = truncated(string(b), size)
	name := func(v any) string { return clip.String(fmt.Sprint(v), maxShownName) }
	switch m := msg.(type) {
	case []any:
		l.Summary = fmt.Sprintf("batch of %d", len(m))
	case map[string]any:
		method, _ := m["method"].(string)
		id, hasID := m["id"]
		switch {
		case method != "" && hasID:
			l.Summary = fmt.Sprintf("%s (id %s)", name(method), name(id))
		case method != "":
			l.Summary = name(method)
		case m["error"] != nil:
			l.Summary = fmt.Sprintf("error (id %s)", name(id))
		default:
			l.Summary = fmt.Sprintf("result (id %s)", name(id))
		}
	}
	if h, _ := rec["http"].(map[string]any); h != nil {
		l.Summary += fmt.Sprintf(" · HTTP %s %s", name(h["method"]), name(h["status"]))
		b, _ := json.MarshalIndent(h, "", "  ")
		l.Text += "\n\nHTTP exchange:\n" + truncated(string(b), size)
	}
	return l
}

// hash is FNV-1a, for anchors.
func hash(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// htmlPage is parsed on first use: a process that writes no report (every
// serve) keeps no parse tree on its heap.
var htmlPage = sync.OnceValue(func() *template.Template { return template.Must(template.New("report").Parse(htmlReport)) })

const htmlReport = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>mcpstack validate: {{.Summary}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:80em;color:#222}
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:2em}h3{font-size:1em}
.ok{color:#176b2c}.fail{color:#a11}
.error{color:#a11;font-weight:600}.warning{color:#8a5a00;font-weight:600}
table{border-collapse:collapse;width:100%}td,th{text-align:left;vertical-align:top;padding:.2em .5em;border-bottom:1px solid #eee}
code,pre{font:12px/1.4 ui-monospace,monospace}pre{margin:.3em 0;white-space:pre-wrap;word-break:break-all;background:#f7f7f7;padding:.4em}
tr.bad{background:#fff3f3}tr.event td{color:#666;font-style:italic}
summary{cursor:pointer}
</style></head><body>
<h1>mcpstack validate</h1>
<p class="{{if .Failed}}fail{{else}}ok{{end}}">{{.Summary}}</p>
<p>Logs: {{range $i, $n := .Inputs}}{{if $i}}, {{end}}<code>{{$n}}</code>{{end}}</p>
{{range .Unreadable}}<p class="fail">Could not read <code>{{.Name}}</code>: {{.Err}}</p>{{end}}
{{if .Rules}}<h2>Findings by rule</h2>{{end}}
{{if .Dropped}}<p class="fail">{{.Dropped}} more findings are not listed: the report lists the first ones, up to its bound (the summary counts them all).</p>{{end}}
{{range .Rules}}<h3><span class="{{.Rule.Severity}}">{{.Rule.Severity}}</span> <code>{{.Rule.ID}}</code>: {{len .Findings}}</h3>
<p>{{.Rule.Summary}}</p>
<table><tr><th>where</th><th>side</th><th>session</th><th>pointer</th><th>reason</th></tr>
{{range .Findings}}<tr><td>{{if .Anchor}}<a href="#{{.Anchor}}">{{.File}}:{{.Line}}</a>{{else}}{{.File}}:{{.Line}}{{end}}</td><td>{{.Side}}</td><td><code>{{.Session}}</code></td><td><code>{{.Pointer}}</code></td><td>{{.Reason}}{{if .Excerpt}}<pre>{{.Excerpt}}</pre>{{end}}</td></tr>
{{end}}</table>
{{end}}
{{if .Timelines}}<h2>Timelines of the sessions with findings</h2>{{end}}
{{range .Timelines}}{{if .LeftOut}}<p class="fail">… the timelines of <code>{{.File}}</code> stop at its line {{.From}}: the page shows {{$.MaxLines}} lines of timeline at most, and left out {{if .AtLeast}}at least {{.LeftOut}} lines from there on (counted in the next {{$.MaxLeftCounted}} bytes only){{else}}the {{.LeftOut}} lines from there on{{end}}.</p>{{else if .Skipped}}<p class="fail">… the timelines of <code>{{.File}}</code> are left out: the page shows {{$.MaxLines}} lines of timeline at most, all of them from the logs before it.</p>{{else if .Err}}<p class="fail">Could not read <code>{{.File}}</code> again for its timeline: {{.Err}}</p>{{else}}<h3 id="{{.Anchor}}"><code>{{.File}}</code>{{if .Session}}, session <code>{{.Session}}</code>{{end}}</h3>
<table><tr><th>line</th><th>time</th><th>direction</th><th>message</th></tr>
{{range .Lines}}<tr id="{{.Anchor}}" class="{{if .Bad}}bad{{end}}{{if .Event}} event{{end}}"><td>{{.Line}}</td><td><code>{{.TS}}</code></td><td>{{.Dir}}</td><td>{{if .Text}}<details{{if .Bad}} open{{end}}><summary>{{.Summary}}</summary><pre>{{.Text}}</pre></details>{{else}}{{.Summary}}{{end}}
{{range .Findings}}<div><span class="{{.Severity}}">{{.Severity}}</span> <code>{{.Rule}}</code>{{if .Pointer}} at <code>{{.Pointer}}</code>{{end}}: {{.Reason}}</div>{{end}}</td></tr>
{{end}}</table>{{if .Cut}}<p>… the report's bound on timeline lines stopped here.</p>{{end}}
{{end}}{{end}}
</body></html>
`
