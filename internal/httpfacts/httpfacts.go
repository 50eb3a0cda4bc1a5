// Package httpfacts is what a recording keeps of an MCP HTTP exchange,
// shared by the proxy that records one and the validator that reads a HAR
// file as one: which headers are kept, which session a URL names, which
// requests a body holds.
package httpfacts

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// kept are the headers a recording keeps, by canonical name: what the
// Streamable HTTP rules read, and no more. Never Authorization or cookies,
// nor the Mcp-Param-* headers, which mirror tool arguments.
var kept = map[string]bool{
	"Mcp-Session-Id": true, "Mcp-Protocol-Version": true, "Mcp-Method": true, "Mcp-Name": true,
	"Content-Type": true, "Accept": true, "Last-Event-Id": true,
}

// Kept are the headers of h a recording keeps (see kept).
func Kept(h http.Header) map[string]string {
	out := map[string]string{}
	for name, values := range h {
		name = http.CanonicalHeaderKey(name)
		if len(values) > 0 && kept[name] {
			out[name] = strings.Join(values, ", ")
		}
	}
	return out
}

// QuerySession is the session an HTTP+SSE URL names in its query: the
// SDKs spell the parameter sessionId (TypeScript), sessionid (Go) or
// session_id (Python).
func QuerySession(u *url.URL) string {
	for k, v := range u.Query() {
		if k := strings.ToLower(k); (k == "sessionid" || k == "session_id") && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// RequestIDs are the ids of the requests in a POSTed body (a message or a
// batch).
func RequestIDs(body []byte) []wire.ID { return idsOf(body, true) }

// ResponseIDs are the ids of the responses in an answer (a message, or a
// batch's answer), with an id that is not null.
func ResponseIDs(body []byte) []wire.ID { return idsOf(body, false) }

// idsOf are the ids of body's requests (messages with a method), or of
// its responses.
func idsOf(body []byte, requests bool) []wire.ID {
	tree, err := jsontree.Parse(body)
	if err != nil {
		return nil
	}
	msgs, isBatch := tree.([]any)
	if !isBatch {
		msgs = []any{tree}
	}
	var ids []wire.ID
	for _, m := range msgs {
		obj, _ := m.(map[string]any)
		if _, isCall := obj["method"]; isCall != requests {
			continue
		}
		if raw, has := obj["id"]; has {
			if id, err := wire.IDFromValue(raw); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// VisibleASCII reports whether s holds only visible ASCII (0x21 to 0x7E),
// as an Mcp-Session-Id must.
func VisibleASCII(s string) bool {
	for i := range len(s) {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
