package chat

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/methods/chat/store"
	"github.com/mcpstack/mcpstack/wire"
)

// Prompt names.
const (
	PromptCodeReview = "code_review"
	PromptSummarize  = "summarize_conversation"
	PromptDebugError = "debug_error"
)

// MaxCompletions is the most values one completion answer holds (the
// protocol's limit).
const MaxCompletions = 100

// Languages are the completions of code_review's language argument.
var Languages = []string{
	"bash", "c", "c#", "c++", "clojure", "css", "dart", "elixir", "erlang", "go", "haskell", "html",
	"java", "javascript", "json", "kotlin", "lua", "objective-c", "ocaml", "perl", "php", "python",
	"r", "ruby", "rust", "scala", "shell", "sql", "swift", "terraform", "typescript", "yaml", "zig",
}

type prompt struct {
	def mcp.Prompt
	get func(a *App, ctx context.Context, user string, args map[string]string) ([]*mcp.PromptMessage, error)
}

func arg(name, description string, required bool) *mcp.PromptArgument {
	return &mcp.PromptArgument{Name: name, Description: description, Required: &required}
}

func userMessage(c mcp.ContentBlock) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c}
}

var promptList = []*prompt{
	{def: mcp.Prompt{Name: PromptCodeReview, Title: "Code review", Description: "Review code for quality and best practices",
		Arguments: []*mcp.PromptArgument{arg("code", "Code to review", true), arg("language", "The code's programming language", false)}},
		get: func(_ *App, _ context.Context, _ string, args map[string]string) ([]*mcp.PromptMessage, error) {
			lang := strings.TrimSpace(args["language"])
			intro := "Please review this code:"
			if lang != "" {
				intro = fmt.Sprintf("Please review this %s code:", lang)
			}
			return []*mcp.PromptMessage{userMessage(text(intro + "\n\n" + args["code"]))}, nil
		}},
	{def: mcp.Prompt{Name: PromptSummarize, Title: "Summarize a conversation", Description: "Summarize one of your conversations: its topic, what was asked and answered, what is still open",
		Arguments: []*mcp.PromptArgument{arg("conversation_id", "The conversation to summarize", true)}},
		get: (*App).summarizePrompt},
	{def: mcp.Prompt{Name: PromptDebugError, Title: "Debug an error", Description: "Explain an error message: its likely cause and how to fix it",
		Arguments: []*mcp.PromptArgument{arg("error", "The error message or stack trace", true), arg("context", "What you were doing, the code involved, what you tried", false)}},
		get: func(_ *App, _ context.Context, _ string, args map[string]string) ([]*mcp.PromptMessage, error) {
			var b strings.Builder
			b.WriteString("I got this error:\n\n" + args["error"])
			if c := strings.TrimSpace(args["context"]); c != "" {
				b.WriteString("\n\nContext:\n" + c)
			}
			b.WriteString("\n\nWhat is the likely cause, and how do I fix it?")
			return []*mcp.PromptMessage{userMessage(text(b.String()))}, nil
		}},
}

func promptByName(name string) *prompt {
	for _, p := range promptList {
		if p.def.Name == name {
			return p
		}
	}
	return nil
}

// SummarizeAsk is the request after the embedded conversation.
const SummarizeAsk = "Summarize the conversation above: its topic, the questions asked, the answers given, and anything left open."

func (a *App) summarizePrompt(ctx context.Context, user string, args map[string]string) ([]*mcp.PromptMessage, error) {
	id := args["conversation_id"]
	c, err := a.store.Get(ctx, user, id)
	if errors.Is(err, store.ErrNotFound) {
		e := wire.NewError(wire.CodeInvalidParams, "no conversation %q", id)
		e.Data = map[string]any{"field": "/params/arguments/conversation_id", "reason": "no such conversation"}
		return nil, e
	}
	if err != nil {
		return nil, err
	}
	body, err := wire.Marshal(conversationTree(c))
	if err != nil {
		return nil, err
	}
	return []*mcp.PromptMessage{
		userMessage(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: URI(id), MIMEType: MIMEType, Text: string(body)}}),
		userMessage(text(SummarizeAsk)),
	}, nil
}

// ListPrompts lists code_review, summarize_conversation and debug_error.
func (a *App) ListPrompts(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	page, next, err := base.Paginate(a.pager, "prompts", promptList, cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.Prompt, len(page))
	for i, pr := range page {
		d := pr.def
		defs[i] = &d
	}
	ttl := int64(0)
	return &mcp.ListPromptsResult{Prompts: defs, NextCursor: next, CacheScope: "public", TTLMs: &ttl}, nil
}

// GetPrompt renders a prompt. An unknown prompt, a missing required
// argument, or a conversation the caller does not have is -32602.
func (a *App) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	pr := promptByName(p.Name)
	if pr == nil {
		return nil, unknownPrompt(p.Name)
	}
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	for _, ar := range pr.def.Arguments {
		if ar.Required != nil && *ar.Required && strings.TrimSpace(p.Arguments[ar.Name]) == "" {
			e := wire.NewError(wire.CodeInvalidParams, "prompt %q needs argument %q", p.Name, ar.Name)
			e.Data = map[string]any{"field": "/params/arguments/" + ar.Name, "reason": "missing required argument"}
			return nil, e
		}
	}
	msgs, err := pr.get(a, ctx, user, p.Arguments)
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Description: pr.def.Description, Messages: msgs}, nil
}

func unknownPrompt(name string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "unknown prompt %q", name)
	e.Data = map[string]any{"field": "/params/name", "reason": fmt.Sprintf("no prompt named %q", name)}
	return e
}

// Complete suggests values: languages for code_review's language, the
// caller's conversation ids for summarize_conversation's conversation_id
// and the {id} of conversation://{id}. Candidates start with what was
// typed (languages ignoring case). An unknown prompt or template is
// -32602; other arguments have no candidates.
func (a *App) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	typed := p.Argument.Value
	switch ref := p.Ref.(type) {
	case *mcp.PromptReference:
		if promptByName(ref.Name) == nil {
			return nil, unknownPrompt(ref.Name)
		}
		switch {
		case ref.Name == PromptCodeReview && p.Argument.Name == "language":
			return completeLanguages(typed), nil
		case ref.Name == PromptSummarize && p.Argument.Name == "conversation_id":
			return a.completeIDs(ctx, user, typed)
		}
	case *mcp.ResourceTemplateReference:
		if ref.URI != URITemplate {
			e := wire.NewError(wire.CodeInvalidParams, "unknown resource template %q", ref.URI)
			e.Data = map[string]any{"field": "/params/ref/uri", "reason": "no such resource template"}
			return nil, e
		}
		if p.Argument.Name == "id" {
			return a.completeIDs(ctx, user, typed)
		}
	default:
		return nil, wire.NewError(wire.CodeInvalidParams, "unsupported completion reference %T", p.Ref)
	}
	return completion(nil, false), nil
}

func completeLanguages(typed string) *mcp.CompleteResult {
	prefix := strings.ToLower(typed)
	var values []string
	for _, l := range Languages {
		if strings.HasPrefix(l, prefix) {
			values = append(values, l)
		}
	}
	sort.Strings(values)
	return completion(values, false)
}

func (a *App) completeIDs(ctx context.Context, user, typed string) (*mcp.CompleteResult, error) {
	convs, more, err := a.store.List(ctx, user, store.ListOptions{Prefix: typed, Limit: MaxCompletions})
	if err != nil {
		return nil, err
	}
	values := make([]string, len(convs))
	for i, c := range convs {
		values[i] = c.ID
	}
	return completion(values, more), nil
}

func completion(values []string, more bool) *mcp.CompleteResult {
	if values == nil {
		values = []string{}
	}
	c := mcp.CompleteResultCompletion{Values: values, HasMore: &more}
	if !more {
		total := int64(len(values))
		c.Total = &total
	}
	return &mcp.CompleteResult{Completion: c}
}
