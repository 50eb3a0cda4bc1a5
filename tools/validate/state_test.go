package validate

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

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
	if len(s.ranges) != 3 || s.ranges[1] != (idRange{1, 10}) {
		t.Errorf("ranges %v, want [min..min] [1..10] [max..max]", s.ranges)
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
	if s.has(wire.StringID("id-0")) || !s.has(wire.StringID("id-10")) || len(s.strs) != maxStringIDs {
		t.Errorf("string ids: %d kept, oldest kept %v", len(s.strs), s.has(wire.StringID("id-0")))
	}
	// remove: the ends of a range, its middle (a split), a lone one.
	for _, n := range []int64{1, 10, 5, math.MaxInt64} {
		s.remove(wire.IntID(n))
		if s.has(wire.IntID(n)) {
			t.Errorf("has %d after remove", n)
		}
	}
	if len(s.ranges) != 3 || s.ranges[1] != (idRange{2, 4}) || s.ranges[2] != (idRange{6, 9}) || !s.has(wire.IntID(4)) || !s.has(wire.IntID(6)) {
		t.Errorf("after removes: %v", s.ranges)
	}
	s.remove(wire.StringID("id-10"))
	if s.has(wire.StringID("id-10")) {
		t.Error(`has "id-10" after remove`)
	}
	b := newIDSet()
	for i := int64(0); i < maxRanges+5; i++ {
		b.add(wire.IntID(i * 2)) // no two adjacent: one range each
	}
	if len(b.ranges) != maxRanges || b.has(wire.IntID(0)) || !b.has(wire.IntID(2*(maxRanges+4))) {
		t.Errorf("%d ranges", len(b.ranges))
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
		if b.has(wire.IntID(n)) || !b.has(wire.IntID(n+1)) || len(b.ranges) > maxRanges {
			t.Errorf("split at %d: has %v, has next %v, %d ranges", n, b.has(wire.IntID(n)), b.has(wire.IntID(n+1)), len(b.ranges))
		}
	}
	for i := 1; i < len(b.ranges); i++ {
		if r := b.ranges[i]; r.lo > r.hi || b.ranges[i-1].hi >= r.lo {
			t.Fatalf("ranges out of order at %d: %v %v", i, b.ranges[i-1], r)
		}
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

// TestStatelessSharedIDIsLinear: 2026-07-28 requests sharing an id each
// stay open (they need no answer before the next) and used to be chained
// by a walk to the end of the list, quadratic in the requests (80,000 took
// 28 s). 4N lines must cost less than 8 times N lines (best of three; the
// walk made it about 15), and a session keeps at most maxOpenRequests:
// the oldest are let go, in one finding with their count.
func TestStatelessSharedIDIsLinear(t *testing.T) {
	const n = 5000
	best := func(log []byte) (time.Duration, Report) {
		var d time.Duration
		var rep Report
		for i := 0; i < 3; i++ {
			start := time.Now()
			rep = checkBytes(t, "same-id.jsonl", log)
			if e := time.Since(start); i == 0 || e < d {
				d = e
			}
		}
		return d, rep
	}
	small, _ := best(statelessRequests(n, false))
	large, rep := best(statelessRequests(4*n, false))
	t.Logf("%d lines: %v, %d lines: %v", n, small, 4*n, large)
	if large > 8*small {
		t.Errorf("%d lines took %v, %d lines %v: %.1f times, want linear (< 8)", n, small, 4*n, large, float64(large)/float64(small))
	}
	if rep.Errors != 0 || rep.Warnings != maxOpenRequests+1 {
		t.Fatalf("%s, want %d unanswered warnings and the one of those let go", Summary(&rep), maxOpenRequests+1)
	}
	first := rep.Findings[0]
	want := fmt.Sprintf("the client's tools/list request (id 1) and %d more, the oldest open, were let go without a response: the session held %d open requests", 4*n-maxOpenRequests-1, maxOpenRequests)
	if first.Rule != RuleUnanswered || first.Line != 1 || !strings.Contains(first.Reason, want) {
		t.Errorf("first finding %s, want at line 1: %s", first, want)
	}
	if last := rep.Findings[len(rep.Findings)-1]; last.Line != 4*n {
		t.Errorf("last finding %s, want the newest request, line %d, unanswered", last, 4*n)
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
