package chat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/methods/chat/agent"
	"github.com/mcpstack/mcpstack/methods/chat/store"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Tool names.
const (
	ToolChat   = "chat"
	ToolSearch = "conversation_search"
	ToolGet    = "conversation_get"
)

// Limits of the tools' arguments.
const (
	MaxQueryRunes      = 32000
	DefaultSearchLimit = 10
	MaxSearchLimit     = 50
	titleRunes         = 80
	snippetRunes       = 160
)

// LoggerName is the logger of the log messages the app sends the client.
const LoggerName = "chat"

type tool struct {
	def mcp.Tool
	run func(a *App, ctx context.Context, user string, args map[string]any) (*mcp.CallToolResult, error)
}

func prop(typ, description string, extra ...any) map[string]any {
	p := map[string]any{"type": typ, "description": description}
	for i := 0; i+1 < len(extra); i += 2 {
		p[extra[i].(string)] = extra[i+1]
	}
	return p
}

func usageSchema() map[string]any {
	n := func(d string) map[string]any { return prop("integer", d, "minimum", 0) }
	return map[string]any{
		"type":        "object",
		"description": "Token usage of the answer.",
		"properties": map[string]any{
			"prompt_tokens":     n("Tokens of the prompt: the question and the history sent with it."),
			"completion_tokens": n("Tokens of the answer."),
			"total_tokens":      n("prompt_tokens + completion_tokens."),
			"estimated":         prop("boolean", "Present and true when the provider reported no usage and the counts are estimates."),
		},
		"required": []any{"prompt_tokens", "completion_tokens", "total_tokens"},
	}
}

func messageSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"seq":        prop("integer", "Position in the conversation, from 1."),
			"role":       prop("string", "user or assistant.", "enum", []any{"user", "assistant"}),
			"content":    prop("string", "The text of the turn."),
			"created_at": prop("string", "When the turn was stored (RFC 3339).", "format", "date-time"),
			"provider":   prop("string", "The provider that answered (assistant turns)."),
			"model":      prop("string", "The model that answered (assistant turns)."),
			"usage":      usageSchema(),
		},
		"required": []any{"seq", "role", "content", "created_at"},
	}
}

func conversationProps() map[string]map[string]any {
	return map[string]map[string]any{
		"conversation_id": prop("string", "The conversation's id."),
		"uri":             prop("string", "The conversation as a resource: conversation://{id}."),
		"title":           prop("string", "The conversation's title: the start of its first question."),
		"created_at":      prop("string", "When it was created (RFC 3339).", "format", "date-time"),
		"updated_at":      prop("string", "When it last changed (RFC 3339).", "format", "date-time"),
		"message_count":   prop("integer", "How many turns it has."),
		"messages":        {"type": "array", "description": "The turns, oldest first.", "items": messageSchema()},
	}
}

// outputSchema is an object schema for Tool.OutputSchema ("type": "object"
// is a constant the encoder writes where the revision requires it).
func outputSchema(props map[string]map[string]any, required ...string) *mcp.ToolOutputSchema {
	return &mcp.ToolOutputSchema{Properties: props, Required: required}
}

func tools() []*tool {
	readOnly := func(title string) *mcp.ToolAnnotations {
		t, f := true, false
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: &t, OpenWorldHint: &f}
	}
	f, t := false, true
	return []*tool{
		{def: mcp.Tool{
			Name:        ToolChat,
			Title:       "Chat",
			Description: "Chat with the AI agent. Without conversation_id a new conversation starts; with it, the conversation continues with its history as context. Returns the answer, the conversation_id and the token usage.",
			InputSchema: mcp.ToolInputSchema{
				Properties: map[string]map[string]any{
					"query":           prop("string", "User query", "minLength", 1, "maxLength", MaxQueryRunes),
					"conversation_id": prop("string", "The conversation to continue (from an earlier chat result); omit to start a new one."),
				},
				Required: []string{"query"},
			},
			OutputSchema: outputSchema(map[string]map[string]any{
				"conversation_id":  prop("string", "The conversation the turn was added to."),
				"answer":           prop("string", "The model's answer."),
				"provider":         prop("string", "The provider that answered: sampling, openai or echo."),
				"model":            prop("string", "The model that answered."),
				"usage":            usageSchema(),
				"new_conversation": prop("boolean", "Whether this call started the conversation."),
			}, "conversation_id", "answer", "provider", "model", "usage", "new_conversation"),
			Annotations: &mcp.ToolAnnotations{Title: "Chat", ReadOnlyHint: &f, DestructiveHint: &f, IdempotentHint: &f, OpenWorldHint: &t},
		}, run: (*App).runChat},
		{def: mcp.Tool{
			Name:        ToolSearch,
			Title:       "Search conversations",
			Description: "Find your conversations whose title or messages contain the query (ignoring case), most recently updated first.",
			InputSchema: mcp.ToolInputSchema{
				Properties: map[string]map[string]any{
					"query": prop("string", "Text to look for.", "minLength", 1),
					"limit": prop("integer", fmt.Sprintf("Most results to return (default %d).", DefaultSearchLimit), "minimum", 1, "maximum", MaxSearchLimit),
				},
				Required: []string{"query"},
			},
			OutputSchema: outputSchema(map[string]map[string]any{
				"results": {"type": "array", "items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"conversation_id": prop("string", "The conversation's id."),
						"uri":             prop("string", "conversation://{id}."),
						"title":           prop("string", "The conversation's title."),
						"updated_at":      prop("string", "When it last changed (RFC 3339).", "format", "date-time"),
						"message_count":   prop("integer", "How many turns it has."),
						"matches":         prop("integer", "How many turns contain the query."),
						"snippet":         prop("string", "The text around the first match (empty when only the title matches)."),
						"snippet_role":    prop("string", "Who wrote the snippet's turn."),
					},
					"required": []any{"conversation_id", "uri", "title", "updated_at", "message_count", "matches", "snippet"},
				}},
			}, "results"),
			Annotations: readOnly("Search conversations"),
		}, run: (*App).runSearch},
		{def: mcp.Tool{
			Name:        ToolGet,
			Title:       "Get a conversation",
			Description: "Read one of your conversations: its title and every turn, with who answered and the token usage.",
			InputSchema: mcp.ToolInputSchema{
				Properties: map[string]map[string]any{"conversation_id": prop("string", "The conversation's id.", "minLength", 1)},
				Required:   []string{"conversation_id"},
			},
			OutputSchema: outputSchema(conversationProps(), "conversation_id", "uri", "title", "created_at", "updated_at", "message_count", "messages"),
			Annotations:  readOnly("Get a conversation"),
		}, run: (*App).runGet},
	}
}

var toolList = tools()

func toolByName(name string) *tool {
	for _, t := range toolList {
		if t.def.Name == name {
			return t
		}
	}
	return nil
}

// ListTools lists chat, conversation_search and conversation_get.
func (a *App) ListTools(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	page, next, err := base.Paginate(a.pager, "tools", toolList, cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.Tool, len(page))
	for i, t := range page {
		d := t.def
		defs[i] = &d
	}
	ttl := int64(0)
	return &mcp.ListToolsResult{Tools: defs, NextCursor: next, CacheScope: "public", TTLMs: &ttl}, nil
}

// CallTool runs a tool. An unknown tool is -32602; a tool that fails, bad
// arguments and unknown conversations included, answers a result with
// isError, so the model can read why.
func (a *App) CallTool(ctx context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	t := toolByName(p.Name)
	if t == nil {
		e := wire.NewError(wire.CodeInvalidParams, "unknown tool %q", p.Name)
		e.Data = map[string]any{"field": "/params/name", "reason": fmt.Sprintf("no tool named %q", p.Name)}
		return nil, e
	}
	if a.authorize != nil {
		if err := a.authorize(ctx, p.Name); err != nil {
			return nil, err
		}
	}
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	args := p.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return t.run(a, ctx, user, args)
}

func (a *App) runChat(ctx context.Context, user string, args map[string]any) (*mcp.CallToolResult, error) {
	query, bad := stringArg(args, "query", true)
	if bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(query) == "" {
		return toolError(`Argument "query" must not be empty.`), nil
	}
	if utf8.RuneCountInString(query) > MaxQueryRunes {
		return toolError(fmt.Sprintf(`Argument "query" is longer than %d characters.`, MaxQueryRunes)), nil
	}
	convID, bad := stringArg(args, "conversation_id", false)
	if bad != nil {
		return bad, nil
	}
	// Writing is checked again by the store; checked here too, so that a
	// caller who may not write does not make the model answer first.
	if err := a.allowed(ctx, WriteConversations); err != nil {
		return nil, err
	}
	created := convID == ""
	var history []store.Message
	if created {
		convID = store.NewID()
	} else {
		c, err := a.store.Get(ctx, user, convID)
		if err != nil {
			return a.storeFailed(ctx, "read", convID, err)
		}
		history = c.Messages
	}
	req := &agent.Request{System: a.system, MaxTokens: a.maxTokens}
	if len(history) > a.history {
		history = history[len(history)-a.history:]
	}
	for _, m := range history {
		req.Messages = append(req.Messages, agent.Message{Role: m.Role, Content: m.Content})
	}
	req.Messages = append(req.Messages, agent.Message{Role: agent.RoleUser, Content: query})

	st := newStream(ctx, a.log, convID)
	st.start()
	asked := time.Now()
	resp, err := a.agent.Generate(ctx, req, st.delta)
	if err != nil {
		st.end(nil, err)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		a.log.Warn("chat: no answer", "user", user, "conversation", convID, "err", err)
		return toolError("The model could not answer: " + err.Error()), nil
	}
	for _, s := range resp.Skipped {
		a.log.Info("chat: provider skipped", "provider", s.Provider, "err", s.Err)
		_ = peer.Log(ctx, mcp.LoggingLevelWarning, LoggerName, map[string]any{
			"message": "provider " + s.Provider + " did not answer; fell back", "provider": s.Provider, "error": s.Err.Error(),
		})
	}
	u := resp.Usage
	msgs := []store.Message{
		{Role: store.RoleUser, Content: query, CreatedAt: asked},
		{Role: store.RoleAssistant, Content: resp.Text, Provider: resp.Provider, Model: resp.Model,
			Usage: &store.Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens, Estimated: u.Estimated}},
	}
	// The answer is kept even when the client cancels now: it is paid for.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if created {
		_, err = a.store.Create(sctx, user, convID, title(query), msgs...)
	} else {
		_, err = a.store.Append(sctx, user, convID, msgs...)
	}
	if err != nil {
		st.end(nil, errors.New("the conversation could not be saved"))
		return a.storeFailed(ctx, "save", convID, err)
	}
	st.end(&u, nil)
	a.changed(ctx, user, convID, created)

	structured := map[string]any{
		"conversation_id":  convID,
		"answer":           resp.Text,
		"provider":         resp.Provider,
		"model":            resp.Model,
		"usage":            usageTree(u, true),
		"new_conversation": created,
	}
	return &mcp.CallToolResult{
		Content:           []mcp.ContentBlock{text(resp.Text)},
		StructuredContent: structured,
		Meta: &mcp.ResultMetaObject{Extra: map[string]any{
			"conversation_id":      convID,
			"usage":                usageTree(u, true),
			"io.mcpstack/provider": resp.Provider,
			"io.mcpstack/model":    resp.Model,
		}},
	}, nil
}

func (a *App) runSearch(ctx context.Context, user string, args map[string]any) (*mcp.CallToolResult, error) {
	query, bad := stringArg(args, "query", true)
	if bad != nil {
		return bad, nil
	}
	if strings.TrimSpace(query) == "" {
		return toolError(`Argument "query" must not be empty.`), nil
	}
	limit := DefaultSearchLimit
	if v, ok := args["limit"]; ok && v != nil {
		f, isNum := v.(float64)
		if !isNum || f != math.Trunc(f) || f < 1 || f > MaxSearchLimit {
			return toolError(fmt.Sprintf(`Argument "limit" must be an integer from 1 to %d.`, MaxSearchLimit)), nil
		}
		limit = int(f)
	}
	hits, err := a.store.Search(ctx, user, query, limit)
	if err != nil {
		return a.storeFailed(ctx, "search", "", err)
	}
	results := make([]any, 0, len(hits))
	for _, h := range hits {
		r := map[string]any{
			"conversation_id": h.Conversation.ID,
			"uri":             URI(h.Conversation.ID),
			"title":           h.Conversation.Title,
			"updated_at":      timestamp(h.Conversation.UpdatedAt),
			"message_count":   h.Conversation.MessageCount,
			"matches":         h.Matches,
			"snippet":         snippet(h.First.Content, query),
		}
		if h.First.Seq > 0 {
			r["snippet_role"] = h.First.Role
		}
		results = append(results, r)
	}
	return structuredResult(map[string]any{"results": results})
}

func (a *App) runGet(ctx context.Context, user string, args map[string]any) (*mcp.CallToolResult, error) {
	id, bad := stringArg(args, "conversation_id", true)
	if bad != nil {
		return bad, nil
	}
	c, err := a.store.Get(ctx, user, id)
	if err != nil {
		return a.storeFailed(ctx, "read", id, err)
	}
	return structuredResult(conversationTree(c))
}

// storeFailed answers a store error: a refused access as it is, an
// unknown conversation (or another user's: the same words) or a failure
// whose details stay in the server's log.
func (a *App) storeFailed(ctx context.Context, op, id string, err error) (*mcp.CallToolResult, error) {
	if refusal(err) {
		return nil, err
	}
	if errors.Is(err, store.ErrNotFound) {
		return toolError(fmt.Sprintf("No conversation %q. Start one with the chat tool (without conversation_id), or find yours with conversation_search.", id)), nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	a.log.Error("chat: store", "op", op, "conversation", id, "err", err)
	return toolError(fmt.Sprintf("The conversation store failed to %s; try again later.", op)), nil
}

// structuredResult answers with structuredContent, and its JSON as text
// for clients that read only content.
func structuredResult(v map[string]any) (*mcp.CallToolResult, error) {
	b, err := wire.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{text(string(b))}, StructuredContent: v}, nil
}

// conversationTree is a conversation as JSON: conversation_get's result
// and the text of its resource.
func conversationTree(c *store.Conversation) map[string]any {
	msgs := make([]any, len(c.Messages))
	for i, m := range c.Messages {
		t := map[string]any{"seq": m.Seq, "role": m.Role, "content": m.Content, "created_at": timestamp(m.CreatedAt)}
		if m.Provider != "" {
			t["provider"] = m.Provider
		}
		if m.Model != "" {
			t["model"] = m.Model
		}
		if m.Usage != nil {
			t["usage"] = usageTree(agent.Usage(*m.Usage), true)
		}
		msgs[i] = t
	}
	return map[string]any{
		"conversation_id": c.ID,
		"uri":             URI(c.ID),
		"title":           c.Title,
		"created_at":      timestamp(c.CreatedAt),
		"updated_at":      timestamp(c.UpdatedAt),
		"message_count":   c.MessageCount,
		"messages":        msgs,
	}
}

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// title is the first line of the first question, cut to titleRunes.
func title(query string) string {
	s := strings.TrimSpace(query)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if r := []rune(s); len(r) > titleRunes {
		s = strings.TrimSpace(string(r[:titleRunes-1])) + "…"
	}
	return s
}

// snippet is the text around the first case-insensitive occurrence of
// query in s, at most snippetRunes long, with … where it was cut.
func snippet(s, query string) string {
	rs := []rune(s)
	if len(rs) <= snippetRunes {
		return s
	}
	at := indexFold(rs, []rune(query))
	start := max(0, at-snippetRunes/3)
	end := min(len(rs), start+snippetRunes)
	start = max(0, end-snippetRunes)
	out := string(rs[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(rs) {
		out += "…"
	}
	return out
}

// indexFold finds q in s ignoring case, rune by rune; 0 when absent.
func indexFold(s, q []rune) int {
	if len(q) == 0 {
		return 0
	}
outer:
	for i := 0; i+len(q) <= len(s); i++ {
		for j, r := range q {
			if unicode.ToLower(s[i+j]) != unicode.ToLower(r) {
				continue outer
			}
		}
		return i
	}
	return 0
}

// stringArg reads a string argument; a missing required one or one of
// another type is a tool error. An absent optional one (or null) is "".
func stringArg(args map[string]any, name string, required bool) (string, *mcp.CallToolResult) {
	v, present := args[name]
	if !present || v == nil {
		if required {
			return "", toolError(fmt.Sprintf("Missing required argument %q.", name))
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", toolError(fmt.Sprintf("Argument %q must be a string.", name))
	}
	return s, nil
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func toolError(msg string) *mcp.CallToolResult {
	yes := true
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{text(msg)}, IsError: &yes}
}

func cursor(p *mcp.PaginatedRequestParams) string {
	if p == nil {
		return ""
	}
	return p.Cursor
}
