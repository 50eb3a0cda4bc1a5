package validate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/wire"
)

// TestCompaction: with more live sessions than the checker keeps whole, the
// idle ones are compacted and come back with their revision, lifecycle
// state and capabilities, so a valid log stays valid.
func TestCompaction(t *testing.T) {
	var log bytes.Buffer
	const n = 50
	line := func(s int, dir, msg string) {
		fmt.Fprintf(&log, `{"session":"s%d","dir":"%s","msg":%s}`+"\n", s, dir, msg)
	}
	for s := 0; s < n; s++ {
		line(s, "c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		line(s, "s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
		line(s, "c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if s%10 == 0 {
			line(s, "c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`) // open: the session is not compacted
		}
	}
	for s := n - 1; s >= 0; s-- {
		if s%10 == 0 {
			line(s, "s2c", `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
		}
		line(s, "c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
		line(s, "s2c", `{"jsonrpc":"2.0","id":3,"result":{"content":[]}}`)
		line(s, "c2s", `{"jsonrpc":"2.0","id":4,"method":"prompts/list"}`) // not declared: found after compaction too
		line(s, "s2c", `{"jsonrpc":"2.0","id":4,"result":{"prompts":[]}}`)
	}
	for _, live := range []int{16, 1 << 16} {
		rep := checkBytes(t, "many", log.Bytes(), optionFunc(func(c *config) { c.maxLiveSessions = live }))
		if rep.Sessions != n || rep.Errors != n || rep.Warnings != 0 {
			t.Errorf("max %d live sessions: %s", live, Summary(&rep))
		}
		for _, f := range rep.Findings {
			if f.Rule != RuleCapability {
				t.Errorf("max %d live sessions: %s", live, f)
			}
		}
	}
}

func TestIDSet(t *testing.T) {
	s := newIDSet()
	for _, n := range []int64{5, 1, 2, 3, 10, 7, 6, 4, math.MaxInt64, math.MinInt64, 8, 9} {
		if s.has(wire.IntID(n)) {
			t.Errorf("has %d before add", n)
		}
		s.add(wire.IntID(n))
		if !s.has(wire.IntID(n)) {
			t.Errorf("not has %d after add", n)
		}
	}
	if r := s.ints.ranges(); len(r) != 3 || r[1] != (idRange{1, 10}) {
		t.Errorf("ranges %v, want [min..min] [1..10] [max..max]", r)
	}
	for _, n := range []int64{0, 11, -1, math.MaxInt64 - 1} {
		if s.has(wire.IntID(n)) {
			t.Errorf("has %d", n)
		}
	}
	if s.has(wire.StringID("5")) {
		t.Error(`"5" and 5 are different ids`)
	}
	for i := 0; i < maxStringIDs+10; i++ {
		s.add(wire.StringID(fmt.Sprint("id-", i)))
	}
	if s.has(wire.StringID("id-0")) || !s.has(wire.StringID("id-10")) || s.strs.len() != maxStringIDs {
		t.Errorf("string ids: %d kept, oldest kept %v", s.strs.len(), s.has(wire.StringID("id-0")))
	}
	// remove: the ends of a range, its middle (a split), a lone one.
	for _, n := range []int64{1, 10, 5, math.MaxInt64} {
		s.remove(wire.IntID(n))
		if s.has(wire.IntID(n)) {
			t.Errorf("has %d after remove", n)
		}
	}
	if r := s.ints.ranges(); len(r) != 3 || r[1] != (idRange{2, 4}) || r[2] != (idRange{6, 9}) || !s.has(wire.IntID(4)) || !s.has(wire.IntID(6)) {
		t.Errorf("after removes: %v", r)
	}
	s.remove(wire.StringID("id-10"))
	if s.has(wire.StringID("id-10")) {
		t.Error(`has "id-10" after remove`)
	}
	b := newIDSet()
	for i := int64(0); i < maxRanges+5; i++ {
		b.add(wire.IntID(i * 2)) // no two adjacent: one range each
	}
	if b.ints.n != maxRanges || len(b.ints.ranges()) != maxRanges || b.has(wire.IntID(0)) || !b.has(wire.IntID(2*(maxRanges+4))) {
		t.Errorf("%d ranges", b.ints.n)
	}
	// Splits in a full set: the last range, a middle one; the set stays
	// bounded and sorted, and keeps what it did not forget.
	top := int64(2 * (maxRanges + 4))
	b.add(wire.IntID(top + 1))
	b.add(wire.IntID(top + 2))
	for _, n := range []int64{top + 1, 2 * 1000} {
		b.add(wire.IntID(n - 1))
		b.add(wire.IntID(n + 1))
		b.remove(wire.IntID(n))
		if b.has(wire.IntID(n)) || !b.has(wire.IntID(n+1)) || b.ints.n > maxRanges {
			t.Errorf("split at %d: has %v, has next %v, %d ranges", n, b.has(wire.IntID(n)), b.has(wire.IntID(n+1)), b.ints.n)
		}
	}
	rs := b.ints.ranges()
	for i := 1; i < len(rs); i++ {
		if r := rs[i]; r.lo > r.hi || rs[i-1].hi >= r.lo {
			t.Fatalf("ranges out of order at %d: %v %v", i, rs[i-1], r)
		}
	}
	if len(rs) != b.ints.n {
		t.Errorf("%d ranges in order, %d counted", len(rs), b.ints.n)
	}
}

// TestIDSetDescending: ids below the highest cost O(log n) each, counted
// in the nodes the set visits (not timed). A sorted slice copied up to
// 1 MiB for each: descending ids were quadratic (100,000 requests took
// 5.5 s, 200,000 17.7 s). The bound and what it forgets stay: the lowest
// range goes first.
func TestIDSetDescending(t *testing.T) {
	const n = maxRanges + 1000
	s := newIDSet()
	for i := int64(n); i >= 1; i-- {
		s.add(wire.IntID(2 * i)) // no two adjacent: a range each
	}
	if per := float64(s.ints.steps) / n; per > 200 {
		t.Errorf("%d descending ids visited %d nodes, %.0f each: want O(log n) (at most 200)", n, s.ints.steps, per)
	}
	// Full, each id forgot the lowest range before it was added: the
	// highest maxRanges-1 and the last one are kept.
	if s.ints.n != maxRanges || !s.has(wire.IntID(2)) || s.has(wire.IntID(4)) ||
		!s.has(wire.IntID(2*n)) || !s.has(wire.IntID(2*(n-maxRanges+2))) || s.has(wire.IntID(2*(n-maxRanges+1))) {
		t.Errorf("%d ranges kept, has 2 %v, 4 %v", s.ints.n, s.has(wire.IntID(2)), s.has(wire.IntID(4)))
	}
	c := newIDSet() // descending and adjacent: one range
	for i := int64(n); i >= 1; i-- {
		c.add(wire.IntID(i))
	}
	if r := c.ints.ranges(); len(r) != 1 || r[0] != (idRange{1, n}) || c.ints.steps > 4*n {
		t.Errorf("adjacent descending ids: %v, %d nodes visited", r, c.ints.steps)
	}
}

// TestIDSetModel: adds and removes in random order agree with a plain
// set, and the ranges stay sorted, disjoint and apart.
func TestIDSetModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s, model := newIDSet(), map[int64]bool{}
	for i := 0; i < 20000; i++ {
		n := rng.Int64N(600) - 300
		switch rng.IntN(3) {
		case 0, 1:
			s.add(wire.IntID(n))
			model[n] = true
		default:
			s.remove(wire.IntID(n))
			delete(model, n)
		}
		if m := rng.Int64N(600) - 300; s.has(wire.IntID(m)) != model[m] {
			t.Fatalf("step %d: has %d %v, want %v", i, m, s.has(wire.IntID(m)), model[m])
		}
	}
	rs, count := s.ints.ranges(), 0
	for i, r := range rs {
		if r.lo > r.hi || i > 0 && rs[i-1].hi+1 >= r.lo {
			t.Fatalf("ranges %v at %d: out of order, overlapping or adjacent", rs, i)
		}
		count += int(r.hi - r.lo + 1)
	}
	if count != len(model) || len(rs) != s.ints.n {
		t.Errorf("%d ids in %d ranges (%d counted), want %d", count, len(rs), s.ints.n, len(model))
	}
}

func TestParseRules(t *testing.T) {
	for _, c := range []struct {
		spec    string
		on, off []string
		err     string
	}{
		{"", []string{RuleSchema, RuleUnanswered}, nil, ""},
		{"all", []string{RuleSchema}, nil, ""},
		{"-unanswered,-server-early", []string{RuleSchema}, []string{RuleUnanswered, RuleServerEarly}, ""},
		{"schema, envelope", []string{RuleSchema, RuleEnvelope}, []string{RuleUnanswered, RuleCapability}, ""},
		{"-all,+capability", []string{RuleCapability}, []string{RuleSchema}, ""},
		{"all,-json", []string{RuleSchema}, []string{RuleJSON}, ""},
		{"-nope", nil, nil, `unknown rule "nope"`},
	} {
		rs, err := ParseRules(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRules(%q) = %v, want %s", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("ParseRules(%q): %v", c.spec, err)
		}
		for _, id := range c.on {
			if !rs.Enabled(id) {
				t.Errorf("ParseRules(%q): %s off", c.spec, id)
			}
		}
		for _, id := range c.off {
			if rs.Enabled(id) {
				t.Errorf("ParseRules(%q): %s on", c.spec, id)
			}
		}
	}
}

// TestRevisionFacts: what the checks read from each revision's schemas.
func TestRevisionFacts(t *testing.T) {
	for _, c := range []struct {
		rev                   string
		lifecycle, batch      bool
		errorDef              string
		completions, taskCall bool
	}{
		{"2024-11-05", true, false, "JSONRPCError", false, false},
		{"2025-03-26", true, true, "JSONRPCError", true, false},
		{"2025-06-18", true, false, "JSONRPCError", true, false},
		{"2025-11-25", true, false, "JSONRPCErrorResponse", true, true},
		{"2026-07-28", false, false, "JSONRPCErrorResponse", true, false},
	} {
		r := lookupRevision(c.rev)
		if r == nil || r.err != nil {
			t.Fatalf("%s: %v", c.rev, r)
		}
		if r.lifecycle != c.lifecycle || r.batchRequest != c.batch || r.batchResponse != c.batch || r.errorDef != c.errorDef ||
			r.caps[fromServer]["completions"] != c.completions || r.caps[fromServer]["tasks.requests.tools.call"] != c.taskCall {
			t.Errorf("%s: lifecycle %v batch %v/%v error %s completions %v tasks %v", c.rev, r.lifecycle, r.batchRequest, r.batchResponse,
				r.errorDef, r.caps[fromServer]["completions"], r.caps[fromServer]["tasks.requests.tools.call"])
		}
	}
	if newestLifecycle.name() != "2025-11-25" {
		t.Errorf("newest revision with initialize: %s", newestLifecycle.name())
	}
}

// TestCancelStopsEarly: a cancelled context ends a Check without waiting
// for the rest of the input.
func TestCancelStopsEarly(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	v, _ := New()
	rep := v.Check(ctx, []Input{ReaderInput("x", strings.NewReader(strings.Repeat(`{"jsonrpc":"2.0","method":"x"}`+"\n", 100000)))})
	if rep.Lines >= 100000 {
		t.Errorf("read %d lines after cancel", rep.Lines)
	}
}

// statelessRequests is a 2026-07-28 log of n tools/list requests, all
// with the id 1 or (distinct) each with its line number.
func statelessRequests(n int, distinct bool) []byte {
	var log bytes.Buffer
	for i := 1; i <= n; i++ {
		id := 1
		if distinct {
			id = i
		}
		fmt.Fprintf(&log, `{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`+"\n", id)
	}
	return log.Bytes()
}

// sessionSteps runs the session rules alone over a plain JSON Lines log,
// line by line as the sequencer does, and returns the steps of
// bookkeeping they took (checker.steps).
func sessionSteps(t *testing.T, log []byte) int64 {
	t.Helper()
	c, ext := newChecker(0, config{}), loadExt()
	lr := newLineReader(bytes.NewReader(log), 1<<20)
	for {
		data, line, tooLong, ok := lr.next()
		if !ok {
			break
		}
		it := item{name: "steps.jsonl", line: line, data: append([]byte(nil), data...), format: FormatJSONL, dir: unknown, tooLong: tooLong}
		parseItem(&it, ext)
		c.item(&it)
	}
	c.finish()
	return c.steps
}

// TestStatelessSharedIDIsLinear: 2026-07-28 requests sharing an id each
// stay open (they need no answer before the next) and used to be chained
// by a walk to the end of the list, quadratic in the requests (80,000 took
// 28 s). Each request costs O(1) steps of bookkeeping (counted, not timed:
// a walk took thousands each), and a session keeps at most
// maxOpenRequests: the oldest are let go, in one finding with their
// count.
func TestStatelessSharedIDIsLinear(t *testing.T) {
	const n = 20000
	log := statelessRequests(n, false)
	if steps := sessionSteps(t, log); steps > 4*n {
		t.Errorf("%d requests with one id: %d steps of bookkeeping, %.1f each, want O(1) (at most 4)", n, steps, float64(steps)/n)
	}
	rep := checkBytes(t, "same-id.jsonl", log)
	if rep.Errors != 0 || rep.Warnings != maxOpenRequests+1 {
		t.Fatalf("%s, want %d unanswered warnings and the one of those let go", Summary(&rep), maxOpenRequests+1)
	}
	first := rep.Findings[0]
	want := fmt.Sprintf("the client's tools/list request (id 1) and %d more, the oldest open, were let go without a response: the session held %d open requests", n-maxOpenRequests-1, maxOpenRequests)
	if first.Rule != RuleUnanswered || first.Line != 1 || !strings.Contains(first.Reason, want) {
		t.Errorf("first finding %s, want at line 1: %s", first, want)
	}
	if last := rep.Findings[len(rep.Findings)-1]; last.Line != n {
		t.Errorf("last finding %s, want the newest request, line %d, unanswered", last, n)
	}
}

// TestOpenRequestBound: with distinct ids too, a session keeps
// maxOpenRequests open requests. The one let go is reported once, and
// its late answer (or cancellation) is neither unmatched nor late.
func TestOpenRequestBound(t *testing.T) {
	log := statelessRequests(maxOpenRequests+1, true)
	log = append(log, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}
{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"late"}}
{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"late"}}
`...)
	rep := checkBytes(t, "distinct.jsonl", log)
	var letGo, unanswered []Finding
	for _, f := range rep.Findings {
		switch {
		case f.Rule == RuleUnanswered && strings.Contains(f.Reason, "let go"):
			letGo = append(letGo, f)
		case f.Rule == RuleUnanswered:
			unanswered = append(unanswered, f)
		default:
			t.Errorf("unexpected %s", f)
		}
	}
	if len(letGo) != 1 || letGo[0].Line != 1 || !strings.Contains(letGo[0].Reason, "request (id 1) was let go without a response") {
		t.Errorf("let go: %v, want one finding for the request of line 1", letGo)
	}
	if len(unanswered) != maxOpenRequests-1 || unanswered[0].Line != 3 {
		t.Errorf("%d unanswered (%v ...), want %d from line 3", len(unanswered), unanswered[:min(len(unanswered), 1)], maxOpenRequests-1)
	}
}

// TestOpenRequestsAcrossSessions: sessions that each leave requests open
// are bounded together. A session keeps maxOpenRequests, but its open
// requests kept it from compaction, so a log of sessions that each left
// a ping unanswered had no bound (65,536 sessions or more, each with up
// to 10,000), and past maxLiveSessions every new session rescanned them
// all (70,000 sessions took 18.6 s, 100,000 228 s). Just past the bound
// on live sessions, with two requests each (past maxOpenAcross too): the
// oldest of all are let go in one finding, the live sessions stay within
// their bound, and the bookkeeping visits O(1) sessions and requests a
// request (counted, not timed).
func TestOpenRequestsAcrossSessions(t *testing.T) {
	const sessions = maxLiveSessions + 1000
	c := newChecker(0, config{})
	for i := 0; i < sessions; i++ {
		sess := c.session(fmt.Sprint("s", i))
		for id := int64(1); id <= 2; id++ {
			c.addOpen(sess, &openReq{method: methodPing, name: "many.jsonl", line: 2*i + int(id), id: wire.IntID(id), side: fromClient})
		}
	}
	if per := float64(c.steps) / (3 * sessions); per > 8 {
		t.Errorf("%d sessions of 2 requests: %d steps of bookkeeping, %.1f each, want O(1) (at most 8)", sessions, c.steps, per)
	}
	open := 0
	for _, s := range c.sessions {
		open += s.nOpen
	}
	if open != maxOpenAcross || len(c.sessions) > maxLiveSessions {
		t.Errorf("%d requests open in %d live sessions, want %d in at most %d", open, len(c.sessions), maxOpenAcross, maxLiveSessions)
	}
	var letGo []Finding
	unanswered := 0
	for _, f := range c.finish() {
		switch {
		case f.Rule == RuleUnanswered && strings.Contains(f.Reason, "let go"):
			letGo = append(letGo, f)
		case f.Rule == RuleUnanswered:
			unanswered++
		default:
			t.Errorf("unexpected %s", f)
		}
	}
	want := fmt.Sprintf("the client's ping request (id 1) and %d more of the log's sessions, the oldest open, were let go without a response: the log's sessions held %d open requests",
		2*sessions-maxOpenAcross-1, maxOpenAcross)
	if len(letGo) != 1 || letGo[0].Line != 1 || letGo[0].Session != "s0" || !strings.Contains(letGo[0].Reason, want) {
		t.Errorf("let go: %v, want one finding at line 1 of session s0: %s", letGo, want)
	}
	if unanswered != maxOpenAcross {
		t.Errorf("%d unanswered, want %d", unanswered, maxOpenAcross)
	}
}

// TestOpenRequestsAcrossSessionsLog: the bound across sessions in a
// recording (lowered): the requests let go are one finding, their late
// answers and cancellations are not found unmatched, though their
// sessions were compacted meanwhile, and a shutdown session's requests
// no longer count.
func TestOpenRequestsAcrossSessionsLog(t *testing.T) {
	var log bytes.Buffer
	line := func(s int, dir, msg string) {
		fmt.Fprintf(&log, `{"session":"s%d","dir":"%s","msg":%s}`+"\n", s, dir, msg)
	}
	const n = 20
	for s := 0; s < n; s++ {
		line(s, "c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
		line(s, "s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)
		line(s, "c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		line(s, "c2s", `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	}
	fmt.Fprintf(&log, `{"session":"s%d","dir":"c2s","event":"shutdown"}`+"\n", n-1) // its ping: unanswered at its shutdown
	line(0, "s2c", `{"jsonrpc":"2.0","id":2,"result":{}}`)                          // late, let go
	line(1, "c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}`)
	rep := checkBytes(t, "across.jsonl", log.Bytes(), optionFunc(func(c *config) { c.maxLiveSessions, c.maxOpenAcross = 4, 8 }))
	var letGo, unanswered []Finding
	for _, f := range rep.Findings {
		switch {
		case f.Rule == RuleUnanswered && strings.Contains(f.Reason, "let go"):
			letGo = append(letGo, f)
		case f.Rule == RuleUnanswered:
			unanswered = append(unanswered, f)
		default:
			t.Errorf("unexpected %s", f)
		}
	}
	if len(letGo) != 1 || letGo[0].Session != "s0" || letGo[0].Line != 4 ||
		!strings.Contains(letGo[0].Reason, "the client's ping request (id 2) and 11 more of the log's sessions, the oldest open, were let go without a response: the log's sessions held 8 open requests") {
		t.Errorf("let go: %v, want one finding for the 12 oldest pings", letGo)
	}
	var got []string
	for _, f := range unanswered {
		got = append(got, f.Session)
	}
	sort.Strings(got)
	if want := "s12 s13 s14 s15 s16 s17 s18 s19"; strings.Join(got, " ") != want {
		t.Errorf("unanswered in sessions %v, want the 8 newest pings, of %s", got, want)
	}
}

// TestLetGoSessionsBound: the sessions whose let-go requests are reported
// one by one are bounded (each keeps the ids it let go); later sessions'
// are counted in one finding.
func TestLetGoSessionsBound(t *testing.T) {
	defer func(old int) { maxLetGoSessions = old }(maxLetGoSessions)
	maxLetGoSessions = 1
	var log bytes.Buffer
	for _, s := range []string{"s1", "s2", "s3"} {
		for i := 1; i <= maxOpenRequests+1; i++ {
			fmt.Fprintf(&log, `{"session":%q,"dir":"c2s","msg":{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}}`+"\n", s, i)
		}
	}
	rep := checkBytes(t, "sessions.jsonl", log.Bytes())
	var one, later int
	for _, f := range rep.Findings {
		switch {
		case strings.Contains(f.Reason, "the session held"):
			one++
		case strings.Contains(f.Reason, "sessions after the first 1 that held"):
			later++
			if !strings.Contains(f.Reason, "and 1 more") {
				t.Errorf("the later sessions' finding: %s, want their 2 requests let go", f.Reason)
			}
		}
	}
	if one != 1 || later != 1 {
		t.Errorf("%d per-session let-go findings and %d for the later sessions, want 1 and 1", one, later)
	}
}
