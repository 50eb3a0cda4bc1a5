package validate

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a finding fails a run (error) or is only reported
// (warning; `--fail-on warning` makes warnings fail too).
type Severity string

const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Rule is one check. Its ID is stable: scripts and --rules name it.
type Rule struct {
	ID       string
	Severity Severity
	Summary  string
}

// The rule ids. Each finding carries exactly one.
const (
	RuleRecord            = "record"
	RuleJSON              = "json"
	RuleEnvelope          = "envelope"
	RuleBatch             = "batch"
	RuleRevision          = "revision"
	RuleUnknownMethod     = "unknown-method"
	RuleDirection         = "direction"
	RuleSchema            = "schema"
	RuleResultSchema      = "result-schema"
	RuleErrorSchema       = "error-schema"
	RuleIDReuse           = "id-reuse"
	RuleResponseUnmatched = "response-unmatched"
	RuleUnanswered        = "unanswered"
	RuleInitFirst         = "init-first"
	RuleInitOnce          = "init-once"
	RuleInitializedFirst  = "initialized-first"
	RuleServerEarly       = "server-early"
	RuleAfterShutdown     = "after-shutdown"
	RuleCapability        = "capability"
	RuleProgressToken     = "progress-token"
	RuleProgressOrder     = "progress-order"
	RuleCancelUnknown     = "cancel-unknown"
	RuleCancelLate        = "cancel-late"
	RuleCancelInitialize  = "cancel-initialize"
	RuleTaskStatus        = "task-status"
	RuleTaskRelated       = "task-related"
	RuleTaskExtension     = "task-extension"
	RuleEmpty             = "empty"
	RuleHTTPStatus        = "http-status"
	RuleHTTPHeaders       = "http-headers"
	RuleHTTPErrorStatus   = "http-error-status"
)

// Rules lists every rule, in the order of the checks.
var Rules = []Rule{
	{RuleRecord, Error, "a line of the recording format is not a RecordedMessage (schema/ext/RecordedMessage.json), or its ts is not an RFC 3339 time"},
	{RuleJSON, Error, "a line is not JSON (or is longer than --max-line, or nests deeper than 1000)"},
	{RuleEnvelope, Error, "the JSON-RPC 2.0 envelope: jsonrpc \"2.0\"; an id that is a string or an integer; method, result or error, and not two of them; params an object; error {code, message}; no empty batch"},
	{RuleBatch, Error, "a batch (JSON array) where the revision's schema has no JSONRPCBatchRequest/JSONRPCBatchResponse, initialize inside a batch, or requests and responses mixed in one batch"},
	{RuleRevision, Error, "the revision cannot be told (no initialize, no _meta protocolVersion, no --revision), or it is one this validator does not know: schema checks are skipped"},
	{RuleUnknownMethod, Error, "a method that the revision's method table does not have"},
	{RuleDirection, Error, "a method sent by the side that may not send it (a client-only method sent by the server, or the reverse)"},
	{RuleSchema, Error, "a request or notification fails the schema definition of its method in the revision (a request without id or a notification with one included)"},
	{RuleResultSchema, Error, "a result fails the result definition of the method of the request it answers"},
	{RuleErrorSchema, Error, "an error response fails the revision's error response definition"},
	{RuleIDReuse, Error, "a side reuses a request id within a session"},
	{RuleResponseUnmatched, Error, "a response answers no open request of the other side (never sent, or answered already)"},
	{RuleUnanswered, Warning, "a request still unanswered at the end of the log or at the session's shutdown (cancelled requests and subscriptions/listen excepted)"},
	{RuleInitFirst, Error, "anything before the client's initialize request in a revision with initialize"},
	{RuleInitOnce, Error, "a second initialize (or notifications/initialized) in a session"},
	{RuleInitializedFirst, Error, "a client request other than ping before notifications/initialized, or notifications/initialized before the initialize result"},
	{RuleServerEarly, Warning, "a server request other than ping, or a notification other than logging, before the client's notifications/initialized"},
	{RuleAfterShutdown, Error, "a message after the session's shutdown event"},
	{RuleCapability, Error, "a method used that the other side did not declare the capability for (resources/subscribe without resources.subscribe, sampling/createMessage to a client without sampling, ...)"},
	{RuleProgressToken, Error, "notifications/progress with a token that no open request of the other side carries, or a token already in use"},
	{RuleProgressOrder, Error, "a progress value that does not increase"},
	{RuleCancelUnknown, Error, "notifications/cancelled for a request id that this side never sent"},
	{RuleCancelLate, Warning, "notifications/cancelled for a request that was already answered"},
	{RuleCancelInitialize, Error, "notifications/cancelled for the initialize request"},
	{RuleTaskStatus, Error, "a task (2025-11-25, or the 2026-07-28 tasks extension) reported in another status after it ended (completed, failed, cancelled)"},
	{RuleTaskRelated, Error, "a tasks/result answer without the io.modelcontextprotocol/related-task _meta naming its task (it is checked against the result definition of the request that created the task)"},
	{RuleEmpty, Error, "a log holds no message at all (one of several too): a broken capture must not pass"},
	{RuleTaskExtension, Error, "a task (resultType \"task\") answers a request whose clientCapabilities do not declare the tasks extension (2026-07-28, SEP-2663: MUST NOT)"},
	{RuleHTTPStatus, Error, "Streamable HTTP (recorded by mcpstack proxy): a POST of only notifications or responses answered with a 2xx other than 202 Accepted, or a POST holding requests answered 2xx with a Content-Type other than application/json or text/event-stream"},
	{RuleHTTPHeaders, Error, "Streamable HTTP (recorded by mcpstack proxy): an Mcp-Session-Id that is not visible ASCII, a client's POST without Mcp-Session-Id after the server gave one at initialize, a request after initialize without the negotiated MCP-Protocol-Version header (2025-06-18 on), or (2026-07-28) a request whose Mcp-Method, Mcp-Name or MCP-Protocol-Version header is missing or differs from its body"},
	{RuleHTTPErrorStatus, Warning, "Streamable HTTP (recorded by mcpstack proxy, 2026-07-28 on): a JSON error answer whose HTTP status is not the one the revision gives its code (-32020 and -32022: 400, -32601: 404; schema/transport.json)"},
}

var ruleByID = func() map[string]Rule {
	m := make(map[string]Rule, len(Rules))
	for _, r := range Rules {
		m[r.ID] = r
	}
	return m
}()

// LookupRule returns the rule with id.
func LookupRule(id string) (Rule, bool) {
	r, ok := ruleByID[id]
	return r, ok
}

// RuleSet says which rules are on. The zero RuleSet has every rule on.
type RuleSet struct {
	off map[string]bool
}

// Enabled reports whether the rule with id is on.
func (s RuleSet) Enabled(id string) bool { return !s.off[id] }

// ParseRules reads a --rules value: a comma-separated list of rule ids,
// each optionally prefixed with - (off) or + (on). A list that starts
// with a bare id turns on only the rules listed; one that starts with -,
// + or "all" starts from every rule on.
func ParseRules(spec string) (RuleSet, error) {
	s := RuleSet{off: map[string]bool{}}
	spec = strings.TrimSpace(spec)
	if spec == "" || spec == "all" {
		return s, nil
	}
	for i, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		on := true
		switch item[0] {
		case '-':
			on, item = false, item[1:]
		case '+':
			item = item[1:]
		default:
			if i == 0 && item != "all" {
				for _, r := range Rules {
					s.off[r.ID] = true
				}
			}
		}
		if item == "all" {
			for _, r := range Rules {
				s.off[r.ID] = !on
			}
			continue
		}
		if _, ok := ruleByID[item]; !ok {
			return RuleSet{}, fmt.Errorf("unknown rule %q (mcpstack validate --list-rules lists them)", item)
		}
		s.off[item] = !on
	}
	return s, nil
}

// String lists the rules that are off ("all" when none is).
func (s RuleSet) String() string {
	var off []string
	for id, o := range s.off {
		if o {
			off = append(off, "-"+id)
		}
	}
	if len(off) == 0 {
		return "all"
	}
	sort.Strings(off)
	return "all," + strings.Join(off, ",")
}
