package validate

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"

	"github.com/mcpstack/mcpstack/wire"
)

// httpFacts is what a recording says of the HTTP exchange that carried a
// client's message (the "http" member mcpstack proxy writes).
type httpFacts struct {
	method            string
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
	if st, err := wire.Int(h["status"]); err == nil {
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
	if h == nil || it.dir != fromClient || h.method != http.MethodPost || rev == nil {
		return
	}
	t := rev.spec.Transport
	requests := false
	for _, m := range it.msgs {
		requests = requests || m.kind == kindRequest
	}
	// The status and its content type are the server's.
	serverSaid := func(pointer, reason string) {
		sender := it.sender
		it.sender = fromServer
		it.finding(RuleHTTPStatus, it.session, pointer, reason)
		it.sender = sender
	}
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
		if param := wire.NameParam(m.method); param != "" {
			name, _ := m.params[param].(string)
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
