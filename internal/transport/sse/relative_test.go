package sse

import "testing"

func TestRelative(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"/sse", "/messages", "messages"},
		{"/", "/messages", "messages"},
		{"", "/messages", "messages"},
		{"/mcp/sse", "/mcp/messages", "messages"},
		{"/mcp/sse", "/messages", "../messages"},
		{"/mcp/", "/mcp/messages", "messages"},
		{"/a/b/sse", "/a/c/post", "../c/post"},
		{"/sse", "/a/b/messages", "a/b/messages"},
		{"/sse", "/", "./"},
		{"/sse", "/a:b", "./a:b"},
		{"/sse", "messages", "messages"},
		{"/sse", "../up", "../up"},
	} {
		if got := relative(tc.from, tc.to); got != tc.want {
			t.Errorf("relative(%q, %q) = %q, want %q", tc.from, tc.to, got, tc.want)
		}
	}
}
