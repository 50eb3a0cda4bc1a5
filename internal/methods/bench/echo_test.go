package bench

import (
	"context"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// onWire projects a result onto rev, sends it through JSON, checks it
// against the method's result schema there, and returns it as JSON. It fills
// what the server fills (protocolVersion, supportedVersions, resultType,
// cacheScope).
func onWire(t testing.TB, method, rev string, r wire.Encoder) map[string]any {
	t.Helper()
	spec := generated.Lookup(rev)
	m, ok := spec.Method(method)
	if !ok {
		t.Fatalf("%s has no %s", rev, method)
	}
	b, err := jsontree.Marshal(spec.Project(r))
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsontree.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	tree := v.(map[string]any)
	switch method {
	case mcp.MethodInitialize:
		tree["protocolVersion"] = rev
	case mcp.MethodDiscover:
		tree["supportedVersions"] = []any{rev}
	}
	if rev >= "2026-07-28" { // what the server fills where the handler left it empty
		if r, _ := tree["resultType"].(string); r == "" {
			tree["resultType"] = "complete"
		}
		if c, ok := tree["cacheScope"].(string); ok && c == "" {
			tree["cacheScope"] = "private"
		}
	}
	if err := spec.Validate(m.Result, tree); err != nil {
		t.Fatalf("%s result invalid in %s: %v\n%s", method, rev, err, b)
	}
	return tree
}

func js(t testing.TB, v any) string {
	t.Helper()
	b, err := jsontree.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCallEcho(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr bool
	}{
		{"text", map[string]any{"text": "hello"}, "hello", false},
		{"empty text", map[string]any{"text": ""}, "", false},
		{"unicode and markup", map[string]any{"text": "<b>héllo</b> & 🌍\n"}, "<b>héllo</b> & 🌍\n", false},
		{"extra arguments are ignored", map[string]any{"text": "x", "other": 1.0}, "x", false},
		{"missing text", nil, `Invalid arguments: at /text: missing property 'text'`, true},
		{"text not a string", map[string]any{"text": 3.0}, `Invalid arguments: at /text: got number, want string`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New().Handler().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: ToolEcho, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			for _, rev := range []string{"2024-11-05", "2025-11-25", "2026-07-28"} {
				tree := onWire(t, mcp.MethodCallTool, rev, r)
				want := map[string]any{"content": []any{map[string]any{"type": "text", "text": tc.want}}}
				if tc.wantErr {
					want["isError"] = true
				}
				if rev >= "2026-07-28" {
					want["resultType"] = "complete"
				}
				if js(t, tree) != js(t, want) {
					t.Errorf("%s: %s, want %s", rev, js(t, tree), js(t, want))
				}
			}
		})
	}
}

func TestUnknownTool(t *testing.T) {
	_, err := New().Handler().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "reverse"})
	if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeInvalidParams || we.Message != `unknown tool "reverse"` {
		t.Fatalf("error %v", err)
	}
}

func TestListTools(t *testing.T) {
	r, err := New().Handler().ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tree := onWire(t, mcp.MethodListTools, "2025-11-25", r)
	tools := tree["tools"].([]any)
	if len(tools) != 1 {
		t.Fatalf("tools %s", js(t, tools))
	}
	tool := tools[0].(map[string]any)
	schema := tool["inputSchema"].(map[string]any)
	want := `{"properties":{"text":{"description":"The text to answer with.","type":"string"}},"required":["text"],"type":"object"}`
	if tool["name"] != ToolEcho || tool["description"] == "" || js(t, schema) != want {
		t.Errorf("tool %s", js(t, tool))
	}
	if _, ok := tree["nextCursor"]; ok {
		t.Error("one page has a next cursor")
	}
}

func TestOtherMethods(t *testing.T) {
	ctx := context.Background()
	e := New()
	init, err := e.Handler().Initialize(ctx, &mcp.InitializeRequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	if got := js(t, onWire(t, mcp.MethodInitialize, "2025-11-25", init)["capabilities"]); got != `{"logging":{},"tools":{"listChanged":true}}` {
		t.Errorf("capabilities %s", got)
	}
	disc, err := e.Handler().Discover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := js(t, onWire(t, mcp.MethodDiscover, "2026-07-28", disc)["capabilities"]); got != `{"logging":{},"tools":{"listChanged":true}}` {
		t.Errorf("discover capabilities %s", got)
	}
	lr, _ := e.Handler().ListResources(ctx, nil)
	lrt, _ := e.Handler().ListResourceTemplates(ctx, nil)
	lp, _ := e.Handler().ListPrompts(ctx, nil)
	empty := []struct {
		method, member string
		r              wire.Encoder
	}{
		{mcp.MethodListResources, "resources", lr},
		{mcp.MethodListResourceTemplates, "resourceTemplates", lrt},
		{mcp.MethodListPrompts, "prompts", lp},
	}
	for _, x := range empty {
		if got := js(t, onWire(t, x.method, "2025-11-25", x.r)); got != `{"`+x.member+`":[]}` {
			t.Errorf("%s: %s", x.method, got)
		}
	}
	_, err = e.Handler().ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: "file:///x"})
	if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeResourceNotFound || js(t, we.Data) != `{"uri":"file:///x"}` {
		t.Errorf("read: %v", err)
	}
	_, err = e.Handler().GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: "p"})
	if we, ok := err.(*wire.Error); !ok || we.Code != wire.CodeInvalidParams {
		t.Errorf("get prompt: %v", err)
	}
	if _, err := e.Handler().Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "p"}}); err == nil {
		t.Error("complete for a prompt that does not exist succeeded")
	}
	if _, err := e.Handler().Subscribe(ctx, &mcp.SubscribeRequestParams{URI: "x"}); err == nil || err.(*wire.Error).Code != wire.CodeResourceNotFound {
		t.Errorf("subscribe to no resource: %v, want -32002", err)
	}
	if ping, err := e.Handler().Ping(ctx, nil); err != nil || js(t, ping.EncodeValue(wire.AllRevisions)) != "{}" {
		t.Errorf("ping: %v", err)
	}
}

var sink *mcp.CallToolRequestParams

// BenchmarkCallEcho measures the handler alone, against the cost of
// building its argument map, the floor of any tools/call.
func BenchmarkCallEcho(b *testing.B) {
	ctx := context.Background()
	e := New()
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = &mcp.CallToolRequestParams{Name: ToolEcho, Arguments: map[string]any{"text": "hello"}}
		}
	})
	b.Run("echo", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink = &mcp.CallToolRequestParams{Name: ToolEcho, Arguments: map[string]any{"text": "hello"}}
			if _, err := e.Handler().CallTool(ctx, sink); err != nil {
				b.Fatal(err)
			}
		}
	})
}
