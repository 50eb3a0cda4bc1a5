package client

import (
	"fmt"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
)

// The session remembers the Mcp-Param marks of the tools the server lists
// now, not of every tool it ever listed: a server that lists fresh tools
// each time cannot grow the map for the session's life. While a listing
// is under way, the last whole one still answers for the tools it has
// not reached.
func TestParamMarksFollowTheListing(t *testing.T) {
	tool := func(name string) *mcp.Tool {
		return &mcp.Tool{Name: name, InputSchema: mcp.ToolInputSchema{Properties: map[string]map[string]any{
			"region": {"type": "string", "x-mcp-header": "Region"},
		}}}
	}
	page := func(next string, names ...string) *mcp.ListToolsResult {
		r := &mcp.ListToolsResult{NextCursor: next}
		for _, n := range names {
			r.Tools = append(r.Tools, tool(n))
		}
		return r
	}
	marked := func(s *Session, name string) bool {
		return s.callHeaders(map[string]any{"name": name, "arguments": map[string]any{"region": "eu"}}) != nil
	}
	s := &Session{}
	s.learnHeaders(true, page("", "a", "b"))
	if !marked(s, "a") || !marked(s, "b") {
		t.Fatal("the marks of a listing are not used")
	}
	s.learnHeaders(true, page("2", "c")) // a listing of two pages, under way
	if !marked(s, "c") || !marked(s, "a") {
		t.Error("under way, a listing's tools and the last whole one's both count")
	}
	s.learnHeaders(false, page("", "d"))
	if marked(s, "a") || !marked(s, "c") || !marked(s, "d") {
		t.Error("a whole listing does not replace the one before")
	}
	for i := range 10_000 {
		s.learnHeaders(true, page("", fmt.Sprint("fresh", i)))
	}
	if n := len(s.listed) + len(s.relisted); n != 1 {
		t.Errorf("after 10,000 listings of one fresh tool each, %d tools remembered, want 1", n)
	}
}
