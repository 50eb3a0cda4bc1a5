package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// client is one session of a server built on an App, driven with JSON-RPC
// lines as a transport would.
type client struct {
	t     *testing.T
	sess  *core.Session
	out   *outbox
	close func() // closes the client's server
}

type outbox struct {
	mu   sync.Mutex
	msgs []string
}

func (o *outbox) Send(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.msgs = append(o.msgs, string(msg))
	return nil
}

func (o *outbox) take() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := o.msgs
	o.msgs = nil
	return m
}

func connect(t *testing.T, a *app.App, rev string, opts ...server.Option) *client {
	t.Helper()
	srv := app.NewServer(a, append([]server.Option{server.WithStrict(true)}, opts...)...)
	t.Cleanup(srv.Close)
	out := &outbox{}
	sess, err := core.Of(srv).NewSession("", out)
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, sess: sess, out: out, close: srv.Close}
	c.call("initialize", fmt.Sprintf(`{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}`, rev))
	sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	return c
}

// call sends a request and returns its answer as a JSON tree.
func (c *client) call(method, params string) map[string]any {
	c.t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `"`
	if params != "" {
		body += `,"params":` + params
	}
	reply := c.sess.Handle(context.Background(), []byte(body+"}"), c.out)
	var msg map[string]any
	if err := json.Unmarshal(reply, &msg); err != nil {
		c.t.Fatalf("%s: %s: %v", method, reply, err)
	}
	return msg
}

func result(t *testing.T, msg map[string]any) map[string]any {
	t.Helper()
	r, ok := msg["result"].(map[string]any)
	if !ok {
		t.Fatalf("want a result, got %v", msg)
	}
	return r
}

func text(t *testing.T, msg map[string]any) string {
	t.Helper()
	content, _ := result(t, msg)["content"].([]any)
	if len(content) != 1 {
		t.Fatalf("want one content block: %v", msg)
	}
	return content[0].(map[string]any)["text"].(string)
}

type addIn struct {
	A int `json:"a" jsonschema:"description=The first number"`
	B int `json:"b,omitempty" jsonschema:"minimum=0,maximum=100,default=10"`
}

type addOut struct {
	Sum int `json:"sum"`
}

func calculator() *app.App {
	a := app.New("calc", "1.0.0")
	app.AddTool(a, app.Tool{Name: "add", Description: "Adds."}, func(_ context.Context, in addIn) (addOut, error) {
		if in.A == 13 {
			return addOut{}, errors.New("13 is unlucky")
		}
		if in.A == 666 {
			panic("the handler panicked")
		}
		return addOut{Sum: in.A + in.B}, nil
	})
	return a
}

// TestTypedTool: arguments are validated against the schema derived from
// the Go type (a failure is a tool error naming the pointer), defaults
// apply, the output is structured content plus its JSON as text, an
// error is a tool error and a panic -32603, in every session revision.
func TestTypedTool(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			c := connect(t, calculator(), rev)
			for _, tt := range []struct {
				args    string
				text    string // a substring of the text content
				isError bool
			}{
				{`{"a":1,"b":2}`, `{"sum":3}`, false},
				{`{"a":1}`, `{"sum":11}`, false}, // b defaults to 10
				{`{"a":1,"b":101}`, "at /b: maximum", true},
				{`{"a":"one"}`, "at /a: got string, want integer", true},
				{`{"b":1}`, "missing property 'a'", true},
				{`{"a":13}`, "13 is unlucky", true},
			} {
				msg := c.call("tools/call", `{"name":"add","arguments":`+tt.args+`}`)
				r := result(t, msg)
				if got := text(t, msg); !strings.Contains(got, tt.text) || (r["isError"] == true) != tt.isError {
					t.Errorf("add %s: %v, want text with %q and isError %v", tt.args, msg, tt.text, tt.isError)
				}
			}
			if r := result(t, c.call("tools/call", `{"name":"add","arguments":{"a":2,"b":3}}`)); r["structuredContent"] == nil && rev >= "2025-06-18" {
				t.Errorf("no structured content: %v", r)
			}
			if msg := c.call("tools/call", `{"name":"add","arguments":{"a":666}}`); msg["error"].(map[string]any)["code"] != -32603.0 {
				t.Errorf("a panic: %v, want -32603", msg)
			}
			if msg := c.call("tools/call", `{"name":"nope"}`); msg["error"].(map[string]any)["code"] != -32602.0 {
				t.Errorf("an unknown tool: %v, want -32602", msg)
			}
		})
	}
}

// TestDerivedSchemas: tools/list shows the schemas derived from the types.
func TestDerivedSchemas(t *testing.T) {
	c := connect(t, calculator(), "2025-06-18")
	tools := result(t, c.call("tools/list", ""))["tools"].([]any)
	tool := tools[0].(map[string]any)
	in := tool["inputSchema"].(map[string]any)
	b := in["properties"].(map[string]any)["b"].(map[string]any)
	if fmt.Sprint(in["required"]) != "[a]" || b["maximum"] != 100.0 || b["default"] != 10.0 ||
		in["properties"].(map[string]any)["a"].(map[string]any)["description"] != "The first number" {
		t.Errorf("inputSchema %v", in)
	}
	out := tool["outputSchema"].(map[string]any)
	if out["type"] != "object" || fmt.Sprint(out["required"]) != "[sum]" {
		t.Errorf("outputSchema %v", out)
	}
}

// TestOutputChecked: structured output that does not match the output
// schema is a bug of the server: -32603 and a log line, never sent.
func TestOutputChecked(t *testing.T) {
	var logs strings.Builder
	a := app.New("bad", "1")
	a.AddRawTool(app.Tool{Name: "liar", OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}, "required": []any{"n"}}},
		func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: "x"}}, StructuredContent: map[string]any{"n": "not a number"}}, nil
		})
	c := connect(t, a, "2025-06-18", server.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))) // the app logs through its server
	if msg := c.call("tools/call", `{"name":"liar"}`); msg["error"].(map[string]any)["code"] != -32603.0 {
		t.Errorf("invalid output: %v, want -32603", msg)
	}
	if !strings.Contains(logs.String(), "outputSchema") {
		t.Errorf("not logged: %q", logs.String())
	}
}

// TestWireErrorPassesThrough: a *wire.Error from a handler is the call's
// JSON-RPC error (a refused scope, say), not a tool error.
func TestWireErrorPassesThrough(t *testing.T) {
	a := app.New("scoped", "1")
	app.AddTool(a, app.Tool{Name: "admin"}, func(context.Context, struct{}) (string, error) {
		return "", &wire.Error{Code: -32003, Message: "Forbidden"}
	})
	if msg := connect(t, a, "2025-11-25").call("tools/call", `{"name":"admin"}`); msg["error"].(map[string]any)["code"] != -32003.0 {
		t.Errorf("got %v, want -32003", msg)
	}
}

// TestListChanged: a tool added or removed while the app is served sends
// notifications/tools/list_changed; the capability says so.
func TestListChanged(t *testing.T) {
	a := calculator()
	c := connect(t, a, "2025-11-25")
	c.out.take()
	methods := func() []string {
		var got []string
		for _, m := range eventuallyMsgs(c.out, 1) {
			var msg map[string]any
			_ = json.Unmarshal([]byte(m), &msg)
			got = append(got, fmt.Sprint(msg["method"]))
		}
		return got
	}
	app.AddTool(a, app.Tool{Name: "later"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	if got := methods(); fmt.Sprint(got) != "[notifications/tools/list_changed]" {
		t.Errorf("after AddTool: %v", got)
	}
	a.RemoveTools("later")
	if got := methods(); fmt.Sprint(got) != "[notifications/tools/list_changed]" {
		t.Errorf("after RemoveTools: %v", got)
	}
	a.RemoveTools("never-there")
	waitABit()
	if got := c.out.take(); len(got) != 0 {
		t.Errorf("removing nothing sent %v", got)
	}
}

func eventuallyMsgs(o *outbox, n int) []string {
	var all []string
	for range 200 {
		all = append(all, o.take()...)
		if len(all) >= n {
			break
		}
		waitABit()
	}
	return all
}

// TestPagination: lists come a page at a time with opaque cursors.
func TestPagination(t *testing.T) {
	a := app.New("many", "1", app.WithPageSize(2))
	for _, n := range []string{"a", "b", "c"} {
		app.AddTool(a, app.Tool{Name: n}, func(context.Context, struct{}) (string, error) { return n, nil })
	}
	c := connect(t, a, "2025-11-25")
	first := result(t, c.call("tools/list", ""))
	next, _ := first["nextCursor"].(string)
	if len(first["tools"].([]any)) != 2 || next == "" {
		t.Fatalf("first page %v", first)
	}
	second := result(t, c.call("tools/list", `{"cursor":"`+next+`"}`))
	if len(second["tools"].([]any)) != 1 || second["nextCursor"] != nil {
		t.Errorf("second page %v", second)
	}
	if msg := c.call("tools/list", `{"cursor":"bogus"}`); msg["error"] == nil {
		t.Errorf("a bogus cursor: %v", msg)
	}
}

// TestMiddleware: middleware wraps every call in order and may refuse it.
func TestMiddleware(t *testing.T) {
	var seen []string
	trace := func(name string) app.Middleware {
		return func(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
			seen = append(seen, name+">"+call.Method+" "+call.Name)
			return next(ctx)
		}
	}
	deny := func(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
		if call.Name == "secret" {
			return nil, &wire.Error{Code: -32003, Message: "Forbidden"}
		}
		return next(ctx)
	}
	a := app.New("mw", "1", app.WithMiddleware(trace("outer"), trace("inner"), deny))
	for _, n := range []string{"open", "secret"} {
		app.AddTool(a, app.Tool{Name: n}, func(context.Context, struct{}) (string, error) { return n, nil })
	}
	c := connect(t, a, "2025-11-25")
	if got := text(t, c.call("tools/call", `{"name":"open"}`)); got != "open" {
		t.Errorf("open: %q", got)
	}
	if msg := c.call("tools/call", `{"name":"secret"}`); msg["error"].(map[string]any)["code"] != -32003.0 {
		t.Errorf("secret: %v", msg)
	}
	// A refusal comes before anything is said about the arguments.
	if msg := c.call("tools/call", `{"name":"secret","arguments":{"extra":1}}`); msg["error"] == nil {
		t.Errorf("secret with bad arguments: %v, want the middleware's refusal", msg)
	}
	seen = seen[:4]
	if fmt.Sprint(seen) != "[outer>tools/call open inner>tools/call open outer>tools/call secret inner>tools/call secret]" {
		t.Errorf("middleware order %v", seen)
	}
}

// TestCapabilitiesDerived: only what is registered is declared, and the
// same for initialize and server/discover.
func TestCapabilitiesDerived(t *testing.T) {
	a := calculator()
	srv := app.NewServer(a, server.WithStrict(true))
	defer srv.Close()
	reply, _ := core.Of(srv).ServeStateless(context.Background(), core.Of(srv).Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)), nil, nil)
	var msg map[string]any
	_ = json.Unmarshal(reply, &msg)
	got := result(t, msg)["capabilities"].(map[string]any)
	if _, ok := got["tools"]; !ok || got["prompts"] != nil || got["resources"] != nil {
		t.Errorf("discover capabilities %v, want tools only", got)
	}
	init, _ := a.Handler().Initialize(context.Background(), nil)
	if init.Capabilities.Tools == nil || init.Capabilities.Prompts != nil || init.Capabilities.Resources != nil || init.ServerInfo.Name != "calc" {
		t.Errorf("initialize %+v", init)
	}
}

func waitABit() { time.Sleep(5 * time.Millisecond) }

type node struct {
	Name     string `json:"name"`
	Children []node `json:"children"`
}

type hits struct {
	Hits  []string       `json:"hits"`
	Extra map[string]int `json:"extra"`
	Next  *string        `json:"next"`
}

type listed struct {
	Items []string `json:"items"`
}

type withEmbedded struct {
	listed
	Name string `json:"name"`
}

type tagged struct {
	Tags []string `json:"tags"`
	Note *string  `json:"note,omitempty"`
}

type when struct {
	Day string `json:"day" jsonschema:"format=date"`
}

// TestSchemaFromTypes: derived schemas say what encoding/json does (found
// in review): no properties but the fields (a differently cased key is not
// folded onto a field unchecked), nil slices, maps and pointers are null,
// formats are checked, a nil *Out is its zero value, and a recursive type
// is refused at registration with a message.
func TestSchemaFromTypes(t *testing.T) {
	a := calculator()
	app.AddTool(a, app.Tool{Name: "empty"}, func(context.Context, struct{}) (hits, error) { return hits{}, nil })
	app.AddTool(a, app.Tool{Name: "nilout"}, func(context.Context, struct{}) (*addOut, error) { return nil, nil })
	app.AddTool(a, app.Tool{Name: "when"}, func(_ context.Context, in when) (string, error) { return in.Day, nil })
	app.AddTool(a, app.Tool{Name: "tags"}, func(_ context.Context, in tagged) (string, error) {
		return fmt.Sprint(len(in.Tags), in.Note == nil), nil
	})
	app.AddTool(a, app.Tool{Name: "embedded"}, func(context.Context, struct{}) (withEmbedded, error) { return withEmbedded{}, nil })
	c := connect(t, a, "2025-06-18")
	for _, tt := range []struct {
		name, args, text string
		isError          bool
	}{
		{"add", `{"a":1,"B":1000}`, "additional properties 'B' not allowed", true},
		{"empty", `{}`, `"hits":null`, false},
		{"nilout", `{}`, `{"sum":0}`, false},
		{"when", `{"day":"2026-12-01"}`, "2026-12-01", false},
		{"when", `{"day":"tomorrow"}`, "at /day:", true},
		// a required slice is not null (the regression: it derived
		// ["array","null"] and nil reached the handler); an optional
		// pointer may be
		{"tags", `{"tags":null}`, "at /tags:", true},
		{"tags", `{"tags":[],"note":null}`, "0 true", false},
		// a nil slice promoted from an embedded struct is null in the
		// output, as encoding/json writes it, and its schema says so
		{"embedded", `{}`, `"items":null`, false},
	} {
		msg := c.call("tools/call", `{"name":"`+tt.name+`","arguments":`+tt.args+`}`)
		if msg["error"] != nil {
			t.Errorf("%s %s: %v", tt.name, tt.args, msg)
			continue
		}
		if got := text(t, msg); !strings.Contains(got, tt.text) || (result(t, msg)["isError"] == true) != tt.isError {
			t.Errorf("%s %s: %q, want %q (isError %v)", tt.name, tt.args, got, tt.text, tt.isError)
		}
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "recursive") {
			t.Errorf("registering a recursive type: %v, want a panic that says so", r)
		}
	}()
	app.AddTool(a, app.Tool{Name: "tree"}, func(context.Context, struct{}) (node, error) { return node{}, nil })
}

// TestSubscriptions: the server core keeps resources/subscribe per
// session; ResourceUpdated reaches the subscribed sessions only, until they
// unsubscribe; a resource the app does not have is -32002.
func TestSubscriptions(t *testing.T) {
	a := app.New("subs", "1")
	a.AddResourceTemplate(app.ResourceTemplate{URITemplate: "note://{id}"}, func(_ context.Context, uri string, _ map[string]string) (*mcp.ReadResourceResult, error) {
		return app.Text(uri, "text/plain", "x"), nil
	})
	srv := app.NewServer(a, server.WithStrict(true))
	defer srv.Close()
	open := func() (*core.Session, *outbox) {
		out := &outbox{}
		s, _ := core.Of(srv).NewSession("", out)
		s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
		s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		return s, out
	}
	sub, subOut := open()
	_, otherOut := open()
	call := func(s *core.Session, method, uri string) string {
		return string(s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{"uri":"`+uri+`"}}`), nil))
	}
	if got := call(sub, "resources/subscribe", "note://a"); !strings.Contains(got, `"result":{}`) {
		t.Fatalf("subscribe: %s", got)
	}
	if got := call(sub, "resources/subscribe", "other://a"); !strings.Contains(got, "-32002") {
		t.Errorf("subscribe to what the app does not have: %s", got)
	}
	a.ResourceUpdated(context.Background(), "note://a")
	a.ResourceUpdated(context.Background(), "note://b") // nobody subscribed
	if got := eventuallyMsgs(subOut, 1); len(got) != 1 || !strings.Contains(got[0], `"method":"notifications/resources/updated"`) || !strings.Contains(got[0], "note://a") {
		t.Errorf("the subscriber got %v", got)
	}
	call(sub, "resources/unsubscribe", "note://a")
	a.ResourceUpdated(context.Background(), "note://a")
	waitABit()
	if got := append(subOut.take(), otherOut.take()...); len(got) != 0 {
		t.Errorf("after unsubscribe, or to a session that never subscribed: %v", got)
	}
}

// A session's subscriptions are bounded (1,024): the next is refused
// before the handler accepts it, never acknowledged and then forgotten
// (the regression: the 1,025th got a result, and no update ever came).
func TestSubscriptionsAreBounded(t *testing.T) {
	a := app.New("subs", "1")
	a.AddResourceTemplate(app.ResourceTemplate{URITemplate: "note://{id}"}, func(_ context.Context, uri string, _ map[string]string) (*mcp.ReadResourceResult, error) {
		return app.Text(uri, "text/plain", "x"), nil
	})
	srv := app.NewServer(a)
	defer srv.Close()
	out := &outbox{}
	s, _ := core.Of(srv).NewSession("", out)
	s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	s.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	call := func(method string, n int) string {
		return string(s.Handle(context.Background(), []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"uri":"note://%d"}}`, method, n)), nil))
	}
	for n := range 1024 {
		if got := call("resources/subscribe", n); !strings.Contains(got, `"result":{}`) {
			t.Fatalf("subscription %d: %s", n, got)
		}
	}
	if got := call("resources/subscribe", 0); !strings.Contains(got, `"result":{}`) {
		t.Errorf("a subscription the session has, again: %s", got)
	}
	if got := call("resources/subscribe", 1024); !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "1024 resources") {
		t.Errorf("the 1,025th subscription: %s, want -32602 naming the bound", got)
	}
	call("resources/unsubscribe", 0)
	if got := call("resources/subscribe", 1024); !strings.Contains(got, `"result":{}`) {
		t.Errorf("after an unsubscribe: %s", got)
	}
	a.ResourceUpdated(context.Background(), "note://1024")
	if got := eventuallyMsgs(out, 1); len(got) != 1 || !strings.Contains(got[0], "note://1024") {
		t.Errorf("the newest subscription heard %v", got)
	}
}

// TestCacheHint: a list's cache hint reaches 2026-07-28 clients; without
// one the list is private and not to be cached.
func TestCacheHint(t *testing.T) {
	for _, tt := range []struct {
		opts       []app.Option
		scope, ttl string
	}{
		{nil, "private", "0"},
		{[]app.Option{app.WithCacheHint(mcp.MethodListTools, "public", time.Minute)}, "public", "60000"},
	} {
		a := app.New("cached", "1", tt.opts...)
		app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, struct{}) (string, error) { return "", nil })
		srv := app.NewServer(a, server.WithStrict(true))
		reply, _ := core.Of(srv).ServeStateless(context.Background(), core.Of(srv).Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)), nil, nil)
		srv.Close()
		var msg map[string]any
		_ = json.Unmarshal(reply, &msg)
		r := result(t, msg)
		if r["cacheScope"] != tt.scope || fmt.Sprint(r["ttlMs"]) != tt.ttl {
			t.Errorf("%v: cacheScope %v ttlMs %v, want %s %s", tt.opts, r["cacheScope"], r["ttlMs"], tt.scope, tt.ttl)
		}
	}
}

// Defaults apply inside the objects a client gives, not only at the top
// level, and the registered defaults stay as they were.
func TestNestedDefaults(t *testing.T) {
	type options struct {
		Depth int    `json:"depth,omitempty" jsonschema:"default=2"`
		Mode  string `json:"mode,omitempty" jsonschema:"default=fast"`
	}
	type in struct {
		Query   string   `json:"query"`
		Options *options `json:"options,omitempty"`
		Limit   int      `json:"limit,omitempty" jsonschema:"default=10"`
	}
	a := app.New("defaults", "1")
	app.AddTool(a, app.Tool{Name: "search"}, func(_ context.Context, v in) (string, error) {
		if v.Options == nil {
			return fmt.Sprintf("limit=%d options=none", v.Limit), nil
		}
		v.Options.Mode = "changed by the handler"
		return fmt.Sprintf("limit=%d depth=%d", v.Limit, v.Options.Depth), nil
	})
	// Only a nested property has a default here.
	app.AddTool(a, app.Tool{Name: "inner"}, func(_ context.Context, v struct {
		Options *options `json:"options,omitempty"`
	}) (string, error) {
		if v.Options == nil {
			return "options=none", nil
		}
		return fmt.Sprintf("depth=%d", v.Options.Depth), nil
	})
	c := connect(t, a, "2025-11-25")
	if got := text(t, c.call("tools/call", `{"name":"inner","arguments":{"options":{}}}`)); got != "depth=2" {
		t.Errorf("a default only inside an object: %q, want depth=2", got)
	}
	for _, tc := range []struct{ args, want string }{
		{`{"query":"q"}`, "limit=10 options=none"},
		{`{"query":"q","options":{}}`, "limit=10 depth=2"},
		{`{"query":"q","options":{"depth":5},"limit":3}`, "limit=3 depth=5"},
		{`{"query":"q","options":{}}`, "limit=10 depth=2"}, // again: the defaults did not change
	} {
		if got := text(t, c.call("tools/call", `{"name":"search","arguments":`+tc.args+`}`)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// A jsonschema tag the schema library would ignore, or a schema no value
// can satisfy, fails AddTool with a message naming the field (the
// regression: enum=C|F|K derived "enum":["C|F|K"], a tool that refused
// every call; a misspelt key was dropped without a word).
func TestBadSchemaTags(t *testing.T) {
	type unit struct {
		Unit string `json:"unit" jsonschema:"enum=C|F|K"`
	}
	type misspelt struct {
		N int `json:"n" jsonschema:"minimun=1"`
	}
	type misplaced struct {
		N int `json:"n" jsonschema:"minLength=1"`
	}
	type inverted struct {
		N int `json:"n" jsonschema:"minimum=10,maximum=5"`
	}
	type unmatched struct {
		S string `json:"s" jsonschema:"pattern=^a,enum=b,enum=c"`
	}
	type nested struct {
		Inner []misspelt `json:"inner"`
	}
	type exclusive struct {
		N float64 `json:"n" jsonschema:"exclusiveMinimum=5,exclusiveMaximum=5"`
	}
	type Base struct {
		ID string `json:"id" jsonschema:"minimum=3"`
	}
	type embedded struct {
		Base
		Name string `json:"name"`
	}
	type mapped struct {
		ByName map[string]misspelt `json:"by_name"`
	}
	type ignored struct {
		D string `json:"d" jsonschema:"dependencies=x"`
	}
	type okBase struct {
		Tags []string `json:"tags,omitempty"`
	}
	type fineToo struct {
		okBase
		Nick   *string `json:"nick,omitempty" jsonschema:"nullable,minLength=1,description=x"`
		Flag   bool    `json:"flag" jsonschema:"readOnly=false,title="`
		hidden string  `jsonschema:"minimun=1"`
	}
	_ = fineToo{}.hidden
	type fine struct {
		Unit string   `json:"unit" jsonschema:"enum=C,enum=F,enum=K,description=a\\, b"`
		N    int      `json:"n" jsonschema:"minimum=1,maximum=5,default=2"`
		Tags []string `json:"tags" jsonschema:"minItems=1,uniqueItems=true"`
	}
	register := func(f func(a *app.App)) (msg string) {
		defer func() {
			if r := recover(); r != nil {
				msg = fmt.Sprint(r)
			}
		}()
		f(app.New("tags", "1"))
		return ""
	}
	for _, tt := range []struct {
		name string
		add  func(a *app.App)
		want string // "" for none
	}{
		{"enum with bars", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, unit) (string, error) { return "", nil })
		}, "field Unit (/properties/unit): jsonschema tag \"enum=C|F|K\": enum=C|F|K is one value; give each its own: enum=C,enum=F,enum=K"},
		{"misspelt key", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, misspelt) (string, error) { return "", nil })
		}, `"minimun" is not a keyword`},
		{"key of another type", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, misplaced) (string, error) { return "", nil })
		}, "minLength does not apply to a field of this type"},
		{"bounds inverted", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, inverted) (string, error) { return "", nil })
		}, "field N (/properties/n): no value can satisfy its schema: minimum 10 and maximum 5 leave no value"},
		{"enum against pattern", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, unmatched) (string, error) { return "", nil })
		}, "field S (/properties/s): no value can satisfy its schema: enum value b"},
		{"nested", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, nested) (string, error) { return "", nil })
		}, "field N (/properties/inner/items/properties/n)"},
		{"prompt arguments", func(a *app.App) {
			app.AddPrompt(a, app.Prompt{Name: "p"}, func(context.Context, unit) (*mcp.GetPromptResult, error) { return nil, nil })
		}, "enum=C|F|K is one value"},
		{"exclusive bounds equal", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, exclusive) (string, error) { return "", nil })
		}, "exclusiveMinimum 5 and exclusiveMaximum 5 leave no value"},
		{"embedded struct's field", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, embedded) (string, error) { return "", nil })
		}, "field ID (/properties/id): jsonschema tag \"minimum=3\": minimum does not apply"},
		{"map values", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, mapped) (string, error) { return "", nil })
		}, "field N (/properties/by_name/additionalProperties/properties/n)"},
		{"a key the library ignores", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, ignored) (string, error) { return "", nil })
		}, `"dependencies" is not a keyword`},
		{"nullable, false and empty values, unexported fields, embedded output", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, fineToo) (fineToo, error) { return fineToo{}, nil })
		}, ""},
		{"good tags", func(a *app.App) {
			app.AddTool(a, app.Tool{Name: "t"}, func(context.Context, fine) (string, error) { return "", nil })
		}, ""},
	} {
		got := register(tt.add)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: AddTool panicked with %q, want %q", tt.name, got, tt.want)
		}
	}
}

// A tool that panics under middleware: every middleware sees the -32603
// its next returns, and goes on after it (here: records it), and the
// client gets -32603 too.
func TestPanicUnderMiddleware(t *testing.T) {
	var seen []any
	record := func(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
		res, err := next(ctx)
		var we *wire.Error
		if errors.As(err, &we) {
			seen = append(seen, we.Code)
		} else {
			seen = append(seen, err)
		}
		return res, err
	}
	a := app.New("calc", "1.0.0", app.WithMiddleware(record, record))
	app.AddTool(a, app.Tool{Name: "boom"}, func(context.Context, struct{}) (string, error) { panic("boom") })
	c := connect(t, a, "2025-11-25")
	if msg := c.call("tools/call", `{"name":"boom","arguments":{}}`); msg["error"].(map[string]any)["code"] != -32603.0 {
		t.Errorf("a panic under middleware: %v, want -32603", msg)
	}
	if fmt.Sprint(seen) != "[-32603 -32603]" {
		t.Errorf("what the middleware saw: %v, want -32603 twice", seen)
	}
}

// TestServedTwice: an app served by two servers sends list_changed to the
// sessions of both; once one closes, the other's go on hearing.
func TestServedTwice(t *testing.T) {
	a := calculator()
	one, two := connect(t, a, "2025-11-25"), connect(t, a, "2025-11-25")
	one.out.take()
	two.out.take()
	app.AddTool(a, app.Tool{Name: "first"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	for name, c := range map[string]*client{"one": one, "two": two} {
		if got := eventuallyMsgs(c.out, 1); len(got) != 1 || !strings.Contains(got[0], "notifications/tools/list_changed") {
			t.Errorf("server %s: %v, want one list_changed", name, got)
		}
	}
	one.close()
	app.AddTool(a, app.Tool{Name: "second"}, func(context.Context, struct{}) (string, error) { return "ok", nil })
	if got := eventuallyMsgs(two.out, 1); len(got) != 1 || !strings.Contains(got[0], "notifications/tools/list_changed") {
		t.Errorf("after the other server closed: %v, want one list_changed", got)
	}
}

// A cache hint the protocol cannot carry is a bug of the program: New
// panics, naming it, instead of sending an invalid result.
func TestCacheHintRefused(t *testing.T) {
	for _, opt := range []app.Option{
		app.WithCacheHint(mcp.MethodListTools, "Public", time.Minute),
		app.WithCacheHint(mcp.MethodListTools, "private", -time.Second),
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "WithCacheHint") {
					t.Errorf("recovered %v, want a panic naming WithCacheHint", r)
				}
			}()
			app.New("bad", "1", opt)
		}()
	}
}

// A prompt's handler gets its declared arguments by their exact names:
// an undeclared one whose name folds to a field's (encoding/json matches
// names ignoring case, and folds ſ to s) no longer overwrites a required
// argument that was checked.
func TestPromptArgumentsByExactName(t *testing.T) {
	type args struct {
		ConversationID string `json:"conversation_id"`
	}
	a := app.New("p", "1")
	var got string
	app.AddPrompt(a, app.Prompt{Name: "resume"}, func(_ context.Context, in args) (*mcp.GetPromptResult, error) {
		got = in.ConversationID
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{}}, nil
	})
	for _, given := range []map[string]string{
		{"conversation_id": "ok", "converſation_id": ""},
		{"conversation_id": "ok", "Conversation_ID": "other"},
	} {
		got = ""
		if _, err := a.Handler().GetPrompt(context.Background(), &mcp.GetPromptRequestParams{Name: "resume", Arguments: given}); err != nil {
			t.Fatal(err)
		}
		if got != "ok" {
			t.Errorf("arguments %q: the handler got %q, want ok", given, got)
		}
	}
}

// A json.RawMessage member takes any JSON value, in and out, as
// encoding/json writes it: its schema said string, so an object was
// refused on the way in and failed the output schema on the way out.
func TestRawMessageTakesAnyValue(t *testing.T) {
	type rawIO struct {
		Data json.RawMessage `json:"data"`
	}
	a := app.New("raw", "1")
	app.AddTool(a, app.Tool{Name: "echo"}, func(_ context.Context, in rawIO) (rawIO, error) { return in, nil })
	for _, data := range []string{`{"a":1}`, `[1,"x"]`, `"text"`, `3.5`} {
		res, err := a.Handler().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "echo", Arguments: map[string]any{"data": jsonValue(t, data)}})
		if err != nil || res.IsError != nil && *res.IsError {
			t.Errorf("data %s: %v %+v", data, err, res)
		}
	}
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}
