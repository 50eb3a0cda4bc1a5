package validate

import "strings"

// capNeed says that a method, sent by one side, needs a capability that
// one side declared: the receiver's for requests (resources/subscribe
// needs the server's resources.subscribe), the sender's own for the
// notifications it emits (notifications/tools/list_changed needs the
// server's tools.listChanged). A need applies only in revisions whose
// ClientCapabilities or ServerCapabilities schema defines the path, so
// completion/complete needs "completions" only where that capability
// exists (from 2025-03-26), and the task paths only in 2025-11-25.
type capNeed struct {
	sender   side
	declarer side
	path     string
	// when, if set, limits the need to requests whose params match.
	when func(params map[string]any) bool
}

func hasParam(member string) func(map[string]any) bool {
	return func(p map[string]any) bool { _, ok := p[member]; return ok }
}

func equals(member, value string) func(map[string]any) bool {
	return func(p map[string]any) bool { s, _ := p[member].(string); return s == value }
}

// capNeeds is the capability table of the lifecycle chapters of the spec
// (server/*.mdx, client/*.mdx, basic/utilities/tasks.mdx).
var capNeeds = map[string][]capNeed{
	"resources/list":           {{fromClient, fromServer, "resources", nil}},
	"resources/templates/list": {{fromClient, fromServer, "resources", nil}},
	"resources/read":           {{fromClient, fromServer, "resources", nil}},
	"resources/subscribe":      {{fromClient, fromServer, "resources.subscribe", nil}},
	"resources/unsubscribe":    {{fromClient, fromServer, "resources.subscribe", nil}},
	"prompts/list":             {{fromClient, fromServer, "prompts", nil}},
	"prompts/get":              {{fromClient, fromServer, "prompts", nil}},
	"tools/list":               {{fromClient, fromServer, "tools", nil}},
	"tools/call":               {{fromClient, fromServer, "tools", nil}, {fromClient, fromServer, "tasks.requests.tools.call", hasParam("task")}},
	"logging/setLevel":         {{fromClient, fromServer, "logging", nil}},
	"completion/complete":      {{fromClient, fromServer, "completions", nil}},
	"tasks/list":               {{fromClient, fromServer, "tasks.list", nil}, {fromServer, fromClient, "tasks.list", nil}},
	"tasks/cancel":             {{fromClient, fromServer, "tasks.cancel", nil}, {fromServer, fromClient, "tasks.cancel", nil}},
	"sampling/createMessage": {
		{fromServer, fromClient, "sampling", nil},
		{fromServer, fromClient, "sampling.tools", hasParam("tools")},
		{fromServer, fromClient, "tasks.requests.sampling.createMessage", hasParam("task")},
	},
	"roots/list": {{fromServer, fromClient, "roots", nil}},
	"elicitation/create": {
		{fromServer, fromClient, "elicitation", nil},
		{fromServer, fromClient, "elicitation.url", equals("mode", "url")},
		{fromServer, fromClient, "tasks.requests.elicitation.create", hasParam("task")},
	},
	"notifications/message":                {{fromServer, fromServer, "logging", nil}},
	"notifications/resources/updated":      {{fromServer, fromServer, "resources.subscribe", nil}},
	"notifications/resources/list_changed": {{fromServer, fromServer, "resources.listChanged", nil}},
	"notifications/tools/list_changed":     {{fromServer, fromServer, "tools.listChanged", nil}},
	"notifications/prompts/list_changed":   {{fromServer, fromServer, "prompts.listChanged", nil}},
	"notifications/roots/list_changed":     {{fromClient, fromClient, "roots.listChanged", nil}},
}

// declared reports whether a capabilities object declares path: every
// member on the way is present, and not false or null.
func declared(caps map[string]any, path string) bool {
	var cur any = caps
	for _, seg := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		v, ok := obj[seg]
		if !ok || v == nil || v == false {
			return false
		}
		cur = v
	}
	return true
}
