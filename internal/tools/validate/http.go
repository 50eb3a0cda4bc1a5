package validate

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// httpFacts is what a recording says of the HTTP exchange that carried a
// client's message (the "http" member mcpstack proxy writes).
type httpFacts struct {
	method            string
	sse               bool // HTTP+SSE: the Streamable HTTP rules do not apply
	status            int
	request, response map[string]string // by canonical header name
}

// readHTTP reads a record's "http" member (the fast path checked its
// shape).
func readHTTP(v any) *httpFacts {
	h, _ := v.(map[string]any)
	if h == nil {
		return nil
	}
	f := &httpFacts{}
	f.method, _ = h["method"].(string)
	f.sse, _ = h["sse"].(bool)
	if st, err := jsontree.Int(h["status"]); err == nil {
		f.status = int(st)
	}
	headers := func(v any) map[string]string {
		m, _ := v.(map[string]any)
		out := make(map[string]string, len(m))
		for k, v := range m {
			s, _ := v.(string)
			out[http.CanonicalHeaderKey(k)] = s
		}
		return out
	}
	f.request, f.response = headers(h["request"]), headers(h["response"])
	return f
}

// The headers the rules read.
var (
	headerSession         = http.CanonicalHeaderKey("Mcp-Session-Id")
	headerProtocolVersion = http.CanonicalHeaderKey("MCP-Protocol-Version")
	headerMethod          = http.CanonicalHeaderKey("Mcp-Method")
	headerName            = http.CanonicalHeaderKey("Mcp-Name")
)

// exchange applies the HTTP rules to a line the client POSTed, once its
// messages were read: the revision's transport facts (schema/transport.json)
// say which apply.
func (c *checker) exchange(sess *session, it *item) {
	h := it.http
	rev := sess.rev
	if rev == nil && !sess.negotiated {
		rev = c.fallback
	}
	if h == nil || h.sse || it.dir != fromClient || h.method != http.MethodPost || rev == nil {
		return
	}
	t := rev.spec.Transport
	if given, has := h.response[headerSession]; has && c.initializes(it) {
		if c.sessionGiven == 0 {
			c.sessionGiven = it.line
		}
		if !httpfacts.VisibleASCII(given) {
			it.findingFrom(fromServer, RuleHTTPHeaders, it.session, "/http/response/"+escape(headerSession), fmt.Sprintf("Mcp-Session-Id %s is not visible ASCII (0x21 to 0x7E)", strconv.Quote(given)))
		}
	}
	requests := false
	for _, m := range it.msgs {
		requests = requests || m.kind == kindRequest
	}
	// The status and its content type are the server's.
	serverSaid := func(pointer, reason string) { it.findingFrom(fromServer, RuleHTTPStatus, it.session, pointer, reason) }
	if t.StreamableHTTP && h.status/100 == 2 {
		ct, _, _ := mime.ParseMediaType(h.response["Content-Type"])
		switch {
		case !requests && h.status != http.StatusAccepted:
			serverSaid("/http/status", fmt.Sprintf("the server answered a POST of notifications or responses with %d: it is 202 Accepted, with no body (or an HTTP error)", h.status))
		case requests && ct != "application/json" && ct != "text/event-stream":
			serverSaid("/http/response", fmt.Sprintf("the server answered a POST holding requests with %d and Content-Type %s: it is application/json or text/event-stream", h.status, strconv.Quote(h.response["Content-Type"])))
		}
	}
	if t.VersionHeader && rev.lifecycle && sess.initAnswered {
		want := rev.name()
		switch got, has := h.request[headerProtocolVersion]; {
		case !has:
			it.finding(RuleHTTPHeaders, it.session, "/http/request", fmt.Sprintf("no MCP-Protocol-Version header: after initialize every HTTP request carries the negotiated revision (%s)", want))
		case got != want:
			it.finding(RuleHTTPHeaders, it.session, "/http/request/"+escape(headerProtocolVersion), fmt.Sprintf("MCP-Protocol-Version header is %s; the session negotiated %s", strconv.Quote(got), want))
		}
	}
	if !t.MethodHeaders {
		return
	}
	for _, m := range it.msgs {
		if m.kind != kindRequest {
			continue
		}
		meta, _ := m.params["_meta"].(map[string]any)
		pv, _ := meta[wire.MetaProtocolVersion].(string)
		mirrors := []struct{ header, body string }{{headerProtocolVersion, pv}, {headerMethod, m.method}}
		if md, _ := rev.spec.Method(m.method); md.NameParam != "" {
			name, _ := m.params[md.NameParam].(string)
			mirrors = append(mirrors, struct{ header, body string }{headerName, name})
		}
		for _, mr := range mirrors {
			got, has := h.request[mr.header]
			switch {
			case !has:
				it.finding(RuleHTTPHeaders, it.session, "/http/request", fmt.Sprintf("%s header is missing; the body says %s", mr.header, strconv.Quote(mr.body)))
			case got != mr.body:
				it.finding(RuleHTTPHeaders, it.session, "/http/request/"+escape(mr.header), fmt.Sprintf("%s header is %s, the body says %s", mr.header, strconv.Quote(got), strconv.Quote(mr.body)))
			}
		}
	}
}

// initializes reports whether a line holds an initialize request.
func (c *checker) initializes(it *item) bool {
	for _, m := range it.msgs {
		if m.kind == kindRequest && m.method == methodInitialize {
			return true
		}
	}
	return false
}

// sessionless reports (and finds) a client's POST that carries no
// Mcp-Session-Id after the server gave one at initialize: the proxy files
// it under no session, where it would only look like a session without
// initialize. A request that names a revision without sessions in its
// _meta (2026-07-28) needs none, nor does initialize.
func (c *checker) sessionless(it *item) bool {
	h := it.http
	if h == nil || h.sse || c.sessionGiven == 0 || it.session != "" || it.dir != fromClient || h.method != http.MethodPost || c.initializes(it) {
		return false
	}
	if _, has := h.request[headerSession]; has {
		return false
	}
	for _, m := range it.msgs {
		meta, _ := m.params["_meta"].(map[string]any)
		if pv, _ := meta[wire.MetaProtocolVersion].(string); pv != "" {
			if r := lookupRevision(pv); r != nil && !r.lifecycle {
				return false
			}
		}
	}
	for _, m := range it.msgs {
		if m.kind == kindRequest {
			if c.lost == nil || len(c.lost) >= maxLost {
				c.lost = map[wire.ID]bool{}
			}
			c.lost[m.id] = true
		}
	}
	it.findingFrom(fromClient, RuleHTTPHeaders, "", "/http/request", fmt.Sprintf("a POST without Mcp-Session-Id, after the server gave one at initialize (line %d): every request of a session carries it", c.sessionGiven))
	return true
}

// maxLost bounds the ids sessionless remembers.
const maxLost = 4096

// sessionlessAnswer reports whether a line is the server's answer, under
// no session, to a request sessionless reported: that request was not
// checked, nor is its answer.
func (c *checker) sessionlessAnswer(it *item) bool {
	if len(c.lost) == 0 || it.session != "" || it.dir != fromServer || len(it.msgs) == 0 {
		return false
	}
	for _, m := range it.msgs {
		if (m.kind != kindResult && m.kind != kindError) || !c.lost[m.id] {
			return false
		}
	}
	for _, m := range it.msgs {
		delete(c.lost, m.id)
	}
	return true
}

// jsonStatus is the HTTP status an answer line records, when it was one
// JSON body (0 for any other: a stream's status says nothing of each
// answer on it).
func jsonStatus(h *httpFacts) int {
	if h == nil || h.sse {
		return 0
	}
	if ct, _, _ := mime.ParseMediaType(h.response["Content-Type"]); ct != "application/json" {
		return 0
	}
	return h.status
}

// errorStatus holds a JSON error answer's HTTP status (recorded on its
// own line) to the one the revision gives its code
// (protocol.Transport.ErrorStatus).
func (c *checker) errorStatus(it *item, m *message, rev *revision) {
	status := jsonStatus(it.http)
	if status == 0 || len(rev.spec.Transport.ErrorStatus) == 0 {
		return
	}
	errObj, _ := m.obj["error"].(map[string]any)
	code, err := jsontree.Int(errObj["code"])
	if err != nil {
		return
	}
	if want := rev.spec.Transport.Status(int(code)); want != 0 && want != status {
		it.finding(RuleHTTPErrorStatus, it.session, m.ptr+"/error/code", fmt.Sprintf("error %d came with HTTP %d; %s gives it %d", code, status, rev.name(), want))
	}
}

// segment names the session of a line recorded under none, over HTTP. A
// server without session ids (the stateless mode of the SDKs) puts every
// client of a recording under no session; one after another, each begins
// with its initialize. So each initialize after one that was sent starts
// a session of its own: the first keeps "", the next are "no-id #n" (a
// space: no Mcp-Session-Id has one). A server's answer goes to the one
// whose request it answers, the newest first. Clients that overlap cannot
// be told apart this way; sequential ones (a CI run, the conformance
// suite) can. Lines of other recordings keep their "".
func (c *checker) segment(it *item) string {
	if it.http != nil && it.dir == fromClient {
		c.segmented = true
	}
	if !c.segmented {
		return ""
	}
	if c.segments == 0 {
		c.segments = 1
	}
	if it.dir == fromClient {
		if c.initializes(it) && c.segmentUsed(segmentName(c.segments)) {
			c.segments++
			// An older one than an answer is looked for in is over: its
			// open requests are reported now, and it is let go, so that
			// a log of initialize after initialize stays bounded.
			if old := c.segments - maxSegmentsBack; old >= 1 {
				c.retire(it, segmentName(old))
			}
		}
		return segmentName(c.segments)
	}
	ids := it.answers
	for _, m := range it.msgs {
		if m.kind == kindResult || m.kind == kindError {
			ids = append(ids, m.id)
		}
	}
	if len(ids) == 0 {
		return segmentName(c.segments)
	}
	for n := c.segments; n >= 1 && n > c.segments-maxSegmentsBack; n-- {
		s := c.sessions[segmentName(n)]
		if s == nil {
			continue
		}
		for _, id := range ids {
			if s.open[fromClient][id] != nil {
				return segmentName(n)
			}
		}
	}
	return segmentName(c.segments)
}

// segmentName is the name of the n-th session of no id.
func segmentName(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("no-id #%d", n)
}

// segmentUsed reports whether a segment has had its initialize, or is
// over (ended by a shutdown, or forgotten): the next initialize begins
// another.
func (c *checker) segmentUsed(name string) bool {
	if s := c.sessions[name]; s != nil {
		return s.initSent
	}
	return c.ended.has(wire.StringID(name)) || c.forgotten[name] != nil
}

// retire ends a segment no answer can reach any more: what it left open
// is found now (as at a shutdown), and its state is let go.
func (c *checker) retire(it *item, name string) {
	s := c.sessions[name]
	if s == nil {
		delete(c.forgotten, name)
		return
	}
	it.findings = append(it.findings, s.earlyFinding()...)
	it.findings = append(it.findings, c.unanswered(s, "the next client's initialize")...)
	c.drop(s)
}

// maxSegmentsBack bounds how far back an answer is looked for.
const maxSegmentsBack = 64
