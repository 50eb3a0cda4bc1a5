package chat

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server/auth"
	"github.com/mcpstack/mcpstack/wire"
)

// TestConversationAccess: the read scope is declared once and guards every
// path to conversation content (the regression: conversation_get was
// guarded, resources/read, the summarize prompt and search snippets were
// not); the write scope guards chat before the model is asked.
func TestConversationAccess(t *testing.T) {
	ag := &scripted{deltas: []string{"the secret answer"}}
	access := WithConversationAccess(func(ctx context.Context, a Access) error {
		return auth.RequireScopes(ctx, map[Access]string{ReadConversations: "chat:read", WriteConversations: "chat:write"}[a])
	})
	a, _ := newApp(t, ag, access)
	as := func(session string, scopes ...string) context.Context {
		ctx := ctxOf(client(t, session), "alice")
		return auth.WithPrincipal(ctx, &auth.Principal{Subject: "alice", Scopes: scopes})
	}
	owner := as("s-owner", "chat:read", "chat:write")
	id := chatID(t, a, owner, "the secret question")
	noRead := as("s-writer", "chat:write")
	noWrite := as("s-reader", "chat:read")
	refused := func(what string, err error) {
		t.Helper()
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != auth.CodeInsufficientScope {
			t.Errorf("%s without the scope: %v, want -32003", what, err)
		}
	}
	tool := func(ctx context.Context, name string, args map[string]any) error {
		_, err := a.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: args})
		return err
	}
	refused("conversation_get", tool(noRead, ToolGet, map[string]any{"conversation_id": id}))
	refused("conversation_search", tool(noRead, ToolSearch, map[string]any{"query": "secret"}))
	refused("chat continuing a conversation", tool(noRead, ToolChat, map[string]any{"query": "more", "conversation_id": id}))
	_, err := a.ReadResource(noRead, &mcp.ReadResourceRequestParams{URI: URI(id)})
	refused("resources/read", err)
	_, err = a.ListResources(noRead, nil)
	refused("resources/list", err)
	_, err = a.Subscribe(noRead, &mcp.SubscribeRequestParams{URI: URI(id)})
	refused("resources/subscribe", err)
	_, err = a.GetPrompt(noRead, &mcp.GetPromptRequestParams{Name: PromptSummarize, Arguments: map[string]string{"conversation_id": id}})
	refused("prompts/get summarize_conversation", err)
	for _, ref := range []mcp.CompleteRequestParamsRef{&mcp.PromptReference{Name: PromptSummarize}, &mcp.ResourceTemplateReference{URI: URITemplate}} {
		name := "conversation_id"
		if _, ok := ref.(*mcp.ResourceTemplateReference); ok {
			name = "id"
		}
		_, err = a.Complete(noRead, &mcp.CompleteRequestParams{Ref: ref, Argument: mcp.CompleteRequestParamsArgument{Name: name, Value: "conv_"}})
		refused("completion/complete "+name, err)
	}
	asked := len(ag.requests())
	refused("chat without chat:write", tool(noWrite, ToolChat, map[string]any{"query": "new"}))
	if len(ag.requests()) != asked {
		t.Errorf("a caller who may not write made the model answer")
	}
	// What needs no conversation content stays open.
	if _, err := a.GetPrompt(noRead, &mcp.GetPromptRequestParams{Name: PromptCodeReview, Arguments: map[string]string{"code": "x := 1"}}); err != nil {
		t.Errorf("code_review without chat:read: %v", err)
	}
	if r := call(t, a, owner, ToolGet, map[string]any{"conversation_id": id}); isError(r) {
		t.Errorf("the owner with both scopes: %v", r)
	}
}
