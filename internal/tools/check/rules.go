package check

import "github.com/mcpstack/mcpstack/internal/tools/validate"

// A rule is what check holds a server to beyond the message schemas
// (those are validate's, applied to the recording of the run). Spec is
// what the specification says, in short, and where: every finding quotes
// it, so that a reader sees what was broken without looking it up.
type rule struct {
	ID       string
	Severity validate.Severity
	Spec     string
}

var (
	rulePagination = rule{"check-pagination", validate.Error,
		"a list ends where a page has no nextCursor, and a cursor is the server's to mean the next page: a cursor given again, an item listed twice or a list that does not end is one a client walks forever (basic/utilities/pagination)"}
	ruleLongList = rule{"check-long-list", validate.Warning,
		"a list ends where a page has no nextCursor (basic/utilities/pagination): this one did not end within --max-pages"}
	ruleList = rule{"check-list", validate.Error,
		"a server that declares a capability serves its list request (server/tools, server/resources, server/prompts: Listing)"}
	ruleRead = rule{"check-read", validate.Error,
		"a server that declares resources serves resources/read (server/resources: Capabilities): it answered -32601 Method not found"}
	rulePrompt = rule{"check-prompt", validate.Error,
		"a server that declares prompts serves prompts/get (server/prompts: Capabilities): it answered -32601 Method not found"}
	ruleComplete = rule{"check-complete", validate.Error,
		"a server that declares completions serves completion/complete (server/utilities/completion: Capabilities): it answered -32601 Method not found"}
	rulePing = rule{"check-ping", validate.Error,
		"the receiver of a ping MUST respond promptly with an empty response (basic/utilities/ping)"}
	ruleSetLevel = rule{"check-set-level", validate.Error,
		"a server that declares logging accepts logging/setLevel with a valid level (server/utilities/logging)"}
	ruleSubscribe = rule{"check-subscribe", validate.Error,
		"a server that declares resources.subscribe serves resources/subscribe and resources/unsubscribe (server/resources: Subscriptions): it answered -32601 Method not found"}
	ruleOutputSchema = rule{"check-output-schema", validate.Error,
		"if an output schema is provided, servers MUST provide structured results that conform to this schema (server/tools: Output Schema)"}
	ruleInvalidAccepted = rule{"check-invalid-accepted", validate.Error,
		"arguments that break the tool's inputSchema are an error: a tool error (isError: true) or -32602 Invalid params, never a success (server/tools: Error Handling; basic: Invalid params -32602)"}
	ruleErrorCode = rule{"check-error-code", validate.Warning,
		"invalid arguments are answered with a tool error (isError: true) or the JSON-RPC error -32602 Invalid params (server/tools: Error Handling)"}
	ruleValidRefused = rule{"check-valid-refused", validate.Warning,
		"arguments that satisfy the tool's inputSchema are the tool's to serve: -32602 says they are not valid (server/tools: Error Handling)"}
	ruleHang = rule{"check-hang", validate.Error,
		"every request gets a response (JSON-RPC 2.0: the Server MUST reply with a Response; basic: Responses): none came within --timeout"}
	ruleCrash = rule{"check-crash", validate.Error,
		"a server keeps serving after any request (basic/lifecycle: Operation): the connection ended while a request was in flight"}
	ruleProtocol = rule{"check-protocol", validate.Error, ""} // each probe says what its revision requires
)

// rules lists check's rules for --list-rules and the documentation.
var rules = []rule{rulePagination, ruleLongList, ruleList, ruleRead, rulePrompt, ruleComplete, rulePing, ruleSetLevel, ruleSubscribe,
	ruleOutputSchema, ruleInvalidAccepted, ruleErrorCode, ruleValidRefused, ruleHang, ruleCrash, ruleProtocol}
