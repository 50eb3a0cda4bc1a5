package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// One user cannot read, continue, find, list, subscribe to, summarize or
// complete another's conversation, through any method, and cannot tell it
// from one that does not exist.
func TestIsolation(t *testing.T) {
	ag := &scripted{deltas: []string{"alice's secret answer"}}
	n := &recNotifier{}
	a, s := newApp(t, ag, WithNotifier(n))
	alice := ctxOf(client(t, "s-alice"), "alice")
	bobPeer := client(t, "s-bob")
	bob := ctxOf(bobPeer, "bob")
	id := chatID(t, a, alice, "alice's secret question")
	missing := store.NewID()
	n.take()

	// Tools: the same answer as for a conversation that does not exist.
	for _, tc := range []struct {
		tool string
		args func(id string) map[string]any
	}{
		{ToolGet, func(id string) map[string]any { return map[string]any{"conversation_id": id} }},
		{ToolChat, func(id string) map[string]any { return map[string]any{"query": "tell me", "conversation_id": id} }},
	} {
		theirs := call(t, a, bob, tc.tool, tc.args(id))
		none := call(t, a, bob, tc.tool, tc.args(missing))
		if !isError(theirs) || onlyText(t, theirs) != strings.ReplaceAll(onlyText(t, none), missing, id) {
			t.Errorf("%s on alice's conversation: %s; on a missing one: %s", tc.tool, peertest.MustJSON(theirs), peertest.MustJSON(none))
		}
	}
	if len(ag.requests()) != 1 {
		t.Errorf("bob's chat reached the model with alice's conversation")
	}
	res := obj(t, call(t, a, bob, ToolSearch, map[string]any{"query": "secret"})["structuredContent"])["results"].([]any)
	if len(res) != 0 {
		t.Errorf("bob finds %s", peertest.MustJSON(res))
	}

	// Resources.
	lr, err := a.ListResources(bob, nil)
	if err != nil || len(lr.Resources) != 0 {
		t.Errorf("bob lists %v, %v", lr, err)
	}
	for _, uri := range []string{URI(id), URI(missing)} {
		_, err := a.ReadResource(bob, &mcp.ReadResourceRequestParams{URI: uri})
		wireErr(t, err, wire.CodeResourceNotFound)
		_, err = a.Subscribe(bob, &mcp.SubscribeRequestParams{URI: uri})
		wireErr(t, err, wire.CodeResourceNotFound)
	}

	// Prompts: the same error as for a missing conversation.
	_, errTheirs := a.GetPrompt(bob, &mcp.GetPromptRequestParams{Name: PromptSummarize, Arguments: map[string]string{"conversation_id": id}})
	_, errNone := a.GetPrompt(bob, &mcp.GetPromptRequestParams{Name: PromptSummarize, Arguments: map[string]string{"conversation_id": missing}})
	wt, wn := wireErr(t, errTheirs, wire.CodeInvalidParams), wireErr(t, errNone, wire.CodeInvalidParams)
	if strings.ReplaceAll(wn.Message, missing, id) != wt.Message || peertest.MustJSON(wt.Data) != peertest.MustJSON(wn.Data) {
		t.Errorf("summarize: %v / %v", wt, wn)
	}

	// Completion.
	for _, ref := range []mcp.CompleteRequestParamsRef{&mcp.PromptReference{Name: PromptSummarize}, &mcp.ResourceTemplateReference{URI: URITemplate}} {
		name := "conversation_id"
		if _, ok := ref.(*mcp.ResourceTemplateReference); ok {
			name = "id"
		}
		for _, prefix := range []string{"", "conv_", id[:8], id} {
			r, err := a.Complete(bob, &mcp.CompleteRequestParams{Ref: ref, Argument: mcp.CompleteRequestParamsArgument{Name: name, Value: prefix}})
			if err != nil || len(r.Completion.Values) != 0 {
				t.Errorf("bob completes %q: %v, %v", prefix, r, err)
			}
		}
	}

	// Nothing bob did reached alice's conversation or her sessions.
	c, err := s.Get(context.Background(), "alice", id)
	if err != nil || c.MessageCount != 2 {
		t.Errorf("alice's conversation after bob: %+v, %v", c, err)
	}
	if _, err := a.Subscribe(alice, &mcp.SubscribeRequestParams{URI: URI(id)}); err != nil {
		t.Fatal(err)
	}
	chatID(t, a, bob, "bob's own")
	if listed := n.take(); len(listed) != 1 || listed[0] != "s-bob" {
		t.Errorf("bob's chat notified: list_changed %v", listed)
	}
}

// Without an identity the caller is LocalUser; with WithAnonymousUser("")
// such calls are refused.
func TestAnonymous(t *testing.T) {
	s := openStore(t, t.TempDir())
	local := New(s, agent.Echo{}) // no WithUser: everyone is "local"
	p := client(t, "s1")
	id := chatID(t, local, p.Ctx(), "hi")
	if c, err := s.Get(context.Background(), LocalUser, id); err != nil || c.User != "local" {
		t.Fatalf("stored as %+v, %v", c, err)
	}
	// A hook that finds no identity also means "local".
	hooked := New(s, agent.Echo{}, WithUser(func(context.Context) (string, bool) { return "", false }))
	if tree := call(t, hooked, p.Ctx(), ToolGet, map[string]any{"conversation_id": id}); isError(tree) {
		t.Errorf("local user cannot read: %s", peertest.MustJSON(tree))
	}

	strict := New(s, agent.Echo{}, WithUser(userFromCtx), WithAnonymousUser(""))
	ctx := p.Ctx()
	errs := map[string]error{}
	_, errs["tools/call"] = strict.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolGet, Arguments: map[string]any{"conversation_id": id}})
	_, errs["resources/list"] = strict.ListResources(ctx, nil)
	_, errs["resources/read"] = strict.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: URI(id)})
	_, errs["resources/subscribe"] = strict.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: URI(id)})
	_, errs["resources/unsubscribe"] = strict.Unsubscribe(ctx, &mcp.UnsubscribeRequestParams{URI: URI(id)})
	_, errs["prompts/get"] = strict.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: PromptDebugError, Arguments: map[string]string{"error": "x"}})
	_, errs["completion/complete"] = strict.Complete(ctx, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: PromptSummarize}, Argument: mcp.CompleteRequestParamsArgument{Name: "conversation_id"}})
	for m, err := range errs {
		if we := wireErr(t, err, wire.CodeInvalidRequest); we.Message != "authentication required" {
			t.Errorf("%s: %v", m, we)
		}
	}
	// With an identity the same App works.
	if tree := call(t, strict, asUser(ctx, "carol"), ToolChat, map[string]any{"query": "hello"}); isError(tree) {
		t.Errorf("carol: %s", peertest.MustJSON(tree))
	}
}
