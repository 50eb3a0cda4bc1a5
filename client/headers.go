package client

import (
	"context"
	"net/http"

	"github.com/mcpstack/mcpstack/internal/paramheader"
	"github.com/mcpstack/mcpstack/mcp"
)

// The arguments a tool marks x-mcp-header travel in Mcp-Param-{Name}
// headers too (2026-07-28, SEP-2243): the session learns the marks from
// tools/list and hands the headers of a tools/call to its transport.

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

// learnHeaders remembers which arguments of which tools go in headers,
// from a page of tools/list (first: asked without a cursor). What a
// listing teaches, from its first page to its last, replaces what the one
// before taught: tools the server no longer lists are forgotten, not kept
// for the session's life. Until its last page, its tools are looked up
// first, then the last whole listing's.
func (s *Session) learnHeaders(first bool, res *mcp.ListToolsResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first || s.relisted == nil {
		s.relisted = map[string]map[string]string{}
	}
	for _, t := range res.Tools {
		var marks map[string]string
		for prop, schema := range t.InputSchema.Properties {
			if name, ok := schema[paramheader.Keyword].(string); ok && paramheader.ValidName(name) {
				if marks == nil {
					marks = map[string]string{}
				}
				marks[prop] = name
			}
		}
		s.relisted[t.Name] = marks // nil too: the tool marks nothing now
	}
	if res.NextCursor == "" { // the listing is whole
		s.listed, s.relisted = s.relisted, nil
	}
}

// callHeaders are the Mcp-Param headers of a tools/call.
func (s *Session) callHeaders(params map[string]any) http.Header {
	name, _ := params["name"].(string)
	args, _ := params["arguments"].(map[string]any)
	s.mu.Lock()
	marks, ok := s.relisted[name]
	if !ok {
		marks = s.listed[name]
	}
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
		h.Set(paramheader.Prefix+header, paramheader.Encode(v))
	}
	return h
}
