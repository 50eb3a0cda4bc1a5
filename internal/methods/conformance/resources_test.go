package conformance

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func read(t *testing.T, f *Fixtures, uri string) map[string]any {
	t.Helper()
	r, err := f.ReadResource(context.Background(), &mcp.ReadResourceRequestParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	for _, rev := range revisionsOf(mcp.MethodReadResource) {
		wireResult(t, mcp.MethodReadResource, rev, r)
	}
	tree := wireResult(t, mcp.MethodReadResource, testRev, r)
	c := tree["contents"].([]any)
	if len(c) != 1 {
		t.Fatalf("%d contents, want 1", len(c))
	}
	return obj(t, c[0])
}

func TestReadResource(t *testing.T) {
	tests := []struct {
		uri, mime string
		check     func(t *testing.T, c map[string]any)
	}{
		{URIStaticText, "text/plain", func(t *testing.T, c map[string]any) {
			if c["text"] != StaticText || c["blob"] != nil {
				t.Errorf("contents %s, want text %q", mustJSON(c), StaticText)
			}
		}},
		{URIStaticBinary, "image/png", func(t *testing.T, c map[string]any) {
			if c["text"] != nil {
				t.Errorf("binary resource has text")
			}
			checkPNG(t, c["blob"].(string))
		}},
		{URIWatched, "text/plain", func(t *testing.T, c map[string]any) {
			if c["text"] != WatchedText {
				t.Errorf("contents %s", mustJSON(c))
			}
		}},
		{"test://template/123/data", "application/json", func(t *testing.T, c map[string]any) {
			var v map[string]any
			if err := json.Unmarshal([]byte(c["text"].(string)), &v); err != nil {
				t.Fatal(err)
			}
			if v["id"] != "123" || v["templateTest"] != true || v["data"] != "Data for ID: 123" {
				t.Errorf("template text %s", c["text"])
			}
		}},
		{"test://template/abc-9/data", "application/json", func(t *testing.T, c map[string]any) {
			if c["text"] != `{"data":"Data for ID: abc-9","id":"abc-9","templateTest":true}` {
				t.Errorf("template text %s", c["text"])
			}
		}},
	}
	f := fast()
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			c := read(t, f, tc.uri)
			if c["uri"] != tc.uri || c["mimeType"] != tc.mime {
				t.Errorf("uri %v mimeType %v, want %s %s", c["uri"], c["mimeType"], tc.uri, tc.mime)
			}
			tc.check(t, c)
		})
	}
}

func TestReadUnknownResource(t *testing.T) {
	for _, uri := range []string{"test://nope", "test://template//data", "test://template/1/2/data", "test://template/1", "test://embedded-resource"} {
		_, err := fast().ReadResource(context.Background(), &mcp.ReadResourceRequestParams{URI: uri})
		we := wireError(t, err, wire.CodeResourceNotFound)
		if d, _ := we.Data.(map[string]any); d["uri"] != uri {
			t.Errorf("%s: data %v, want {uri}", uri, we.Data)
		}
	}
}

func TestListResources(t *testing.T) {
	for _, rev := range revisionsOf(mcp.MethodListResources) {
		r, err := fast().ListResources(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		tree := wireResult(t, mcp.MethodListResources, rev, r)
		var uris []string
		for _, x := range tree["resources"].([]any) {
			res := obj(t, x)
			uris = append(uris, res["uri"].(string))
			if res["name"] == "" || res["description"] == "" || res["mimeType"] == "" {
				t.Errorf("%s: resource %s lacks name, description or mimeType", rev, mustJSON(res))
			}
		}
		if want := []string{URIStaticText, URIStaticBinary, URIWatched}; !slices.Equal(uris, want) {
			t.Errorf("%s: resources %v, want %v", rev, uris, want)
		}
	}
}

func TestListResourceTemplates(t *testing.T) {
	r, err := fast().ListResourceTemplates(context.Background(), &mcp.PaginatedRequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	tree := wireResult(t, mcp.MethodListResourceTemplates, testRev, r)
	tl := tree["resourceTemplates"].([]any)
	if len(tl) != 1 || obj(t, tl[0])["uriTemplate"] != URITemplate || obj(t, tl[0])["mimeType"] != "application/json" {
		t.Errorf("templates %s", mustJSON(tl))
	}
}

func TestResourcePages(t *testing.T) {
	f := fast(WithPageSize(2))
	r1, err := f.ListResources(context.Background(), nil)
	if err != nil || len(r1.Resources) != 2 || r1.NextCursor == "" {
		t.Fatalf("page 1: %v, %d resources, next %q", err, len(r1.Resources), r1.NextCursor)
	}
	r2, err := f.ListResources(context.Background(), &mcp.PaginatedRequestParams{Cursor: r1.NextCursor})
	if err != nil || len(r2.Resources) != 1 || r2.Resources[0].URI != URIWatched || r2.NextCursor != "" {
		t.Fatalf("page 2: %v, %+v, next %q", err, r2, r2.NextCursor)
	}
	_, err = f.ListResourceTemplates(context.Background(), &mcp.PaginatedRequestParams{Cursor: r1.NextCursor})
	wireError(t, err, wire.CodeInvalidParams)
}

func TestSubscriptions(t *testing.T) {
	f := fast()
	a, b := newPeer(t), newPeer(t)
	a.Session, b.Session = "a", "b"
	steps := []struct {
		p        *peertest.Peer
		sub      bool
		uri      string
		wantCode int // 0: success
	}{
		{a, true, URIWatched, 0},
		{b, true, URIWatched, 0},
		{a, true, URIWatched, 0}, // twice is fine
		{a, false, URIWatched, 0},
		{a, false, URIWatched, 0}, // not subscribed: still {}
		{b, true, "test://template/5/data", 0},
		{b, true, "test://missing", wire.CodeResourceNotFound},
		{b, true, "test://template/a/b/data", wire.CodeResourceNotFound},
		{b, false, URIWatched, 0},
	}
	for i, s := range steps {
		var r *mcp.EmptyResult
		var err error
		if s.sub {
			r, err = f.Subscribe(s.p.Ctx(), &mcp.SubscribeRequestParams{URI: s.uri})
		} else {
			r, err = f.Unsubscribe(s.p.Ctx(), &mcp.UnsubscribeRequestParams{URI: s.uri})
		}
		if s.wantCode != 0 {
			wireError(t, err, s.wantCode)
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		} else if tree := wireResult(t, mcp.MethodSubscribe, testRev, r); len(tree) != 0 {
			t.Errorf("step %d: result %s, want {}", i, mustJSON(tree))
		}
	}
}
