package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Prompt names.
const (
	PromptCodeReview = "code_review"
	PromptSummarize  = "summarize_conversation"
	PromptDebugError = "debug_error"
)

// Languages are the completions of code_review's language argument.
var Languages = []string{
	"bash", "c", "c#", "c++", "clojure", "css", "dart", "elixir", "erlang", "go", "haskell", "html",
	"java", "javascript", "json", "kotlin", "lua", "objective-c", "ocaml", "perl", "php", "python",
	"r", "ruby", "rust", "scala", "shell", "sql", "swift", "terraform", "typescript", "yaml", "zig",
}

func userMessage(c mcp.ContentBlock) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c}
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

// The prompts' arguments.
type (
	codeReviewArgs struct {
		Code     string `json:"code" jsonschema_description:"Code to review"`
		Language string `json:"language,omitempty" jsonschema_description:"The code's programming language"`
	}
	summarizeArgs struct {
		ConversationID string `json:"conversation_id" jsonschema_description:"The conversation to summarize"`
	}
	debugErrorArgs struct {
		Error   string `json:"error" jsonschema_description:"The error message or stack trace"`
		Context string `json:"context,omitempty" jsonschema_description:"What you were doing, the code involved, what you tried"`
	}
)

func (a *App) addPrompts() {
	app.AddPrompt(a.layer, app.Prompt{Name: PromptCodeReview, Title: "Code review", Description: "Review code for quality and best practices",
		Complete: map[string]app.Completer{"language": app.Prefixed(Languages...)}},
		func(_ context.Context, in codeReviewArgs) (*mcp.GetPromptResult, error) {
			intro := "Please review this code:"
			if lang := strings.TrimSpace(in.Language); lang != "" {
				intro = fmt.Sprintf("Please review this %s code:", lang)
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{userMessage(text(intro + "\n\n" + in.Code))}}, nil
		})
	app.AddPrompt(a.layer, app.Prompt{Name: PromptSummarize, Title: "Summarize a conversation", Description: "Summarize one of your conversations: its topic, what was asked and answered, what is still open",
		Complete: map[string]app.Completer{"conversation_id": a.completeIDs}},
		a.summarizePrompt)
	app.AddPrompt(a.layer, app.Prompt{Name: PromptDebugError, Title: "Debug an error", Description: "Explain an error message: its likely cause and how to fix it"},
		func(_ context.Context, in debugErrorArgs) (*mcp.GetPromptResult, error) {
			var b strings.Builder
			b.WriteString("I got this error:\n\n" + in.Error)
			if c := strings.TrimSpace(in.Context); c != "" {
				b.WriteString("\n\nContext:\n" + c)
			}
			b.WriteString("\n\nWhat is the likely cause, and how do I fix it?")
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{userMessage(text(b.String()))}}, nil
		})
}

// SummarizeAsk is the request after the embedded conversation.
const SummarizeAsk = "Summarize the conversation above: its topic, the questions asked, the answers given, and anything left open."

func (a *App) summarizePrompt(ctx context.Context, in summarizeArgs) (*mcp.GetPromptResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	id := in.ConversationID
	c, err := a.store.Get(ctx, user, id)
	if errors.Is(err, store.ErrNotFound) {
		e := wire.NewError(wire.CodeInvalidParams, "no conversation %q", id)
		e.Data = map[string]any{"field": "/params/arguments/conversation_id", "reason": "no such conversation"}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	body, err := jsontree.Marshal(conversationOf(c))
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{
		userMessage(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: URI(id), MIMEType: MIMEType, Text: string(body)}}),
		userMessage(text(SummarizeAsk)),
	}}, nil
}

// completeIDs completes the caller's conversation ids (for the
// summarize_conversation prompt and the {id} of conversation://{id}).
func (a *App) completeIDs(ctx context.Context, typed string, _ map[string]string) ([]string, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	// app answers 100 values and says there are more past them
	convs, _, err := a.store.List(ctx, user, store.ListOptions{Prefix: typed, Limit: 101})
	if err != nil {
		return nil, err
	}
	values := make([]string, len(convs))
	for i, c := range convs {
		values[i] = c.ID
	}
	return values, nil
}
