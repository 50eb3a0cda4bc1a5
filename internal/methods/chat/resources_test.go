package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func chatID(t *testing.T, a *App, ctx context.Context, query string) string {
	t.Helper()
	tree := call(t, a, ctx, ToolChat, map[string]any{"query": query})
	if isError(tree) {
		t.Fatalf("chat: %s", peertest.MustJSON(tree))
	}
	return obj(t, tree["structuredContent"])["conversation_id"].(string)
}

func TestListResources(t *testing.T) {
	a, _ := newApp(t, &scripted{deltas: []string{"ok"}}, WithPageSize(2))
	alice := ctxOf(client(t, "s1"), "alice")
	var ids []string
	for i := range 5 {
		ids = append(ids, chatID(t, a, alice, fmt.Sprintf("question %d", i)))
	}
	chatID(t, a, ctxOf(client(t, "s2"), "bob"), "bob's question")

	var got []string
	cur := ""
	for pages := 0; ; pages++ {
		r, err := a.ListResources(alice, &mcp.PaginatedRequestParams{Cursor: cur})
		if err != nil {
			t.Fatal(err)
		}
		tree := everyRevision(t, mcp.MethodListResources, r)
		for _, x := range tree["resources"].([]any) {
			res := obj(t, x)
			id := res["name"].(string)
			got = append(got, id)
			if res["uri"] != "conversation://"+id || res["mimeType"] != "application/json" || res["title"] != fmt.Sprintf("question %d", len(got)-1) ||
				res["description"] == "" {
				t.Errorf("resource %s", peertest.MustJSON(res))
			}
		}
		next, _ := tree["nextCursor"].(string)
		if next == "" {
			if pages != 2 {
				t.Errorf("%d pages, want 3", pages+1)
			}
			break
		}
		cur = next
	}
	if !reflect.DeepEqual(got, ids) {
		t.Errorf("listed %v, want %v", got, ids)
	}
	// 2026-07-28 clients may not share the list: it is the caller's.
	r, _ := a.ListResources(alice, nil)
	if tree := wireResult(t, mcp.MethodListResources, "2026-07-28", r); tree["cacheScope"] != "private" {
		t.Errorf("cacheScope %v", tree["cacheScope"])
	}
	_, err := a.ListResources(alice, &mcp.PaginatedRequestParams{Cursor: "garbage"})
	wireErr(t, err, wire.CodeInvalidParams)

	tr, err := a.ListResourceTemplates(alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	// KNOWN ISSUE (wire, not this package): on the draft-07 revisions
	// (2024-11-05 .. 2025-06-18) the validator asserts "format":
	// "uri-template" with url.Parse, which rejects a variable in the
	// authority, though RFC 6570 allows it: "conversation://{id}" fails
	// there. The template is the docs' conversation://{id}; once wire
	// checks uri-template by RFC 6570 this logs nothing.
	for _, spec := range generated.Specs {
		m, ok := spec.Method(mcp.MethodListResourceTemplates)
		if !ok {
			continue
		}
		tree := peertest.Reparse(t, spec.Project(tr)).(map[string]any)
		serverFill(mcp.MethodListResourceTemplates, spec, tree)
		if err := spec.Validate(m.Result, tree); err != nil {
			if !strings.Contains(err.Error(), "is not valid uri-template") {
				t.Fatalf("%s: %v", spec.Revision, err)
			}
			t.Logf("known issue in %s: %v", spec.Revision, err)
		}
	}
	tt := wireResult(t, mcp.MethodListResourceTemplates, peertest.Rev, tr)
	if got := peertest.MustJSON(tt["resourceTemplates"]); got != `[{"description":"One of your chat conversations as JSON: its title and its turns ({\"messages\": [...]}), with who answered and the token usage.","mimeType":"application/json","name":"conversation","title":"Conversation","uriTemplate":"conversation://{id}"}]` {
		t.Errorf("templates %s", got)
	}
}

func TestReadResource(t *testing.T) {
	ag := &scripted{deltas: []string{"Hi!"}, usage: agent.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}}
	a, s := newApp(t, ag)
	alice := ctxOf(client(t, "s1"), "alice")
	id := chatID(t, a, alice, "Hello")
	r, err := a.ReadResource(alice, &mcp.ReadResourceRequestParams{URI: URI(id)})
	if err != nil {
		t.Fatal(err)
	}
	tree := everyRevision(t, mcp.MethodReadResource, r)
	c := tree["contents"].([]any)
	item := obj(t, c[0])
	if len(c) != 1 || item["uri"] != "conversation://"+id || item["mimeType"] != "application/json" {
		t.Fatalf("contents %s", peertest.MustJSON(c))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(item["text"].(string)), &body); err != nil {
		t.Fatal(err)
	}
	conv, _ := s.Get(context.Background(), "alice", id)
	want := map[string]any{
		"conversation_id": id, "uri": "conversation://" + id, "title": "Hello", "message_count": 2.0,
		"created_at": timestamp(conv.CreatedAt), "updated_at": timestamp(conv.UpdatedAt),
		"messages": []any{
			map[string]any{"seq": 1.0, "role": "user", "content": "Hello", "created_at": timestamp(conv.Messages[0].CreatedAt)},
			map[string]any{"seq": 2.0, "role": "assistant", "content": "Hi!", "created_at": timestamp(conv.Messages[1].CreatedAt),
				"provider": "scripted", "model": "scripted-1",
				"usage": map[string]any{"prompt_tokens": 1.0, "completion_tokens": 2.0, "total_tokens": 3.0}},
		},
	}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("resource text\n%s\nwant\n%s", peertest.MustJSON(body), peertest.MustJSON(want))
	}

	for _, uri := range []string{URI(store.NewID()), "conversation://", "conversation://" + id + "/x", "file:///etc/passwd", id} {
		_, err := a.ReadResource(alice, &mcp.ReadResourceRequestParams{URI: uri})
		we := wireErr(t, err, wire.CodeResourceNotFound)
		if d := we.Data.(map[string]any); d["uri"] != uri {
			t.Errorf("%s: data %v", uri, we.Data)
		}
	}
}

// Subscriptions are per session; updates go to the subscribers, and a new
// conversation changes the list of its user's sessions only.
func TestSubscriptions(t *testing.T) {
	n := &recNotifier{}
	a, _ := newApp(t, &scripted{deltas: []string{"ok"}}, WithNotifier(n))
	s1 := ctxOf(client(t, "s1"), "alice")
	s2 := ctxOf(client(t, "s2"), "alice")
	bob := ctxOf(client(t, "s3"), "bob")
	if _, err := a.ListResources(s2, nil); err != nil { // s2 is known to be alice's
		t.Fatal(err)
	}
	if _, err := a.ListResources(bob, nil); err != nil {
		t.Fatal(err)
	}
	id := chatID(t, a, s1, "first")
	if listed := n.take(); !reflect.DeepEqual(listed, []string{"s1,s2"}) {
		t.Errorf("after create: list_changed %v", listed)
	}
	uri := URI(id)
	for _, ctx := range []context.Context{s1, s2} {
		if _, err := a.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri}); err != nil {
			t.Fatal(err)
		}
	}
	// bob cannot subscribe to alice's conversation, nor to nothing.
	_, err := a.Subscribe(bob, &mcp.SubscribeRequestParams{URI: uri})
	wireErr(t, err, wire.CodeResourceNotFound)
	_, err = a.Subscribe(s1, &mcp.SubscribeRequestParams{URI: URI(store.NewID())})
	wireErr(t, err, wire.CodeResourceNotFound)
	if _, err := a.Unsubscribe(s2, &mcp.UnsubscribeRequestParams{URI: "conversation://never"}); err != nil {
		t.Fatal(err)
	}
	// Continuing is no list change (the subscribers hear of it through the
	// server core: TestThroughServer).
	call(t, a, s1, ToolChat, map[string]any{"query": "more", "conversation_id": id})
	if listed := n.take(); len(listed) != 0 {
		t.Errorf("after append: list_changed %v", listed)
	}
	// A session that ended is forgotten.
	a.EndSession("s1")
	chatID(t, a, s2, "second")
	if listed := n.take(); !reflect.DeepEqual(listed, []string{"s2"}) {
		t.Errorf("list_changed after EndSession: %v", listed)
	}
	chatID(t, a, bob, "bob's")
	if listed := n.take(); !reflect.DeepEqual(listed, []string{"s3"}) {
		t.Errorf("bob's list_changed: %v", listed)
	}
}
