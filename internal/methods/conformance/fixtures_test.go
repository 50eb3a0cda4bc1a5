package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

const wantCaps = `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`

// The task fixtures declare tasks where the revision has them: the tasks
// capability in 2025-11-25, the tasks extension in 2026-07-28.
const (
	wantCapsTasks     = `{"completions":{},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tasks":{"cancel":{},"list":{},"requests":{"tools":{"call":{}}}},"tools":{"listChanged":true}}`
	wantCapsExtension = `{"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`
)

func TestInitialize(t *testing.T) {
	f := fast(WithServerInfo("fixtures", "1.2.3"))
	r, err := f.Initialize(newPeer(t).Ctx(), &mcp.InitializeRequestParams{ProtocolVersion: testRev})
	if err != nil {
		t.Fatal(err)
	}
	for _, rev := range revisionsOf(mcp.MethodInitialize) {
		tree := wireResult(t, mcp.MethodInitialize, rev, r)
		want := wantCaps
		switch rev {
		case "2024-11-05": // completions came with 2025-03-26
			want = `{"logging":{},"prompts":{"listChanged":true},"resources":{"listChanged":true,"subscribe":true},"tools":{"listChanged":true}}`
		case "2025-11-25":
			want = wantCapsTasks
		}
		if got := mustJSON(tree["capabilities"]); got != want {
			t.Errorf("%s: capabilities %s, want %s", rev, got, want)
		}
		info := obj(t, tree["serverInfo"])
		if info["name"] != "fixtures" || info["version"] != "1.2.3" {
			t.Errorf("%s: serverInfo %s", rev, mustJSON(info))
		}
		if tree["instructions"] != Instructions {
			t.Errorf("%s: instructions %v", rev, tree["instructions"])
		}
	}
	// The result is the fixtures' own: changing it changes no later answer.
	r.ServerInfo.Name = "changed"
	r.Capabilities.Tools.ListChanged = nil
	r2, _ := f.Initialize(context.Background(), &mcp.InitializeRequestParams{})
	if r2.ServerInfo.Name != "fixtures" || mustJSON(wireResult(t, mcp.MethodInitialize, testRev, r2)["capabilities"]) != wantCapsTasks {
		t.Error("a caller changed the fixtures through a result")
	}
}

func TestDiscover(t *testing.T) {
	f := fast(WithCache("private", 90*time.Second))
	r, err := f.Discover(context.Background(), &mcp.RequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	tree := wireResult(t, mcp.MethodDiscover, "2026-07-28", r)
	if got := mustJSON(tree["capabilities"]); got != wantCapsExtension {
		t.Errorf("capabilities %s, want %s", got, wantCapsExtension)
	}
	info := obj(t, obj(t, tree["_meta"])["io.modelcontextprotocol/serverInfo"])
	if info["name"] != "mcpstack-conformance" || info["version"] != "dev" {
		t.Errorf("serverInfo %s", mustJSON(info))
	}
	if tree["cacheScope"] != "private" || num(t, tree["ttlMs"]) != 90000 || tree["resultType"] != "complete" || tree["instructions"] != Instructions {
		t.Errorf("discover %s", mustJSON(tree))
	}
}

// The 2026-07-28 list and read results carry the cache hints.
func TestCacheHints(t *testing.T) {
	f := fast(WithCache("public", time.Minute))
	ctx := context.Background()
	lt, _ := f.ListTools(ctx, nil)
	lr, _ := f.ListResources(ctx, nil)
	lrt, _ := f.ListResourceTemplates(ctx, nil)
	lp, _ := f.ListPrompts(ctx, nil)
	rr, _ := f.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: URIStaticText})
	results := []struct {
		method string
		r      wire.Encoder
	}{
		{mcp.MethodListTools, lt}, {mcp.MethodListResources, lr}, {mcp.MethodListResourceTemplates, lrt},
		{mcp.MethodListPrompts, lp}, {mcp.MethodReadResource, rr},
	}
	for _, x := range results {
		tree := wireResult(t, x.method, "2026-07-28", x.r)
		if tree["cacheScope"] != "public" || num(t, tree["ttlMs"]) != 60000 {
			t.Errorf("%s: %s", x.method, mustJSON(tree))
		}
		if old := wireResult(t, x.method, "2025-06-18", x.r); old["cacheScope"] != nil || old["ttlMs"] != nil {
			t.Errorf("%s: 2025-06-18 sees cache hints: %s", x.method, mustJSON(old))
		}
	}
}

// The lifecycle methods come from base.Lifecycle.
func TestLifecycle(t *testing.T) {
	f := fast()
	ctx := newPeer(t).Ctx()
	ping, err := f.Ping(ctx, &mcp.RequestParams{})
	if err != nil || mustJSON(wireResult(t, mcp.MethodPing, testRev, ping)) != "{}" {
		t.Errorf("ping: %v", err)
	}
	lvl, err := f.SetLevel(ctx, &mcp.SetLevelRequestParams{Level: mcp.LoggingLevelDebug})
	if err != nil || mustJSON(wireResult(t, mcp.MethodSetLevel, testRev, lvl)) != "{}" {
		t.Errorf("setLevel: %v", err)
	}
	if err := f.OnInitialized(ctx, nil); err != nil {
		t.Error(err)
	}
	_, err = f.GetTask(ctx, &mcp.GetTaskRequestParams{TaskID: "x"})
	wireError(t, err, wire.CodeMethodNotFound)
}
