package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/protocol"

	"github.com/mcpstack/mcpstack/wire"
)

// checker holds the sessions of one input and applies the rules that need
// their history, one line after another.
type checker struct {
	input    int
	cfg      config
	fallback *revision
	sessions map[string]*session
	// first and last are the ends of the list of live sessions by their
	// first message (session.prevLive), for end-of-log findings.
	first, last *session
	ended       *idSet // sessions after their shutdown event (the last 65,536)
	fresh       int    // sessions begun since the last takeNewSessions

	// maxLive bounds the sessions kept whole. Beyond it the least recently
	// active sessions without open requests are compacted into forgotten:
	// their revision, lifecycle state and capabilities are kept, their
	// used ids are not (id-reuse across the compaction goes unnoticed).
	// forgotten keeps at most 4*maxLive sessions; older ones are dropped,
	// and a message of theirs starts a new session. Both are bounded, so a
	// recording whose sessions never end still needs bounded memory. The
	// sessions with open requests are not compacted; there are at most
	// maxOpen of them (see openOldest).
	maxLive     int
	forgotten   map[string]*session
	forgetQueue []forgotEntry // oldest first, stale entries included
	forgetSeq   int64
	// idleOldest and idleNewest are the ends of the list of live sessions
	// without open requests, least recently active first
	// (session.idleOlder): the next to compact is at hand, with no scan.
	idleOldest, idleNewest *session

	// openOldest and openNewest are the ends of the list of the open
	// requests of all sessions, in the order they were sent
	// (openReq.allOlder), nOpen its length: past maxOpen the oldest is let
	// go, all of them reported in one finding (letGoAll).
	openOldest, openNewest *openReq
	nOpen, maxOpen         int
	letGoAll               letGo
	// letGoLater are the requests let go past maxOpenRequests by sessions
	// after the first maxLetGoSessions that did, counted together.
	letGoLater letGo
	// letGoKeys are the last maxLetGoKeys requests letGoAll let go (their
	// sessions may be compacted since, and their ids with them): an
	// answer to one is not unmatched.
	letGoKeys recent[letGoKey]

	// steps counts the sessions and requests the bookkeeping above
	// visits: each message costs O(1) of them, which tests count.
	steps int64

	// sessionGiven is the line of the first initialize answer whose HTTP
	// exchange gave an Mcp-Session-Id (0: none yet): from then on a
	// client's POST without one has lost its session.
	sessionGiven int
	// lost are the ids of the requests of such POSTs (at most maxLost):
	// their answers, under no session too, are not checked either.
	lost map[wire.ID]bool
	// letGoSessions are the sessions that let requests go past
	// maxOpenRequests, for the end-of-log findings (at most
	// maxLetGoSessions; later ones count with letGoAll).
	letGoSessions []*session
	// segments counts the sessions a sessionless HTTP recording holds
	// (see segment); 0 until it has one.
	segments  int
	segmented bool
}

// forgotEntry is a place in the forgotten queue; a session compacted again
// after a revival has a newer entry, and only that one counts.
type forgotEntry struct {
	s   *session
	seq int64
}

const maxLiveSessions = 1 << 16

// maxOpenAcross bounds the open requests of all the sessions of a log:
// beyond it the oldest of all is let go, and the log gets one unanswered
// warning at its end with the first of them and the count. (A session
// keeps at most maxOpenRequests, but a log of sessions that each leave a
// request open had no bound: 65,536 sessions or more, each with 10,000.)
// The last maxLetGoKeys let go are remembered, so that their answers are
// not found unmatched.
const (
	maxOpenAcross = 100000
	maxLetGoKeys  = 1 << 16
)

// letGoKey is a request letGoAll let go.
type letGoKey struct {
	session string
	side    side
	id      wire.ID
}

// earlyRequest is a message a side sent before notifications/initialized
// that only may come after it: a client's request, a server's request or
// notification.
type earlyRequest struct {
	name, method, excerpt string
	line                  int
}

// maxEarlyLines bounds the lines an early-requests finding lists.
const maxEarlyLines = 20

// earlyFinding is, for each side, the one finding of what it sent before
// notifications/initialized that must come after it (nil when nothing
// was): one defect, however many messages it touches; it is given once.
func (sess *session) earlyFinding() []Finding {
	var out []Finding
	for _, s := range [...]side{fromClient, fromServer} {
		early := sess.early[s]
		if len(early) == 0 {
			continue
		}
		rule, what, before := RuleInitializedFirst, "request", "notifications/initialized (only ping may come before it)"
		if s == fromServer {
			rule, what, before = RuleServerEarly, "message", "the client's notifications/initialized (only ping and logging may come before it)"
		}
		first := early[0]
		reason := fmt.Sprintf("the %s sent %s before %s", s, first.method, before)
		if more := early[1:]; len(more) > 0 {
			lines := make([]string, 0, len(more)+1)
			for _, e := range more {
				lines = append(lines, strconv.Itoa(e.line))
			}
			if sess.earlyExtra[s] > 0 {
				lines = append(lines, "...")
			}
			n, at := len(more)+sess.earlyExtra[s], "lines"
			if n == 1 {
				at = "line"
			} else {
				what += "s"
			}
			reason += fmt.Sprintf("; so did %d more %s, at %s %s", n, what, at, strings.Join(lines, ", "))
		}
		sess.early[s], sess.earlyExtra[s] = nil, 0
		out = append(out, Finding{File: first.name, Line: first.line, Session: sess.id, Side: s.String(), Rule: rule,
			Severity: ruleByID[rule].Severity, Pointer: "/method", Reason: reason, Excerpt: first.excerpt})
	}
	return out
}

// noteEarly keeps a message sent before notifications/initialized for
// earlyFinding (the first maxEarlyLines; the rest are counted).
func (sess *session) noteEarly(s side, it *item, m *message) {
	if len(sess.early[s]) > maxEarlyLines {
		sess.earlyExtra[s]++ // bounded: a client that never sends it
		return
	}
	raw := it.raw
	if raw == nil {
		raw = it.data
	}
	sess.early[s] = append(sess.early[s], earlyRequest{name: it.name, method: m.method, line: it.line, excerpt: excerpt(raw)})
}

// openReq is a request waiting for its response.
type openReq struct {
	method      string
	name        string // the file it was read from (pairs have two)
	line        int
	rev         *revision
	hasToken    bool
	token       wire.ID
	hasProgress bool
	progress    float64
	progLine    int
	cancelled   bool
	task        bool           // params.task: answered with a CreateTaskResult (2025-11-25)
	taskID      string         // the task a tasks/* request names
	clientCaps  map[string]any // 2026-07-28: what params._meta declared

	id   wire.ID
	side side     // who sent it
	sess *session // whose it is
	next *openReq // a later stateless request with the same id, still open
	last *openReq // on the first open request of an id: the last of them
	// older and newer link a session's open requests in the order they
	// were sent, both sides: the oldest is let go past maxOpenRequests.
	older, newer *openReq
	// allOlder and allNewer link the open requests of all sessions so:
	// the oldest is let go past maxOpenAcross.
	allOlder, allNewer *openReq
}

// maxOpenRequests bounds the open requests a session keeps (both sides):
// beyond it the oldest is let go, and reported once per session and side
// (letGoFinding). 2026-07-28 requests are not in a session, so a
// recording of them is one "session" whose requests need no answer
// before the next.
const maxOpenRequests = 10000

// letGo is what a session let go of a side's requests past
// maxOpenRequests (or, letGoAll, the checker of all past maxOpenAcross):
// how many, the first, and (a session's) their ids (an answer to one is
// not unmatched; a bounded set).
type letGo struct {
	n       int
	name    string
	line    int
	method  string
	id      wire.ID
	ids     *idSet
	session string // letGoAll: the first one's session and side
	side    side
}

// session is the state machine of one session.
type session struct {
	id       string
	forgotAt int64     // the forgetSeq of its last compaction
	rev      *revision // what messages are read as; nil when unknown
	// negotiated: rev comes from an initialize result.
	negotiated  bool
	revReported bool

	initSent bool    // an initialize request was seen
	initID   wire.ID // its id
	// early are the client's requests before notifications/initialized:
	// one defect, reported once (earlyFinding) when it ends, with the
	// count and the lines.
	early        [2][]earlyRequest // by side
	earlyExtra   [2]int            // the early messages past those kept in early
	initPending  bool              // ... and not answered yet
	initLine     int
	initAnswered bool // ... and answered with a result
	initialized  bool // notifications/initialized was seen

	open   [2]map[wire.ID]*openReq // by the side that sent the request: the first open one of each id
	used   [2]*idSet
	tokens [2]map[wire.ID]*openReq // progress tokens of open requests, by requester

	// oldest and newest are the ends of the list of open requests (see
	// openReq.older), nOpen its length; letGo what the bound let go.
	oldest, newest *openReq
	nOpen          int
	letGo          [2]letGo // by side
	letGoListed    bool     // in checker.letGoSessions

	tasks map[string]*taskState // by taskId (2025-11-25), at most maxTasksPerSession

	caps      [2]map[string]any // declared capabilities, by declaring side
	capsKnown [2]bool
	capsFrom  [2]string // where they were declared, for reasons

	// prevLive and nextLive link the live sessions by first message;
	// idleOlder and idleNewer those without open requests by activity
	// (idle: in that list).
	prevLive, nextLive   *session
	idleOlder, idleNewer *session
	idle                 bool
}

func newChecker(input int, cfg config) *checker {
	c := &checker{input: input, cfg: cfg, sessions: map[string]*session{}, ended: newIDSet(), letGoKeys: recent[letGoKey]{max: maxLetGoKeys},
		maxLive: cfg.maxLiveSessions, forgotten: map[string]*session{}, maxOpen: cfg.maxOpenAcross}
	if c.maxLive <= 0 {
		c.maxLive = maxLiveSessions
	}
	if c.maxOpen <= 0 {
		c.maxOpen = maxOpenAcross
	}
	if cfg.revision != "" {
		c.fallback = lookupRevision(cfg.revision)
	}
	return c
}

func (c *checker) takeNewSessions() int {
	n := c.fresh
	c.fresh = 0
	return n
}

func (c *checker) session(id string) *session {
	s := c.sessions[id]
	if s == nil {
		if s = c.forgotten[id]; s != nil {
			delete(c.forgotten, id)
		} else {
			s = &session{id: id}
			c.fresh++
		}
		for i := range s.open {
			s.open[i] = map[wire.ID]*openReq{}
			s.tokens[i] = map[wire.ID]*openReq{}
			s.used[i] = newIDSet()
		}
		c.sessions[id] = s
		s.prevLive, s.nextLive = c.last, nil
		if c.last != nil {
			c.last.nextLive = s
		} else {
			c.first = s
		}
		c.last = s
		c.setIdle(s)
		// The least recently active sessions without open requests go,
		// one each: no scan.
		for len(c.sessions) > c.maxLive && c.idleOldest != nil && c.idleOldest != s {
			c.compact(c.idleOldest)
		}
		return s
	}
	if s.idle && s != c.idleNewest { // active now: the newest of the idle
		c.unsetIdle(s)
		c.setIdle(s)
	}
	return s
}

// setIdle puts a session without open requests at the newest end of the
// idle list.
func (c *checker) setIdle(s *session) {
	c.steps++
	s.idle, s.idleOlder, s.idleNewer = true, c.idleNewest, nil
	if c.idleNewest != nil {
		c.idleNewest.idleNewer = s
	} else {
		c.idleOldest = s
	}
	c.idleNewest = s
}

// unsetIdle takes a session out of the idle list (it has an open request,
// or is no longer live).
func (c *checker) unsetIdle(s *session) {
	if !s.idle {
		return
	}
	c.steps++
	if s.idleOlder != nil {
		s.idleOlder.idleNewer = s.idleNewer
	} else {
		c.idleOldest = s.idleNewer
	}
	if s.idleNewer != nil {
		s.idleNewer.idleOlder = s.idleOlder
	} else {
		c.idleNewest = s.idleOlder
	}
	s.idle, s.idleOlder, s.idleNewer = false, nil, nil
}

// drop ends a live session's life in the checker: it leaves the lists,
// and its open requests (reported by the caller) are no longer open.
func (c *checker) drop(s *session) {
	delete(c.sessions, s.id)
	c.unsetIdle(s)
	if s.prevLive != nil {
		s.prevLive.nextLive = s.nextLive
	} else {
		c.first = s.nextLive
	}
	if s.nextLive != nil {
		s.nextLive.prevLive = s.prevLive
	} else {
		c.last = s.prevLive
	}
	s.prevLive, s.nextLive = nil, nil
	for o := s.oldest; o != nil; o = o.newer {
		c.unlinkAll(o)
	}
}

// compact moves an idle session into forgotten.
func (c *checker) compact(s *session) {
	c.drop(s)
	s.open, s.tokens, s.used = [2]map[wire.ID]*openReq{}, [2]map[wire.ID]*openReq{}, [2]*idSet{}
	s.letGo[fromClient].ids, s.letGo[fromServer].ids = nil, nil
	c.forgetSeq++
	s.forgotAt = c.forgetSeq
	c.forgetQueue = append(c.forgetQueue, forgotEntry{s, c.forgetSeq})
	c.forgotten[s.id] = s
	c.trimForgotten()
}

func (e forgotEntry) current(c *checker) bool {
	return c.forgotten[e.s.id] == e.s && e.s.forgotAt == e.seq
}

// trimForgotten drops the oldest forgotten sessions beyond 4*maxLive, and
// the stale entries of the queue when they pile up.
func (c *checker) trimForgotten() {
	limit := 4 * c.maxLive
	i := 0
	for len(c.forgotten) > limit && i < len(c.forgetQueue) {
		if e := c.forgetQueue[i]; e.current(c) {
			delete(c.forgotten, e.s.id)
		}
		i++
	}
	c.forgetQueue = c.forgetQueue[i:]
	if len(c.forgetQueue) > 2*limit {
		q := make([]forgotEntry, 0, len(c.forgotten))
		for _, e := range c.forgetQueue {
			if e.current(c) {
				q = append(q, e)
			}
		}
		c.forgetQueue = q
	}
}

// item applies the rules to one line.
func (c *checker) item(it *item) {
	if it.skip {
		return
	}
	if c.sessionless(it) || c.sessionlessAnswer(it) {
		return
	}
	if it.session == "" {
		it.session = c.segment(it)
	}
	if c.ended.has(wire.StringID(it.session)) {
		what := "a message"
		if it.event != "" {
			what = "another " + it.event + " event"
		}
		it.finding(RuleAfterShutdown, it.session, "", fmt.Sprintf("%s after the session's shutdown", what))
		return
	}
	sess := c.session(it.session)
	if it.event == eventRefused { // an HTTP answer closed these requests
		for _, id := range it.answers {
			if sess.open[fromClient][id] == nil {
				continue
			}
			if sess.initPending && !sess.initAnswered && id == sess.initID {
				// A refused initialize (a 401 before the OAuth flow) did
				// not happen: the client will send it again.
				sess.initPending, sess.initSent = false, false
			}
			sess.used[fromClient].remove(id) // and may reuse its id, and its progress token
			c.closeOpen(sess, fromClient, id)
		}
		return
	}
	if it.event == eventShutdown {
		it.findings = append(it.findings, sess.earlyFinding()...)
		it.findings = append(it.findings, c.letGoFinding(sess)...)
		it.findings = append(it.findings, c.unanswered(sess, "the session's shutdown")...)
		c.drop(sess)
		c.ended.add(wire.StringID(sess.id))
		return
	}
	mark := len(it.findings)
	for i := range it.msgs {
		c.message(sess, it, &it.msgs[i])
	}
	if it.batch {
		before := append([]Finding(nil), it.findings[mark:]...)
		it.findings = it.findings[:mark]
		c.batch(sess, it)
		it.findings = append(it.findings, before...)
	}
	if it.http != nil {
		c.exchange(sess, it)
	}
}

// finish reports what is still open at the end of the input.
func (c *checker) finish() []Finding {
	var out []Finding
	for s := c.first; s != nil; s = s.nextLive {
		out = append(out, s.earlyFinding()...)
		out = append(out, c.unanswered(s, "the end of the log")...)
	}
	for _, s := range c.letGoSessions { // compacted ones too
		out = append(out, c.letGoFinding(s)...)
	}
	if lg := &c.letGoLater; lg.n > 0 {
		out = append(out, Finding{File: lg.name, Line: lg.line, Session: lg.session, Side: lg.side.String(), Rule: RuleUnanswered,
			Severity: ruleByID[RuleUnanswered].Severity, Pointer: "/id",
			Reason: fmt.Sprintf("the %s's %s request (id %s) and %d more of sessions after the first %d that held %d open requests were let go without a response; later responses to them are not checked", lg.side, lg.method, lg.id, lg.n-1, maxLetGoSessions, maxOpenRequests)})
		lg.n = 0
	}
	if lg := &c.letGoAll; lg.n > 0 {
		what := fmt.Sprintf("the %s's %s request (id %s) was", lg.side, lg.method, lg.id)
		later := "a later response to it is"
		if lg.n > 1 {
			what = fmt.Sprintf("the %s's %s request (id %s) and %d more of the log's sessions, the oldest open, were", lg.side, lg.method, lg.id, lg.n-1)
			later = "later responses to them are"
		}
		out = append(out, Finding{File: lg.name, Line: lg.line, Session: lg.session, Side: lg.side.String(), Rule: RuleUnanswered,
			Severity: ruleByID[RuleUnanswered].Severity, Pointer: "/id",
			Reason: fmt.Sprintf("%s let go without a response: the log's sessions held %d open requests, the most the validator keeps; %s not checked", what, c.maxOpen, later)})
		lg.n = 0
	}
	return out
}

// addOpen records an open request: after the open ones of its id, and as
// the newest of the session's and of all. Past the session's bound its
// oldest is let go, past the checker's the oldest of all.
func (c *checker) addOpen(sess *session, o *openReq) {
	c.steps++
	o.sess = sess
	if first := sess.open[o.side][o.id]; first == nil {
		sess.open[o.side][o.id] = o
	} else {
		last := first.last
		if last == nil {
			last = first
		}
		last.next, first.last = o, o
	}
	o.older = sess.newest
	if sess.newest != nil {
		sess.newest.newer = o
	} else {
		sess.oldest = o
	}
	sess.newest = o
	o.allOlder = c.openNewest
	if c.openNewest != nil {
		c.openNewest.allNewer = o
	} else {
		c.openOldest = o
	}
	c.openNewest = o
	c.nOpen++
	if sess.nOpen == 0 {
		c.unsetIdle(sess)
	}
	sess.nOpen++
	for sess.nOpen > maxOpenRequests {
		c.steps++
		old := sess.oldest // the first open one of its id: the oldest of all
		if !sess.letGoListed && len(c.letGoSessions) >= maxLetGoSessions {
			c.letGoTogether(&c.letGoLater, old) // past the sessions reported one by one
			continue
		}
		lg := &sess.letGo[old.side]
		if lg.n == 0 {
			lg.name, lg.line, lg.method, lg.id = old.name, old.line, old.method, old.id
		}
		lg.n++
		if lg.ids == nil {
			lg.ids = newIDSet()
		}
		lg.ids.add(old.id)
		if !sess.letGoListed {
			sess.letGoListed = true
			c.letGoSessions = append(c.letGoSessions, sess)
		}
		c.closeOpen(sess, old.side, old.id)
	}
	for c.nOpen > c.maxOpen {
		c.steps++
		c.letGoTogether(&c.letGoAll, c.openOldest) // the oldest of its session, so the first open one of its id
	}
}

// maxLetGoSessions bounds the sessions whose let-go requests are reported
// one by one at the end (each keeps the ids it let go); later sessions'
// are counted together (letGoLater).
var maxLetGoSessions = 1024 // a variable for the tests

// letGoTogether lets an open request go, counted in lg (one finding at the
// end) and remembered among the last maxLetGoKeys, so that a late answer
// is not unmatched.
func (c *checker) letGoTogether(lg *letGo, old *openReq) {
	if lg.n == 0 {
		lg.name, lg.line, lg.method, lg.id, lg.session, lg.side = old.name, old.line, old.method, old.id, old.sess.id, old.side
	}
	lg.n++
	c.letGoKeys.add(letGoKey{old.sess.id, old.side, old.id})
	c.closeOpen(old.sess, old.side, old.id)
}

// wasLetGo reports whether a request of the session's side with the id
// was let go past a bound (its answer is not checked).
func (c *checker) wasLetGo(sess *session, s side, id wire.ID) bool {
	if sess.letGo[s].ids.has(id) {
		return true
	}
	return c.letGoKeys.has(letGoKey{sess.id, s, id})
}

// unlinkAll takes an open request out of the list of all.
func (c *checker) unlinkAll(o *openReq) {
	c.steps++
	if o.allOlder != nil {
		o.allOlder.allNewer = o.allNewer
	} else {
		c.openOldest = o.allNewer
	}
	if o.allNewer != nil {
		o.allNewer.allOlder = o.allOlder
	} else {
		c.openNewest = o.allOlder
	}
	o.allOlder, o.allNewer = nil, nil
	c.nOpen--
}

// closeOpen removes the first open request of the side with the id (the
// one an answer goes to) and returns it (nil when none is open).
func (c *checker) closeOpen(sess *session, s side, id wire.ID) *openReq {
	o := sess.open[s][id]
	if o == nil {
		return nil
	}
	if o.next != nil {
		if o.next != o.last {
			o.next.last = o.last
		}
		sess.open[s][id] = o.next // another stateless request with the id waits
	} else {
		delete(sess.open[s], id)
	}
	o.next, o.last = nil, nil
	if o.older != nil {
		o.older.newer = o.newer
	} else {
		sess.oldest = o.newer
	}
	if o.newer != nil {
		o.newer.older = o.older
	} else {
		sess.newest = o.older
	}
	o.older, o.newer = nil, nil
	c.unlinkAll(o)
	sess.nOpen--
	if sess.nOpen == 0 {
		c.setIdle(sess)
	}
	if o.hasToken && sess.tokens[s][o.token] == o {
		delete(sess.tokens[s], o.token)
	}
	return o
}

// letGoFinding is, for each side, the one finding of the requests the
// session let go past the bound on open requests (nil when none were);
// it is given once.
func (c *checker) letGoFinding(sess *session) []Finding {
	var out []Finding
	for _, s := range [...]side{fromClient, fromServer} {
		lg := &sess.letGo[s]
		if lg.n == 0 {
			continue
		}
		what := fmt.Sprintf("the %s's %s request (id %s) was", s, lg.method, lg.id)
		later := "a later response to it is"
		if lg.n > 1 {
			what = fmt.Sprintf("the %s's %s request (id %s) and %d more, the oldest open, were", s, lg.method, lg.id, lg.n-1)
			later = "later responses to them are"
		}
		out = append(out, Finding{File: lg.name, Line: lg.line, Session: sess.id, Side: s.String(), Rule: RuleUnanswered,
			Severity: ruleByID[RuleUnanswered].Severity, Pointer: "/id",
			Reason: fmt.Sprintf("%s let go without a response: the session held %d open requests, the most the validator keeps; %s not checked", what, maxOpenRequests, later)})
		lg.n = 0
	}
	return out
}

func (c *checker) unanswered(sess *session, when string) []Finding {
	var out []Finding
	for sd := range sess.open {
		for id, first := range sess.open[sd] {
			for o := first; o != nil; o = o.next {
				if o.cancelled || o.method == methodListen {
					// A subscription stream ends when the client goes away
					// (2026-07-28 basic/patterns/subscriptions): no response.
					continue
				}
				out = append(out, Finding{
					File: o.name, Line: o.line, Session: sess.id, Side: side(sd).String(), Rule: RuleUnanswered, Severity: ruleByID[RuleUnanswered].Severity,
					Pointer: "/id",
					Reason:  fmt.Sprintf("the %s's %s request (id %s) got no response by %s", side(sd), o.method, id, when),
				})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// batch checks a line that is a JSON array.
func (c *checker) batch(sess *session, it *item) {
	calls, responses := false, false
	for _, m := range it.msgs {
		switch m.kind {
		case kindRequest, kindNotification:
			calls = true
			if m.method == methodInitialize {
				it.finding(RuleBatch, it.session, m.ptr, "initialize must not be part of a batch")
			}
		case kindResult, kindError:
			responses = true
		}
	}
	if calls && responses {
		it.finding(RuleBatch, it.session, "", "a batch holds requests and notifications, or responses, not both")
	}
	rev := sess.rev
	if rev == nil && !sess.negotiated {
		rev = c.fallback
	}
	if rev == nil {
		return
	}
	if calls && !rev.batchRequest {
		it.finding(RuleBatch, it.session, "", fmt.Sprintf("revision %s has no batches (its schema has no JSONRPCBatchRequest): one message per line", rev.name()))
	} else if responses && !calls && !rev.batchResponse {
		it.finding(RuleBatch, it.session, "", fmt.Sprintf("revision %s has no batches (its schema has no JSONRPCBatchResponse): one message per line", rev.name()))
	}
}

func (c *checker) message(sess *session, it *item, m *message) {
	if m.kind == kindInvalid {
		return
	}
	s := it.dir
	if s == unknown {
		s = c.inferSide(sess, m)
	}
	it.sender, it.senderKnown = s, true
	switch m.kind {
	case kindRequest, kindNotification:
		c.call(sess, it, m, s)
	default:
		c.response(sess, it, m, s)
	}
}

// revisionFor says which revision a request or notification is read as,
// and remembers what the message tells of the session's revision.
func (c *checker) revisionFor(sess *session, it *item, m *message, s side) *revision {
	if sess.negotiated {
		return sess.rev
	}
	if s == fromClient && m.kind == kindRequest {
		if meta, _ := m.params["_meta"].(map[string]any); meta != nil {
			if pv, isStr := meta[wire.MetaProtocolVersion].(string); isStr {
				r := lookupRevision(pv)
				if r == nil {
					it.finding(RuleRevision, it.session, m.ptr+"/params/_meta/"+escape(wire.MetaProtocolVersion),
						fmt.Sprintf("protocolVersion %s is not a revision this validator knows (%v): schema checks are skipped", strconv.Quote(pv), revisionNames()))
					return nil
				}
				if !r.lifecycle {
					// A revision without initialize: each request says
					// which it is; server messages follow the last one.
					sess.rev = r
					return r
				}
			}
		}
		if m.method == methodInitialize {
			pv, _ := m.params["protocolVersion"].(string)
			r := lookupRevision(pv)
			if r == nil || !r.lifecycle {
				r = newestLifecycle
			}
			sess.rev = r
			return r
		}
	}
	if sess.rev != nil {
		return sess.rev
	}
	if c.fallback != nil {
		return c.fallback
	}
	if !sess.revReported {
		sess.revReported = true
		it.finding(RuleRevision, it.session, "", "cannot tell the protocol revision: the session has no initialize and no params._meta protocolVersion; pass --revision. Schema, lifecycle and capability checks are skipped")
	}
	return nil
}

// call checks a request or notification.
func (c *checker) call(sess *session, it *item, m *message, s side) {
	rev := c.revisionFor(sess, it, m, s)
	var md protocol.Method
	known := false
	what := m.method + " request"
	if m.kind == kindNotification {
		what = m.method + " notification"
	}
	if rev != nil {
		md, known = rev.spec.Method(m.method)
		switch {
		case !known:
			it.finding(RuleUnknownMethod, it.session, m.ptr+"/method", fmt.Sprintf("%s is not a method of revision %s", strconv.Quote(m.method), rev.name()))
		case s == fromClient && !md.ClientToServer:
			it.finding(RuleDirection, it.session, m.ptr+"/method", fmt.Sprintf("the client sent %s, which only the server sends in %s", m.method, rev.name()))
		case s == fromServer && !md.ServerToClient:
			it.finding(RuleDirection, it.session, m.ptr+"/method", fmt.Sprintf("the server sent %s, which only the client sends in %s", m.method, rev.name()))
		}
		if known && md.Notification && m.kind == kindRequest {
			it.finding(RuleSchema, it.session, m.ptr+"/id", fmt.Sprintf("%s is a notification: it has no id", m.method))
		}
		if known && !md.Notification && m.kind == kindNotification {
			it.finding(RuleSchema, it.session, m.ptr+"/id", fmt.Sprintf("%s is a request: it needs an id", m.method))
		}
		if rev.lifecycle {
			c.lifecycle(sess, it, m, s)
		}
	}
	if m.kind == kindRequest && !(known && md.Notification) {
		c.openRequest(sess, it, m, s, rev)
	}
	switch m.method {
	case methodCancelled:
		if m.kind == kindNotification {
			c.cancelled(sess, it, m, s)
		}
	case methodProgress:
		if m.kind == kindNotification {
			c.progressed(sess, it, m, s)
		}
	case methodTaskStatus:
		if m.kind == kindNotification {
			c.taskNotified(sess, it, m)
		}
	}
	if rev != nil && known {
		c.capabilities(sess, it, m, s, rev)
		if m.ok && rev.v != nil {
			it.jobs = append(it.jobs, job{rev: rev, def: md.Request, value: m.obj, prefix: m.ptr, rule: RuleSchema, what: what})
		}
	}
}

// lifecycle applies the initialization rules of revisions with initialize.
func (c *checker) lifecycle(sess *session, it *item, m *message, s side) {
	if s == fromClient {
		switch {
		case m.method == methodInitialize && m.kind == kindRequest:
			if sess.initAnswered || sess.initPending {
				it.finding(RuleInitOnce, it.session, m.ptr+"/method", fmt.Sprintf("a second initialize in the session (the first at line %d)", sess.initLine))
				return
			}
			sess.initSent, sess.initPending, sess.initLine, sess.initID = true, true, it.line, m.id
			if caps, ok := m.params["capabilities"].(map[string]any); ok {
				sess.caps[fromClient], sess.capsKnown[fromClient] = caps, true
				sess.capsFrom[fromClient] = fmt.Sprintf("its initialize request, line %d", it.line)
			}
		case !sess.initSent:
			it.finding(RuleInitFirst, it.session, m.ptr+"/method", fmt.Sprintf("the client sent %s before initialize: initialize must come first in a session", m.method))
		case m.method == methodInitialized:
			switch {
			case sess.initialized:
				it.finding(RuleInitOnce, it.session, m.ptr+"/method", "notifications/initialized a second time")
			case !sess.initAnswered:
				it.finding(RuleInitializedFirst, it.session, m.ptr+"/method", "notifications/initialized before the initialize result")
			}
			sess.initialized = true
			it.findings = append(it.findings, sess.earlyFinding()...) // the early requests are over
		case m.kind == kindRequest && m.method != methodPing && !sess.initialized:
			sess.noteEarly(fromClient, it, m)
		}
		return
	}
	switch {
	case !sess.initSent:
		it.finding(RuleInitFirst, it.session, m.ptr+"/method", fmt.Sprintf("the server sent %s before the client's initialize", m.method))
	case sess.initialized:
	case m.kind == kindRequest && m.method != methodPing,
		m.kind == kindNotification && m.method != methodLog:
		sess.noteEarly(fromServer, it, m)
	}
}

// openRequest records a request and checks its id and progress token.
func (c *checker) openRequest(sess *session, it *item, m *message, s side, rev *revision) {
	prev := sess.open[s][m.id]
	stateless := rev != nil && !rev.lifecycle
	switch {
	case prev != nil && !stateless:
		it.finding(RuleIDReuse, it.session, m.ptr+"/id", fmt.Sprintf("the %s reuses id %s while its %s request of line %d is still open", s, m.id, prev.method, prev.line))
	case sess.used[s].has(m.id) && (rev == nil || rev.lifecycle) && !c.wasLetGo(sess, s, m.id):
		// Without sessions (2026-07-28) an id is only bound while its
		// request is open.
		it.finding(RuleIDReuse, it.session, m.ptr+"/id", fmt.Sprintf("the %s already used id %s in this session", s, m.id))
	}
	sess.used[s].add(m.id)
	o := &openReq{method: m.method, name: it.name, line: it.line, rev: rev, taskID: taskOf(m), id: m.id, side: s}
	_, o.task = m.params["task"]
	if tok, ok := progressTokenOf(m.params); ok {
		if other := sess.tokens[s][tok]; other != nil {
			it.finding(RuleProgressToken, it.session, m.ptr+"/params/_meta/progressToken", fmt.Sprintf("progressToken %s is in use by the open %s request of line %d", tok, other.method, other.line))
		} else {
			sess.tokens[s][tok] = o
			o.hasToken, o.token = true, tok
		}
	}
	if meta, _ := m.params["_meta"].(map[string]any); meta != nil {
		o.clientCaps, _ = meta[wire.MetaClientCapabilities].(map[string]any)
	}
	if prev == nil || stateless {
		// Stateless requests (2026-07-28) stand alone: two of them in
		// flight at once may share an id (each its own HTTP exchange, a
		// recording without sessions holds both). Answers go to the
		// earliest first.
		c.addOpen(sess, o)
	}
}

func (c *checker) cancelled(sess *session, it *item, m *message, s side) {
	raw, ok := m.params["requestId"]
	if !ok {
		return
	}
	id, err := wire.IDFromValue(raw)
	if err != nil {
		return
	}
	ptr := m.ptr + "/params/requestId"
	o := sess.open[s][id]
	switch {
	case o != nil:
		if o.method == methodInitialize && o.rev != nil && o.rev.lifecycle {
			it.finding(RuleCancelInitialize, it.session, ptr, "the initialize request must not be cancelled")
		}
		o.cancelled = true
	case s == fromClient && sess.initSent && id == sess.initID:
		// answered already, and still never to be cancelled
		it.finding(RuleCancelInitialize, it.session, ptr, "the initialize request must not be cancelled (here after its answer)")
	case c.wasLetGo(sess, s, id):
		// let go past the bound: whether it was answered is not known
	case sess.used[s].has(id):
		it.finding(RuleCancelLate, it.session, ptr, fmt.Sprintf("the %s cancels its request %s, which was answered already", s, id))
	default:
		it.finding(RuleCancelUnknown, it.session, ptr, fmt.Sprintf("the %s cancels request %s, which it never sent (cancellation goes the way of the request)", s, id))
	}
}

func (c *checker) progressed(sess *session, it *item, m *message, s side) {
	raw, ok := m.params["progressToken"]
	if !ok {
		return
	}
	tok, err := wire.IDFromValue(raw)
	if err != nil {
		return
	}
	o := sess.tokens[s.other()][tok]
	if o == nil {
		it.finding(RuleProgressToken, it.session, m.ptr+"/params/progressToken", fmt.Sprintf("no open request of the %s carries progressToken %s", s.other(), tok))
		return
	}
	p, err := codec.Float(m.params["progress"])
	if err != nil {
		return
	}
	if o.hasProgress && p <= o.progress {
		it.finding(RuleProgressOrder, it.session, m.ptr+"/params/progress", fmt.Sprintf("progress %v does not increase (it was %v at line %d)", p, o.progress, o.progLine))
	}
	o.hasProgress, o.progress, o.progLine = true, p, it.line
}

// capabilities checks that the capability a message needs was declared.
func (c *checker) capabilities(sess *session, it *item, m *message, s side, rev *revision) {
	for _, need := range capNeeds[m.method] {
		if need.sender != s || !rev.caps[need.declarer][need.path] {
			continue
		}
		if need.when != nil && !need.when(m.params) {
			continue
		}
		if !sess.capsKnown[need.declarer] {
			continue
		}
		if !declared(sess.caps[need.declarer], need.path) {
			it.finding(RuleCapability, it.session, m.ptr+"/method", fmt.Sprintf("%s needs the %s capability %s, which the %s did not declare (%s)",
				m.method, need.declarer, need.path, need.declarer, sess.capsFrom[need.declarer]))
			return
		}
	}
}

// response checks a result or an error.
func (c *checker) response(sess *session, it *item, m *message, s side) {
	r := s.other()
	var o *openReq
	if !m.id.IsZero() {
		o = sess.open[r][m.id]
	}
	if o == nil {
		if !m.id.IsZero() && !c.wasLetGo(sess, r, m.id) {
			if sess.used[r].has(m.id) {
				it.finding(RuleResponseUnmatched, it.session, m.ptr+"/id", fmt.Sprintf("the %s's request %s was answered already", r, m.id))
			} else {
				it.finding(RuleResponseUnmatched, it.session, m.ptr+"/id", fmt.Sprintf("the %s sent no request with id %s", r, m.id))
			}
		}
		if m.kind == kindError && m.ok {
			rev := sess.rev
			if rev == nil && !sess.negotiated {
				rev = c.fallback
			}
			if rev != nil && rev.v != nil && rev.errorDef != "" {
				it.jobs = append(it.jobs, job{rev: rev, def: rev.errorDef, value: withoutIDRule(m), prefix: m.ptr, rule: RuleErrorSchema, what: "error response"})
			}
		}
		return
	}
	c.closeOpen(sess, r, m.id)
	rev := o.rev
	if m.kind == kindError && rev != nil {
		c.errorStatus(it, m, rev)
	}
	result, _ := m.obj["result"].(map[string]any)
	if o.method == methodInitialize && r == fromClient && rev != nil && rev.lifecycle {
		sess.initPending = false
		if m.kind == kindResult {
			sess.initAnswered = true
			sess.negotiated = true
			pv, _ := result["protocolVersion"].(string)
			rev = lookupRevision(pv)
			sess.rev = rev
			if rev == nil {
				sess.revReported = true
				it.finding(RuleRevision, it.session, m.ptr+"/result/protocolVersion",
					fmt.Sprintf("the server chose protocolVersion %s, which is not a revision this validator knows (%v): schema checks are skipped for the session", strconv.Quote(pv), revisionNames()))
			}
			if caps, ok := result["capabilities"].(map[string]any); ok {
				sess.caps[fromServer], sess.capsKnown[fromServer] = caps, true
				sess.capsFrom[fromServer] = fmt.Sprintf("its initialize result, line %d", it.line)
			}
		}
	}
	if o.method == methodDiscover && r == fromClient && m.kind == kindResult {
		if caps, ok := result["capabilities"].(map[string]any); ok {
			sess.caps[fromServer], sess.capsKnown[fromServer] = caps, true
			sess.capsFrom[fromServer] = fmt.Sprintf("its server/discover result, line %d", it.line)
		}
	}
	if rev == nil || rev.v == nil || !m.ok {
		return
	}
	if m.kind == kindError {
		if rev.errorDef != "" {
			it.jobs = append(it.jobs, job{rev: rev, def: rev.errorDef, value: m.obj, prefix: m.ptr, rule: RuleErrorSchema, what: o.method + " error response"})
		}
		return
	}
	md, ok := rev.spec.Method(o.method)
	if !ok || md.Result == "" {
		return
	}
	if md.TaskResult != "" && (o.task || (md.TaskExtension != "" && result["resultType"] == resultTypeTask)) {
		if md.TaskExtension != "" && !declaresExtension(o.clientCaps, md.TaskExtension) {
			it.finding(RuleTaskExtension, it.session, m.ptr+"/result/resultType",
				fmt.Sprintf("a task answers %s, but the request's clientCapabilities do not declare the %s extension", o.method, md.TaskExtension))
		}
		c.taskCreated(sess, it, o, r, result)
		it.jobs = append(it.jobs, job{rev: rev, def: md.TaskResult, value: m.obj["result"], prefix: m.ptr + "/result", rule: RuleResultSchema, what: o.method + " task result"})
		return
	}
	if o.taskID != "" && c.taskAnswered(sess, it, m, o, rev, result) {
		return
	}
	if rt, _ := result["resultType"].(string); rt == "input_required" {
		c.inputRequests(sess, it, m, o, rev, result)
		if md.Response != "" {
			it.jobs = append(it.jobs, job{rev: rev, def: md.Response, value: m.obj, prefix: m.ptr, rule: RuleResultSchema, what: o.method + " response"})
			return
		}
	}
	it.jobs = append(it.jobs, job{rev: rev, def: md.Result, value: m.obj["result"], prefix: m.ptr + "/result", rule: RuleResultSchema, what: o.method + " result"})
}

// withoutIDRule returns the message to validate an error response by. An
// error without id (or with id null) answers a message whose id could not
// be read: JSON-RPC 2.0 (section 5) requires it, the transports allow it,
// but the schemas up to 2025-06-18 require an id and 2025-11-25 does not
// allow null. Such an error is checked with a stand-in id, so that
// everything else about it still is.
func withoutIDRule(m *message) map[string]any {
	if !m.id.IsZero() {
		return m.obj
	}
	cp := make(map[string]any, len(m.obj)+1)
	for k, v := range m.obj {
		cp[k] = v
	}
	cp["id"] = json.Number("0")
	return cp
}

// inputRequests checks that an input_required result (2026-07-28) asks the
// client only for what the request declared it can do.
func (c *checker) inputRequests(sess *session, it *item, m *message, o *openReq, rev *revision, result map[string]any) {
	reqs, _ := result["inputRequests"].(map[string]any)
	caps, known := o.clientCaps, o.clientCaps != nil
	if !known {
		caps, known = sess.caps[fromClient], sess.capsKnown[fromClient]
	}
	if !known {
		return
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ir, _ := reqs[k].(map[string]any)
		method, _ := ir["method"].(string)
		params, _ := ir["params"].(map[string]any)
		for _, need := range capNeeds[method] {
			if need.sender != fromServer || need.declarer != fromClient || !rev.caps[fromClient][need.path] {
				continue
			}
			if need.when != nil && !need.when(params) {
				continue
			}
			if !declared(caps, need.path) {
				it.finding(RuleCapability, it.session, m.ptr+"/result/inputRequests/"+escape(k)+"/method",
					fmt.Sprintf("the input request %s needs the client capability %s, which the %s request of line %d did not declare", method, need.path, o.method, o.line))
				break
			}
		}
	}
}

// inferSide tells who sent a message of a plain JSON Lines log: responses
// by the request they answer, calls by the method table.
func (c *checker) inferSide(sess *session, m *message) side {
	switch m.kind {
	case kindResult, kindError:
		a, b := sess.open[fromClient][m.id], sess.open[fromServer][m.id]
		switch {
		case a != nil && b != nil:
			if b.line > a.line {
				return fromClient
			}
			return fromServer
		case b != nil:
			return fromClient
		}
		return fromServer
	}
	var dirs [2]bool
	if sess.rev != nil {
		if md, ok := sess.rev.spec.Method(m.method); ok {
			dirs = [2]bool{md.ClientToServer, md.ServerToClient}
		}
	} else {
		dirs = methodDirections()[m.method]
	}
	switch {
	case dirs[fromClient] && !dirs[fromServer]:
		return fromClient
	case dirs[fromServer] && !dirs[fromClient]:
		return fromServer
	}
	switch m.method {
	case methodCancelled:
		if id, err := wire.IDFromValue(m.params["requestId"]); err == nil && sess.open[fromServer][id] != nil && sess.open[fromClient][id] == nil {
			return fromServer
		}
	case methodProgress:
		if tok, err := wire.IDFromValue(m.params["progressToken"]); err == nil && (sess.tokens[fromClient][tok] != nil || sess.tokens[fromServer][tok] == nil) {
			return fromServer
		}
	}
	return fromClient
}

// escape makes a member name a JSON pointer segment.
func escape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			out = append(out, '~', '0')
		case '/':
			out = append(out, '~', '1')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}
