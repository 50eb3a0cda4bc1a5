package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/internal/sse"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// A probe is one message the check sends outside the client, to see what
// the server does with what a client should not send (or sends rarely),
// and what the revision says it must do with it.
type probe struct {
	name string
	body string // what is sent: a JSON message, a batch, or bytes that are not JSON
	// what the revision expects of the answer
	want expect
	// HTTP only: the headers to change (a value of "" removes the header)
	headers map[string]string
}

// expect is what an answer must be: one of the error codes (or, with
// status4xx, an HTTP 4xx status, with or without a body), or, with batch,
// an array of that many responses; spec says where the revision says so.
type expect struct {
	codes     []int
	status4xx bool
	status    int // an exact status the revision gives (its transport facts), 0: any
	batch     int
	any       bool // any answer will do (an HTTP status or a message), but none
	warn      bool // a SHOULD, or what JSON-RPC leaves open: a warning
	spec      string
}

// probes are the probes of a revision: what differs between revisions
// comes from its tables (a batch definition, the transport facts), not
// from its name.
func probes(rev *protocol.Spec, http bool) []probe {
	meta := paramsOf(rev)
	live := liveMethod(rev)
	ps := []probe{
		{name: "unknown method", body: `{"jsonrpc":"2.0","id":"check-unknown","method":"mcpstack/check-unknown"` + meta + `}`,
			want: expect{codes: []int{wire.CodeMethodNotFound}, status: rev.Transport.Status(wire.CodeMethodNotFound),
				status4xx: http && rev.Transport.Status(wire.CodeMethodNotFound) == 0,
				spec:      "JSON-RPC 2.0: a method that does not exist is answered -32601 Method not found; Streamable HTTP: a message the server cannot accept may instead get an HTTP error status such as 400"}},
		{name: "malformed JSON", body: `{"jsonrpc":"2.0","id":"check-malformed","method":"ping"`,
			want: expect{codes: []int{wire.CodeParseError}, status4xx: http, warn: !http,
				spec: "JSON-RPC 2.0: invalid JSON is answered -32700 Parse error (id null); Streamable HTTP: a message the server cannot accept gets an HTTP error status such as 400"}},
		{name: "invalid request", body: `{"jsonrpc":"2.0","id":"check-invalid","method":42}`,
			want: expect{codes: []int{wire.CodeInvalidRequest}, status4xx: http, warn: true,
				spec: "JSON-RPC 2.0: a Request whose method is not a string is not a valid Request object: it is answered -32600 Invalid Request"}},
	}
	batch := `[{"jsonrpc":"2.0","id":"check-batch-1","method":"` + live + `"` + meta + `},{"jsonrpc":"2.0","id":"check-batch-2","method":"` + live + `"` + meta + `}]`
	if rev.Has("JSONRPCBatchRequest") {
		ps = append(ps, probe{name: "batch", body: batch, want: expect{batch: 2,
			spec: "this revision's JSON-RPC messages include batches: implementations MUST support receiving them (basic: Batching)"}})
	} else {
		// An array is none of this revision's messages, and the revision
		// says nothing of what a server does with one: any answer (an
		// error, the answers, an HTTP status) will do; silence is a warning.
		ps = append(ps, probe{name: "batch where the revision has none", body: batch, want: expect{any: true, warn: true,
			spec: "JSON-RPC 2.0: an array is answered, with its responses or -32600 Invalid Request; this revision has no batches, so any answer will do"}})
	}
	if http && rev.Transport.VersionHeader && !rev.Stateless() {
		ps = append(ps, probe{name: "request without MCP-Protocol-Version", body: `{"jsonrpc":"2.0","id":"check-no-version","method":"ping"}`,
			headers: map[string]string{"MCP-Protocol-Version": ""},
			want:    expect{any: true, warn: true, spec: "Streamable HTTP: a server that gets no MCP-Protocol-Version SHOULD assume 2025-03-26, and answers 400 Bad Request if it does not speak it (basic/transports: Protocol Version Header)"}})
		ps = append(ps, probe{name: "unsupported MCP-Protocol-Version", body: `{"jsonrpc":"2.0","id":"check-version","method":"ping"}`,
			headers: map[string]string{"MCP-Protocol-Version": unsupportedRevision},
			want:    expect{status: http400, spec: "Streamable HTTP: a request with an invalid or unsupported MCP-Protocol-Version MUST be answered 400 Bad Request (basic/transports: Protocol Version Header)"}})
	}
	if http && rev.Transport.MethodHeaders {
		ps = append(ps, probe{name: "Mcp-Method that differs from the body", body: `{"jsonrpc":"2.0","id":"check-mismatch","method":"tools/list"` + meta + `}`,
			headers: map[string]string{"Mcp-Method": "prompts/list"},
			want: expect{codes: []int{wire.CodeHeaderMismatch}, status: rev.Transport.Status(wire.CodeHeaderMismatch),
				spec: "Streamable HTTP: a request whose Mcp-Method header differs from its body is answered -32020 with 400 (basic/transports: Standard Headers)"}})
	}
	return ps
}

const http400 = http.StatusBadRequest

// probeSession starts the recording's name of a revision's probe session.
const probeSession = "probe "

// paramsOf is the params member a probe of a revision without sessions
// carries: its version and capabilities in _meta ("" for the others).
func paramsOf(rev *protocol.Spec) string {
	if !rev.Stateless() {
		return ""
	}
	return fmt.Sprintf(`,"params":{"_meta":{%q:%q,%q:{}}}`, wire.MetaProtocolVersion, rev.Revision, wire.MetaClientCapabilities)
}

// initialize is the initialize request a probe session opens with.
func initialize(rev *protocol.Spec) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":"check-init","method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcpstack-check","version":"1"}}}`, rev.Revision)
}

// unsupportedRevision is a revision no server speaks: a date before MCP.
var unsupportedRevision = time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)

// liveMethod is a request every server of the revision answers, to see
// that it still does: ping where the revision has it.
func liveMethod(rev *protocol.Spec) string {
	if _, ok := rev.Method(mcp.MethodPing); ok {
		return mcp.MethodPing
	}
	return mcp.MethodListTools
}

// answer is what came back for a probe: the HTTP status (0 over stdio)
// and the JSON-RPC responses of the body (notifications and the server's
// own requests left out).
type answer struct {
	status     int
	messages   []json.RawMessage
	array      bool   // the body was a JSON array
	none       bool   // nothing came (stdio: within the wait)
	sessionID  string // HTTP: the Mcp-Session-Id the answer gave
	incomplete string // why the check does not have the whole answer (past its bound, broken off)
}

// answerLimit bounds what the check reads of one answer: an HTTP body, an
// event, a stdio line. A server that passes it is told so, not cut short
// in silence.
const answerLimit = 16 << 20

// isResponse reports whether msg is a response (no method member).
func isResponse(msg json.RawMessage) bool {
	var m struct {
		Method *string `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == nil
}

// judge says what is wrong with an answer, "" when nothing.
func (e expect) judge(a answer) string {
	if a.incomplete != "" {
		return a.incomplete
	}
	if e.any {
		switch {
		case a.status >= 500:
			return fmt.Sprintf("HTTP %d", a.status)
		case a.status == 0 && (a.none || len(a.messages) == 0):
			return "no answer"
		}
		return ""
	}
	if e.batch > 0 {
		switch {
		case a.status >= 400:
			return fmt.Sprintf("refused with HTTP %d", a.status)
		case len(a.messages) != e.batch:
			return fmt.Sprintf("answered %d messages, want %d responses", len(a.messages), e.batch)
		}
		return ""
	}
	if e.status != 0 && a.status != 0 && a.status != e.status {
		return fmt.Sprintf("HTTP %d, want %d", a.status, e.status)
	}
	if e.status4xx && a.status >= 400 && a.status < 500 {
		return ""
	}
	if a.status >= 500 {
		return fmt.Sprintf("HTTP %d", a.status)
	}
	if a.none || len(a.messages) == 0 {
		if e.status != 0 && a.status == e.status && len(e.codes) == 0 {
			return ""
		}
		if a.status != 0 {
			return fmt.Sprintf("HTTP %d and no JSON-RPC answer", a.status)
		}
		return "no answer"
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(a.messages[0], &m) != nil {
		return "an answer that is not a JSON-RPC message"
	}
	if m.Error == nil {
		return "answered with a result"
	}
	if len(e.codes) == 0 {
		return ""
	}
	for _, c := range e.codes {
		if m.Error.Code == c {
			return ""
		}
	}
	return fmt.Sprintf("answered error %d, want %v", m.Error.Code, e.codes)
}

// probeHTTP opens a session of its own (initialize, unless the revision
// has none) and sends the revision's probes, then checks the session
// id's life: a request without it, with one the server never gave, and
// after DELETE.
func (c *checker) probeHTTP(ctx context.Context, rev *protocol.Spec) {
	session := probeSession + rev.Revision
	hc := &http.Client{Timeout: c.cfg.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	post := func(body string, headers map[string]string, sid string) (answer, error) {
		if err := c.rec.wait(ctx); err != nil {
			return answer{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.URL, strings.NewReader(body))
		if err != nil {
			return answer{}, err
		}
		for k, vs := range c.cfg.Header {
			req.Header[k] = vs
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if rev.Transport.VersionHeader || rev.Stateless() {
			req.Header.Set("MCP-Protocol-Version", rev.Revision)
		}
		if rev.Transport.MethodHeaders {
			var m struct {
				Method string `json:"method"`
			}
			if json.Unmarshal([]byte(body), &m) == nil && m.Method != "" {
				req.Header.Set("Mcp-Method", m.Method)
			}
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		for k, v := range headers {
			if v == "" {
				req.Header.Del(k)
			} else {
				req.Header.Set(k, v)
			}
		}
		c.rec.message(session, server.ClientToServer, []byte(body))
		resp, err := hc.Do(req)
		if err != nil {
			return answer{}, err
		}
		defer resp.Body.Close()
		a := answer{status: resp.StatusCode, sessionID: resp.Header.Get("Mcp-Session-Id")}
		var all []json.RawMessage
		all, a.array, a.incomplete = readBody(resp, httpfacts.RequestIDs([]byte(body)))
		a.messages = c.recordAnswer(session, all, a.array)
		return a, nil
	}
	sid := ""
	if !rev.Stateless() {
		a, err := post(initialize(rev), nil, "")
		if ctx.Err() != nil {
			return // the check's own time is up: nothing to blame
		}
		if err != nil || a.status != http.StatusOK {
			c.logf("%s: probes skipped: initialize failed (%v, HTTP %d)", session, err, a.status)
			return
		}
		sid = a.sessionID
		_, _ = post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil, sid)
	}
	for _, p := range probes(rev, true) {
		a, err := post(p.body, p.headers, sid)
		if ctx.Err() != nil {
			return // the check's own time is up: nothing to blame
		}
		if err != nil {
			c.findProbe(session, p.name, p.want, "no answer: "+err.Error())
			continue
		}
		if why := p.want.judge(a); why != "" {
			c.findProbe(session, p.name, p.want, why)
		}
	}
	if sid == "" || !rev.Transport.StreamableHTTP {
		return // no sessions kept, or a revision without Streamable HTTP: nothing to probe of their life
	}
	ping := `{"jsonrpc":"2.0","id":"check-session","method":"ping"}`
	if a, err := post(ping, map[string]string{"Mcp-Session-Id": ""}, ""); err == nil && a.status < 400 {
		c.findProbe(session, "request without Mcp-Session-Id", expect{warn: true,
			spec: "Streamable HTTP: a server that gave a session id SHOULD answer a request without it (other than initialize) with 400 Bad Request (basic/transports: Session Management)"},
			fmt.Sprintf("HTTP %d", a.status))
	}
	if a, err := post(ping, nil, "mcpstack-check-unknown-session"); err == nil && a.status != http.StatusNotFound {
		// The specification says 404 for a session that ended; for an id
		// never given it says nothing: a warning.
		c.findProbe(session, "unknown Mcp-Session-Id", expect{warn: true,
			spec: "Streamable HTTP: a request with a session id the server does not know (ended, or never given) is answered 404 Not Found (basic/transports: Session Management)"},
			fmt.Sprintf("HTTP %d, want 404", a.status))
	}
	del, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.cfg.URL, nil)
	if err != nil {
		return
	}
	for k, vs := range c.cfg.Header {
		del.Header[k] = vs
	}
	del.Header.Set("Mcp-Session-Id", sid)
	if rev.Transport.VersionHeader {
		del.Header.Set("MCP-Protocol-Version", rev.Revision)
	}
	resp, err := hc.Do(del)
	if err != nil {
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return // 405: the server does not let clients end sessions
	}
	if a, err := post(ping, nil, sid); err == nil && a.status != http.StatusNotFound {
		c.findProbe(session, "request after DELETE", expect{
			spec: "Streamable HTTP: once a session is ended, the server MUST answer requests with its id with 404 Not Found (basic/transports: Session Management)"},
			fmt.Sprintf("HTTP %d, want 404", a.status))
	}
}

// readBody reads the JSON-RPC messages of an answer: a JSON body (an
// object or an array), or the data of an event stream's events (those
// whole within the bound) until the responses to ids have all come.
// incomplete says why the check has not all of it: the answer passed the
// bound, or broke off.
func readBody(resp *http.Response, ids []wire.ID) (msgs []json.RawMessage, array bool, incomplete string) {
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		msgs, incomplete = readEvents(resp.Body, ids)
		return msgs, false, incomplete
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, answerLimit+1))
	switch {
	case len(body) > answerLimit:
		body = body[:answerLimit]
		incomplete = fmt.Sprintf("an answer of more than %d MiB, more than the check reads", answerLimit>>20)
	case err != nil:
		incomplete = fmt.Sprintf("the answer broke off after %d bytes: %v", len(body), err)
	}
	if incomplete != "" {
		return nil, false, incomplete
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(body, &arr) == nil {
			return arr, true, ""
		}
	}
	if len(body) > 0 && json.Valid(body) {
		return []json.RawMessage{body}, false, ""
	}
	return nil, false, ""
}

// readEvents reads the messages of an event stream, at most answerLimit
// bytes of it, and stops once the responses to ids have all come: the
// server may keep the stream open after them (for other messages), and
// reading on would turn every probe into a timeout. Without ids it reads
// to the end.
func readEvents(body io.Reader, ids []wire.ID) (msgs []json.RawMessage, incomplete string) {
	waiting := make(map[wire.ID]bool, len(ids))
	for _, id := range ids {
		waiting[id] = true
	}
	lr := &io.LimitedReader{R: body, N: answerLimit + 1}
	r := sse.NewReader(lr, answerLimit)
	for {
		ev, err := r.Next()
		switch {
		case err == nil:
		case lr.N <= 0 || errors.Is(err, sse.ErrTooLarge):
			return msgs, fmt.Sprintf("an answer of more than %d MiB, more than the check reads", answerLimit>>20)
		case errors.Is(err, io.EOF):
			return msgs, ""
		default:
			return msgs, fmt.Sprintf("the answer broke off after %d bytes: %v", answerLimit+1-lr.N, err)
		}
		d := bytes.TrimSpace(ev.Data)
		if len(d) == 0 || !json.Valid(d) {
			continue
		}
		msgs = append(msgs, append(json.RawMessage(nil), d...)) // Data is the reader's until Next
		for _, id := range httpfacts.ResponseIDs(d) {
			delete(waiting, id)
		}
		if len(ids) > 0 && len(waiting) == 0 {
			return msgs, ""
		}
	}
}

// recordAnswer records what a probe got (an array as the one message it
// is) and returns its responses, the server's notifications and requests
// left out.
func (c *checker) recordAnswer(session string, msgs []json.RawMessage, array bool) []json.RawMessage {
	if array {
		if b, err := json.Marshal(msgs); err == nil {
			c.rec.message(session, server.ServerToClient, b)
		}
	} else {
		for _, m := range msgs {
			c.rec.message(session, server.ServerToClient, m)
		}
	}
	return slices.DeleteFunc(msgs, func(m json.RawMessage) bool { return !isResponse(m) }) // msgs is not used after
}

// boundSpec is what a check that stopped reading a server holds it to:
// the server did nothing wrong by the protocol, but the check cannot
// judge what it did not read.
const boundSpec = "mcpstack check reads at most 16 MiB of one answer: an answer this large cannot be checked"

// orIncomplete is why, or, when the check does not have the whole answer,
// why not; with the spec it is held to (the check's own bound).
func orIncomplete(a answer, why, spec string) (string, string) {
	if a.incomplete != "" {
		return a.incomplete, boundSpec
	}
	return why, spec
}

// readLines sends r's lines (copies) on lines until r ends or ctx does;
// *tooLong, read once lines is closed, says a line passed answerLimit.
func readLines(ctx context.Context, r io.Reader) (lines <-chan []byte, tooLong *bool) {
	ch := make(chan []byte, 64)
	tooLong = new(bool)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), answerLimit+1) // the line and its newline
		defer func() { *tooLong = errors.Is(sc.Err(), bufio.ErrTooLong) }()
		for sc.Scan() {
			select {
			case ch <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, tooLong
}

// probeStdio starts the server once more and speaks to it line by line:
// a request before initialize (it must be answered, whatever the answer),
// then the revision's probes, then a ping that must still be answered.
func (c *checker) probeStdio(ctx context.Context, rev *protocol.Spec) {
	session := probeSession + rev.Revision
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.cfg.Command[0], c.cfg.Command[1:]...)
	cmd.Stderr = c.cfg.ServerLog
	cmd.WaitDelay = 2 * time.Second // a child that keeps the pipes open does not hold the check
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return
	}
	if err := cmd.Start(); err != nil {
		c.logf("%s: probes skipped: %v", session, err)
		return
	}
	defer func() {
		stdin.Close()
		cancel()
		_ = cmd.Wait()
	}()
	lines, tooLong := readLines(ctx, stdout)
	send := func(line string) bool {
		if c.rec.wait(ctx) != nil {
			return false
		}
		c.rec.message(session, server.ClientToServer, []byte(line))
		_, err := io.WriteString(stdin, line+"\n")
		return err == nil
	}
	// await reads until an answer to id (a parse error's id is null) or
	// the wait ends; gone is true when the server's output ended.
	await := func(ids []string, wait time.Duration) (a answer, gone bool) {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					if ctx.Err() != nil {
						return answer{none: true}, true // the check's own time is up: nothing to blame
					}
					if *tooLong {
						return answer{incomplete: fmt.Sprintf("a line of more than %d MiB, more than the check reads", answerLimit>>20)}, true // no more is read
					}
					return answer{none: true}, true
				}
				line = bytes.TrimSpace(line)
				if len(line) == 0 {
					continue
				}
				c.rec.message(session, server.ServerToClient, line)
				if line[0] == '[' {
					var arr []json.RawMessage
					if json.Unmarshal(line, &arr) == nil {
						return answer{messages: arr, array: true}, false
					}
				}
				var m struct {
					ID     json.RawMessage `json:"id"`
					Method string          `json:"method"`
				}
				if json.Unmarshal(line, &m) != nil || m.Method != "" {
					continue // a notification or the server's own request: not the answer
				}
				got := string(m.ID)
				if got == "" {
					got = "null" // MCP leaves out the id JSON-RPC makes null
				}
				for _, id := range ids {
					if got == id {
						return answer{messages: []json.RawMessage{line}}, false
					}
				}
			case <-timer.C:
				return answer{none: true}, false
			}
		}
	}
	short := min(c.cfg.Timeout, 2*time.Second) // for what a server may leave unanswered
	if !rev.Stateless() {
		if !send(`{"jsonrpc":"2.0","id":"check-early","method":"tools/list"}`) {
			return
		}
		if a, gone := await([]string{`"check-early"`}, c.cfg.Timeout); gone || a.none {
			if ctx.Err() != nil {
				return // the check's time is up, not the server's fault
			}
			what := "no answer"
			if gone {
				what = "the server exited"
			}
			what, spec := orIncomplete(a, what, "JSON-RPC 2.0: every request is answered (the lifecycle leaves the answer to a request before initialize to the server: an error or a result, not silence)")
			c.findProbe(session, "request before initialize", expect{warn: !gone, spec: spec}, what)
			if gone {
				return
			}
		}
		if !send(initialize(rev)) {
			return
		}
		if a, gone := await([]string{`"check-init"`}, c.cfg.Timeout); a.none || gone {
			why, _ := orIncomplete(a, "no answer", "")
			c.logf("%s: probes skipped: initialize: %s", session, why)
			return
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	// ended reports a probe whose server's output ended (the check's own
	// time running out is nobody's fault) and says whether it did.
	ended := func(name string, a answer, gone bool) bool {
		if gone && ctx.Err() == nil {
			why, spec := orIncomplete(a, "the server exited", ruleCrash.Spec)
			c.findProbe(session, name, expect{spec: spec}, why)
		}
		return gone
	}
	for _, p := range probes(rev, false) {
		if !send(p.body) {
			c.findProbe(session, p.name, expect{spec: ruleCrash.Spec}, "the server stopped reading")
			return
		}
		ids := []string{"null"}
		var id struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(p.body), &id) == nil && len(id.ID) > 0 {
			ids = append(ids, string(id.ID))
		}
		wait := c.cfg.Timeout
		if p.want.warn {
			wait = short
		}
		if p.want.batch > 0 {
			ids = append(ids, `"check-batch-1"`, `"check-batch-2"`)
		}
		a, gone := await(ids, wait)
		if ended(p.name, a, gone) {
			return
		}
		if p.want.batch > 0 && !a.array && len(a.messages) == 1 {
			// Answered one by one, in any order: still answered.
			other := `"check-batch-2"`
			if bytes.Contains(a.messages[0], []byte(other)) {
				other = `"check-batch-1"`
			}
			b, gone := await([]string{other}, wait)
			if ended(p.name, b, gone) {
				return
			}
			if !b.none {
				a.messages = append(a.messages, b.messages...)
			}
		}
		if why := p.want.judge(a); why != "" {
			c.findProbe(session, p.name, p.want, why)
		}
	}
	ping := `{"jsonrpc":"2.0","id":"check-after","method":"` + liveMethod(rev) + `"` + paramsOf(rev) + `}`
	if !send(ping) {
		return
	}
	if a, gone := await([]string{`"check-after"`}, c.cfg.Timeout); (gone || a.none) && ctx.Err() == nil {
		why, spec := orIncomplete(a, "no answer: the probes broke the server", ruleCrash.Spec)
		c.findProbe(session, "ping after the probes", expect{spec: spec}, why)
	}
}

// findProbe records a probe's finding: check-protocol, an error or (for
// what the revision only recommends) a warning.
func (c *checker) findProbe(session, name string, e expect, why string) {
	r := ruleProtocol
	if e.warn {
		r.Severity = validate.Warning
	}
	c.findings = append(c.findings, validate.Finding{File: c.file, Line: c.rec.at(session), Session: session, Side: "server", Rule: r.ID, Severity: r.Severity,
		Reason: name + ": " + why + " [spec: " + e.spec + "]"})
}
