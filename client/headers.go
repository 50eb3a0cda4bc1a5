package client

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
)

// The arguments a tool marks x-mcp-header travel in Mcp-Param-{Name}
// headers too (2026-07-28, SEP-2243): the session learns the marks from
// tools/list and hands the headers of a tools/call to its transport.

const headerKeyword = "x-mcp-header"

type headersKey struct{}

// withParamHeaders returns a context carrying the headers of a call.
func withParamHeaders(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return context.WithValue(ctx, headersKey{}, h)
}

// paramHeadersFrom are the headers a call asks its transport to send.
func paramHeadersFrom(ctx context.Context) http.Header {
	h, _ := ctx.Value(headersKey{}).(http.Header)
	return h
}

// learnHeaders remembers which arguments of which tools go in headers.
func (s *Session) learnHeaders(res *mcp.ListToolsResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.marks == nil {
		s.marks = map[string]map[string]string{}
	}
	for _, t := range res.Tools {
		var marks map[string]string
		for prop, schema := range t.InputSchema.Properties {
			if name, ok := schema[headerKeyword].(string); ok && validHeaderName(name) {
				if marks == nil {
					marks = map[string]string{}
				}
				marks[prop] = name
			}
		}
		if marks == nil {
			delete(s.marks, t.Name)
		} else {
			s.marks[t.Name] = marks
		}
	}
}

// callHeaders are the Mcp-Param headers of a tools/call.
func (s *Session) callHeaders(params map[string]any) http.Header {
	name, _ := params["name"].(string)
	args, _ := params["arguments"].(map[string]any)
	s.mu.Lock()
	marks := s.marks[name]
	s.mu.Unlock()
	var h http.Header
	for prop, header := range marks {
		v, ok := args[prop]
		if !ok {
			continue
		}
		if h == nil {
			h = http.Header{}
		}
		h.Set("Mcp-Param-"+header, headerValue(v))
	}
	return h
}

// headerValue encodes an argument for its header: as it is where that is
// safe in a header, else =?base64?...?=.
func headerValue(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case bool:
		s = strconv.FormatBool(x)
	case float64:
		s = strconv.FormatFloat(x, 'f', -1, 64)
	default:
		s = fmt.Sprint(v) // json.Number and the like
	}
	safe := s == strings.TrimSpace(s) && !strings.HasPrefix(s, "=?base64?")
	for i := 0; safe && i < len(s); i++ {
		safe = s[i] >= 0x20 && s[i] < 0x7f
	}
	if safe {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// validHeaderName: only a token goes into a header name (a server's
// annotation is not trusted to be one).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
