package validate

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

// side is who sent a message.
type side int8

const (
	fromClient side = 0
	fromServer side = 1
	unknown    side = -1
)

func (s side) other() side { return 1 - s }

func (s side) String() string {
	switch s {
	case fromClient:
		return "client"
	case fromServer:
		return "server"
	}
	return "unknown side"
}

// dirName is the recording format's name of a direction.
func (s side) dirName() string {
	if s == fromServer {
		return "s2c"
	}
	return "c2s"
}

// kind is what a JSON-RPC message is.
type kind int8

const (
	kindInvalid      kind = iota // not a message: only envelope findings
	kindRequest                  // method and id
	kindNotification             // method, no id
	kindResult                   // result
	kindError                    // error
)

// message is one JSON-RPC message of a line (a batch has several).
type message struct {
	ptr    string // pointer of the message in the line's msg ("" or "/3")
	obj    map[string]any
	kind   kind
	ok     bool // the envelope is sound: schema checks apply
	id     wire.ID
	method string
	params map[string]any
}

// item is one line of a log on its way through the pipeline.
type item struct {
	name   string // the file findings name
	line   int
	data   []byte // the line
	format Format
	dir    side // known for recordings and pairs
	// sender is who sent the message being checked (dir, or what the
	// checker inferred), for the findings it gets; senderKnown says
	// whether it is set.
	sender      side
	senderKnown bool
	session     string     // recordings
	event       string     // recordings: "shutdown", "refused"
	answers     []wire.ID  // refused: the requests the HTTP answer answered
	http        *httpFacts // recordings of Streamable HTTP: the exchange of a client's POST
	parsed      bool       // a pair merger parsed the line already (tree is set)
	tree        any        // the message (or batch); for a recording its "msg"
	raw         []byte     // the message's bytes, for excerpts
	batch       bool
	msgs        []message
	skip        bool // nothing to check beyond the findings so far
	tooLong     bool

	findings []Finding
	jobs     []job
}

// job is one schema validation the state machine asks for.
type job struct {
	rev    *revision
	def    string
	value  any
	prefix string // pointer of value in the message
	rule   string
	what   string // "tools/call result", for the reason
}

// findingFrom appends a finding about what side sent, where that is not
// the item's sender (an HTTP status is the server's, though the line is
// the client's POST).
func (it *item) findingFrom(s side, rule, session, pointer, reason string) {
	sender, known := it.sender, it.senderKnown
	it.sender, it.senderKnown = s, true
	it.finding(rule, session, pointer, reason)
	it.sender, it.senderKnown = sender, known
}

// finding appends a finding about the item.
func (it *item) finding(rule, session, pointer, reason string) {
	r := ruleByID[rule]
	f := Finding{
		File: it.name, Line: it.line, Session: session, Rule: rule, Severity: r.Severity,
		Pointer: pointer, Reason: reason,
	}
	switch {
	case it.senderKnown:
		f.Side = it.sender.String()
	case it.dir != unknown:
		f.Side = it.dir.String()
	}
	it.findings = append(it.findings, f)
}

// parseItem is the parallel first stage: the line is read as a record
// (recordings) and as JSON-RPC messages.
func parseItem(it *item, ext *extSchemas) {
	if it.tooLong {
		it.finding(RuleJSON, "", "", "the line is longer than the --max-line limit: skipped")
		it.skip = true
		return
	}
	if !it.parsed {
		switch it.format {
		case FormatRecorded:
			if !parseRecord(it, ext) {
				it.skip = true
				return
			}
		default:
			tree, err := parseJSON(it.data)
			if err != nil {
				it.finding(RuleJSON, "", "", err.Error())
				it.skip = true
				return
			}
			it.tree, it.raw = tree, it.data
		}
	}
	if it.event != "" {
		return
	}
	switch v := it.tree.(type) {
	case []any:
		it.batch = true
		if len(v) == 0 {
			it.finding(RuleEnvelope, it.session, "", "an empty batch: a batch holds at least one message")
			it.skip = true
			return
		}
		it.msgs = make([]message, len(v))
		for i, e := range v {
			it.msgs[i] = envelope(it, e, "/"+strconv.Itoa(i))
		}
	default:
		it.msgs = []message{envelope(it, v, "")}
	}
}

// envelope checks the JSON-RPC 2.0 envelope of one message and says what
// the message is. It mirrors internal/jsonrpc, with pointers.
func envelope(it *item, v any, ptr string) message {
	m := message{ptr: ptr}
	obj, isObj := v.(map[string]any)
	if !isObj {
		it.finding(RuleEnvelope, it.session, ptr, "a message must be an object, got "+jsontree.KindOf(v))
		return m
	}
	m.obj, m.ok = obj, true
	bad := func(member, format string, args ...any) {
		it.finding(RuleEnvelope, it.session, ptr+member, fmt.Sprintf(format, args...))
		m.ok = false
	}
	if jv, has := obj["jsonrpc"]; !has {
		bad("/jsonrpc", `missing "jsonrpc": "2.0"`)
	} else if s, _ := jv.(string); s != "2.0" {
		bad("/jsonrpc", `"jsonrpc" must be "2.0", got %s`, short(jv))
	}
	rawID, hasID := obj["id"]
	if hasID && rawID != nil {
		id, err := wire.IDFromValue(rawID)
		if err != nil {
			bad("/id", "id %v", err)
		} else {
			m.id = id
		}
	}
	if rawMethod, isCall := obj["method"]; isCall {
		method, isStr := rawMethod.(string)
		if !isStr || method == "" {
			bad("/method", `"method" must be a non-empty string`)
			m.kind = kindInvalid
			return m
		}
		m.method = method
		if _, both := obj["result"]; both {
			bad("", `a message has "method" or "result", not both`)
		}
		if _, both := obj["error"]; both {
			bad("", `a message has "method" or "error", not both`)
		}
		if p, has := obj["params"]; has {
			params, isObj := p.(map[string]any)
			if !isObj {
				bad("/params", `"params" must be an object, got %s`, jsontree.KindOf(p))
			}
			m.params = params
		}
		switch {
		case !hasID:
			m.kind = kindNotification
		case rawID == nil:
			bad("/id", `a request id must be a string or an integer, not null`)
			m.kind = kindRequest
		default:
			m.kind = kindRequest
		}
		if m.kind == kindRequest && m.id.IsZero() {
			m.kind = kindInvalid // an id that is no id: nothing to pair it with
		}
		return m
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	switch {
	case hasResult && hasError:
		bad("", `a response has "result" or "error", not both`)
		m.kind = kindInvalid
	case hasResult:
		// The shape of the result is the result-schema rule's to judge,
		// by the method of the request it answers.
		m.kind = kindResult
		if m.id.IsZero() {
			bad("/id", "a result must carry the id of its request")
			m.kind = kindInvalid
		}
	case hasError:
		// The shape of the error is the error-schema rule's to judge.
		m.kind = kindError
	default:
		bad("", `a message needs "method", "result" or "error"`)
		m.kind = kindInvalid
	}
	return m
}

// short renders a value for a reason, shortened.
func short(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(clip.String(x, 40))
	case bool:
		return strconv.FormatBool(x)
	case interface{ String() string }:
		return x.String()
	}
	return jsontree.KindOf(v)
}

// extSchemas are the project's extension schemas (RecordedMessage).
type extSchemas struct {
	v   *protocol.Validator
	err error
}

var loadExt = sync.OnceValue(func() *extSchemas {
	v, err := protocol.NewValidator(schema.FS, schema.Ext)
	return &extSchemas{v: v, err: err}
})

// parseRecord reads a line of the recording format. It reports false when
// nothing of the line can be checked further.
func parseRecord(it *item, ext *extSchemas) bool {
	var spans [8]span
	tree, sp, err := parseJSONSpans(it.data, spans[:0])
	if err != nil {
		it.finding(RuleJSON, "", "", err.Error())
		return false
	}
	rec, isObj := tree.(map[string]any)
	if !isObj {
		it.recordFinding(ext, tree, "", "a record must be an object, got "+jsontree.KindOf(tree))
		return false
	}
	session, _ := rec["session"].(string)
	it.session = session
	// The fast path decides what the schema would; the schema explains
	// a failure (TestRecordFastPath holds the two together).
	if reason, ptr := recordProblem(rec); reason != "" {
		it.recordFinding(ext, rec, ptr, reason)
		if _, isStr := rec["session"].(string); !isStr {
			it.session = ""
		}
		switch d, _ := rec["dir"].(string); d {
		case "c2s", "s2c":
		default:
			return false
		}
		_, hasMsg := rec["msg"]
		_, hasRaw := rec["raw"].(string)
		ev, _ := rec["event"].(string)
		if !hasMsg && !hasRaw && ev != eventShutdown && ev != eventRefused {
			return false
		}
	}
	if ts, isStr := rec["ts"].(string); isStr {
		if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
			it.finding(RuleRecord, it.session, "/ts", fmt.Sprintf("ts %s is not an RFC 3339 date-time", strconv.Quote(clip.String(ts, 40))))
		}
	}
	if rec["dir"] == "s2c" {
		it.dir = fromServer
	} else {
		it.dir = fromClient
	}
	if raw, isStr := rec["raw"].(string); isStr {
		tree, err := parseJSON([]byte(raw))
		if err != nil {
			it.raw = []byte(raw)
			it.finding(RuleJSON, it.session, "/raw", fmt.Sprintf("the %s sent bytes that are not JSON: %v", it.dir, err))
			return false
		}
		it.tree, it.raw = tree, []byte(raw)
		return true
	}
	msg, hasMsg := rec["msg"]
	if !hasMsg {
		it.event, _ = rec["event"].(string)
		if ids, _ := rec["answers"].([]any); it.event == eventRefused {
			for _, v := range ids {
				if id, err := wire.IDFromValue(v); err == nil {
					it.answers = append(it.answers, id)
				}
			}
		}
		return true
	}
	it.tree = msg
	it.raw = it.data
	if h, has := rec["http"]; has {
		it.http = readHTTP(h)
	}
	for _, s := range sp {
		if s.key == "msg" {
			it.raw = it.data[s.start:s.end]
		}
	}
	return true
}

// httpProblem is the fast check of a record's "http" member.
func httpProblem(v any) (string, string) {
	h, isObj := v.(map[string]any)
	if !isObj {
		return `"http" must be an object`, "/http"
	}
	if m, has := h["method"]; has {
		if _, isStr := m.(string); !isStr {
			return `"http.method" must be a string`, "/http/method"
		}
	}
	if v, has := h["sse"]; has {
		if _, isBool := v.(bool); !isBool {
			return `"http.sse" must be a boolean`, "/http/sse"
		}
	}
	if v, has := h["status"]; has {
		if st, err := jsontree.Int(v); err != nil || st < 100 || st > 599 {
			return `"http.status" must be an HTTP status`, "/http/status"
		}
	}
	for _, k := range []string{"request", "response"} {
		hv, has := h[k]
		if !has {
			continue
		}
		headers, isObj := hv.(map[string]any)
		if !isObj {
			return fmt.Sprintf(`"http.%s" must be an object of header values`, k), "/http/" + k
		}
		for name, value := range headers {
			if _, isStr := value.(string); !isStr {
				return fmt.Sprintf(`"http.%s" must be an object of header values`, k), "/http/" + k + "/" + escape(name)
			}
		}
	}
	return "", ""
}

// The events of a recording.
const (
	eventShutdown = "shutdown"
	eventRefused  = "refused"
)

// recordProblem is the fast check of a record: "" when the
// RecordedMessage schema accepts it, otherwise a reason and a pointer.
func recordProblem(rec map[string]any) (string, string) {
	dir, has := rec["dir"]
	if !has {
		return `missing "dir"`, "/dir"
	}
	if d, _ := dir.(string); d != "c2s" && d != "s2c" {
		return `"dir" must be "c2s" or "s2c"`, "/dir"
	}
	if ts, has := rec["ts"]; has {
		if _, isStr := ts.(string); !isStr {
			return `"ts" must be a string`, "/ts"
		}
	}
	if s, has := rec["session"]; has {
		if _, isStr := s.(string); !isStr {
			return `"session" must be a string`, "/session"
		}
	}
	_, hasMsg := rec["msg"]
	_, hasRaw := rec["raw"]
	ev, hasEvent := rec["event"]
	if hasRaw {
		if _, isStr := rec["raw"].(string); !isStr {
			return `"raw" must be a string`, "/raw"
		}
	}
	if hasEvent {
		switch e, _ := ev.(string); e {
		case eventShutdown:
		case eventRefused:
			if v, has := rec["status"]; has {
				if st, err := jsontree.Int(v); err != nil || st < 100 || st > 599 {
					return `"status" must be an HTTP status`, "/status"
				}
			}
			if a, has := rec["answers"]; has {
				ids, isArr := a.([]any)
				if !isArr {
					return `"answers" must be an array of ids`, "/answers"
				}
				for i, v := range ids {
					if _, err := wire.IDFromValue(v); err != nil {
						return `"answers" must be an array of ids`, fmt.Sprintf("/answers/%d", i)
					}
				}
			}
		default:
			return `"event" must be "shutdown" or "refused"`, "/event"
		}
	}
	if h, has := rec["http"]; has {
		if reason, ptr := httpProblem(h); reason != "" {
			return reason, ptr
		}
	}
	n := 0
	for _, b := range []bool{hasMsg, hasRaw, hasEvent} {
		if b {
			n++
		}
	}
	if n != 1 {
		return `a record holds exactly one of "msg", "raw" and "event"`, ""
	}
	return "", ""
}

// recordFinding reports a record that fails RecordedMessage, in the words
// of the schema: the fast check found a problem, the schema explains it.
func (it *item) recordFinding(ext *extSchemas, rec any, ptr, reason string) {
	if ext != nil && ext.err == nil {
		if ve, ok := ext.v.Validate("RecordedMessage", rec).(*wire.ValidationError); ok {
			ptr, reason = ve.Pointer, ve.Reason
		}
	}
	it.finding(RuleRecord, it.session, ptr, reason)
}
