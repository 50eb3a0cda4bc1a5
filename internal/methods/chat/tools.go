package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/clip"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
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
	MaxSearchRunes     = 128 // a search is a few words; a longer one costs the store a scan of every message per rune
	DefaultSearchLimit = 10
	MaxSearchLimit     = 50
	titleRunes         = 80
	snippetRunes       = 160
)

// maxLoggedError bounds what a log line keeps of a provider's error: the
// sampling provider's is the client's to write, up to a request's size.
const maxLoggedError = 256

// LoggerName is the logger of the log messages the app sends the client.
const LoggerName = "chat"

// The tools' arguments. The schemas carry every check: a call that fails
// one gets a tool error naming the argument, and never reaches the model
// or the store. MaxQueryRunes, MaxSearchRunes and the search limits are
// the numbers in the tags (TestToolLimits).
type (
	chatArgs struct {
		Query          string `json:"query" jsonschema:"minLength=1,maxLength=32000,pattern=\\S" jsonschema_description:"User query"`
		ConversationID string `json:"conversation_id,omitempty" jsonschema_description:"The conversation to continue (from an earlier chat result); omit to start a new one."`
	}
	searchArgs struct {
		Query string `json:"query" jsonschema:"minLength=1,maxLength=128,pattern=\\S" jsonschema_description:"Text to look for."`
		Limit int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=50,default=10" jsonschema_description:"Most results to return (default 10)."`
	}
	getArgs struct {
		ConversationID string `json:"conversation_id" jsonschema:"minLength=1" jsonschema_description:"The conversation's id."`
	}
)

// The tools' structured output; conversation is also the text of a
// conversation's resource.
type (
	usage struct {
		PromptTokens     int64 `json:"prompt_tokens" jsonschema:"minimum=0" jsonschema_description:"Tokens of the prompt: the question and the history sent with it."`
		CompletionTokens int64 `json:"completion_tokens" jsonschema:"minimum=0" jsonschema_description:"Tokens of the answer."`
		TotalTokens      int64 `json:"total_tokens" jsonschema:"minimum=0" jsonschema_description:"prompt_tokens + completion_tokens."`
		Estimated        bool  `json:"estimated,omitempty" jsonschema_description:"Present and true when the provider reported no usage and the counts are estimates."`
	}
	chatResult struct {
		ConversationID  string `json:"conversation_id" jsonschema_description:"The conversation the turn was added to."`
		Answer          string `json:"answer" jsonschema_description:"The model's answer."`
		Provider        string `json:"provider" jsonschema_description:"The provider that answered: sampling, openai or echo."`
		Model           string `json:"model" jsonschema_description:"The model that answered."`
		Usage           usage  `json:"usage" jsonschema_description:"Token usage of the answer."`
		NewConversation bool   `json:"new_conversation" jsonschema_description:"Whether this call started the conversation."`
	}
	message struct {
		Seq       int64  `json:"seq" jsonschema_description:"Position in the conversation, from 1."`
		Role      string `json:"role" jsonschema:"enum=user,enum=assistant" jsonschema_description:"user or assistant."`
		Content   string `json:"content" jsonschema_description:"The text of the turn."`
		CreatedAt string `json:"created_at" jsonschema:"format=date-time" jsonschema_description:"When the turn was stored (RFC 3339)."`
		Provider  string `json:"provider,omitempty" jsonschema_description:"The provider that answered (assistant turns)."`
		Model     string `json:"model,omitempty" jsonschema_description:"The model that answered (assistant turns)."`
		Usage     *usage `json:"usage,omitempty" jsonschema_description:"Token usage of the answer (assistant turns)."`
	}
	conversation struct {
		ConversationID string    `json:"conversation_id" jsonschema_description:"The conversation's id."`
		URI            string    `json:"uri" jsonschema_description:"The conversation as a resource: conversation://{id}."`
		Title          string    `json:"title" jsonschema_description:"The conversation's title: the start of its first question."`
		CreatedAt      string    `json:"created_at" jsonschema:"format=date-time" jsonschema_description:"When it was created (RFC 3339)."`
		UpdatedAt      string    `json:"updated_at" jsonschema:"format=date-time" jsonschema_description:"When it last changed (RFC 3339)."`
		MessageCount   int64     `json:"message_count" jsonschema_description:"How many turns it has."`
		Messages       []message `json:"messages" jsonschema_description:"The turns, oldest first."`
	}
	searchHit struct {
		ConversationID string `json:"conversation_id" jsonschema_description:"The conversation's id."`
		URI            string `json:"uri" jsonschema_description:"conversation://{id}."`
		Title          string `json:"title" jsonschema_description:"The conversation's title."`
		UpdatedAt      string `json:"updated_at" jsonschema:"format=date-time" jsonschema_description:"When it last changed (RFC 3339)."`
		MessageCount   int64  `json:"message_count" jsonschema_description:"How many turns it has."`
		Matches        int64  `json:"matches" jsonschema_description:"How many turns contain the query."`
		Snippet        string `json:"snippet" jsonschema_description:"The text around the first match (empty when only the title matches)."`
		SnippetRole    string `json:"snippet_role,omitempty" jsonschema_description:"Who wrote the snippet's turn."`
	}
	searchResult struct {
		Results []searchHit `json:"results"`
	}
)

func (a *App) addTools() {
	f, t := false, true
	readOnly := func(title string) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: &t, OpenWorldHint: &f}
	}
	app.AddTool(a.layer, app.Tool{
		Name:         ToolChat,
		Title:        "Chat",
		Description:  "Chat with the AI agent. Without conversation_id a new conversation starts; with it, the conversation continues with its history as context. Returns the answer, the conversation_id and the token usage.",
		OutputSchema: app.SchemaFor[chatResult](), // the result carries _meta too: the handler builds it
		TaskSupport:  "optional",                  // a long answer can run as a task (2025-11-25); the conversation is saved when it ends
		Annotations:  &mcp.ToolAnnotations{Title: "Chat", ReadOnlyHint: &f, DestructiveHint: &f, IdempotentHint: &f, OpenWorldHint: &t},
	}, a.runChat)
	app.AddTool(a.layer, app.Tool{
		Name:        ToolSearch,
		Title:       "Search conversations",
		Description: "Find your conversations whose title or messages contain the query (ignoring case), most recently updated first.",
		Annotations: readOnly("Search conversations"),
	}, a.runSearch)
	app.AddTool(a.layer, app.Tool{
		Name:        ToolGet,
		Title:       "Get a conversation",
		Description: "Read one of your conversations: its title and every turn, with who answered and the token usage.",
		Annotations: readOnly("Get a conversation"),
	}, a.runGet)
}

func (a *App) runChat(ctx context.Context, in chatArgs) (*mcp.CallToolResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	query, convID := in.Query, in.ConversationID
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
			return nil, a.storeFailed(ctx, "read", convID, err)
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
		a.log.Warn("chat: no answer", "user", user, "conversation", convID, "err", clip.String(err.Error(), maxLoggedError))
		return nil, errors.New("The model could not answer: " + err.Error())
	}
	for _, s := range resp.Skipped {
		a.log.Info("chat: provider skipped", "provider", s.Provider, "err", clip.String(s.Err.Error(), maxLoggedError))
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
		return nil, a.storeFailed(ctx, "save", convID, err)
	}
	st.end(&u, nil)
	a.changed(ctx, user, convID, created)

	res, err := app.Structured(chatResult{
		ConversationID: convID, Answer: resp.Text, Provider: resp.Provider, Model: resp.Model,
		Usage: usageOf(u), NewConversation: created,
	})
	if err != nil {
		return nil, err
	}
	res.Content = []mcp.ContentBlock{&mcp.TextContent{Text: resp.Text}} // the answer itself, not its JSON
	res.Meta = &mcp.ResultMetaObject{Extra: map[string]any{
		"conversation_id":      convID,
		"usage":                res.StructuredContent.(map[string]any)["usage"], // a JSON tree, as _meta holds
		"io.mcpstack/provider": resp.Provider,
		"io.mcpstack/model":    resp.Model,
	}}
	return res, nil
}

func (a *App) runSearch(ctx context.Context, in searchArgs) (*searchResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	hits, err := a.store.Search(ctx, user, in.Query, in.Limit)
	if err != nil {
		return nil, a.storeFailed(ctx, "search", "", err)
	}
	out := &searchResult{Results: make([]searchHit, 0, len(hits))}
	for _, h := range hits {
		r := searchHit{
			ConversationID: h.Conversation.ID,
			URI:            URI(h.Conversation.ID),
			Title:          h.Conversation.Title,
			UpdatedAt:      timestamp(h.Conversation.UpdatedAt),
			MessageCount:   h.Conversation.MessageCount,
			Matches:        h.Matches,
			Snippet:        snippet(h.First.Content, in.Query),
		}
		if h.First.Seq > 0 {
			r.SnippetRole = h.First.Role
		}
		out.Results = append(out.Results, r)
	}
	return out, nil
}

func (a *App) runGet(ctx context.Context, in getArgs) (*conversation, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.store.Get(ctx, user, in.ConversationID)
	if err != nil {
		return nil, a.storeFailed(ctx, "read", in.ConversationID, err)
	}
	return conversationOf(c), nil
}

// storeFailed is the error of a store failure: a refused access as it is
// (a JSON-RPC error), an unknown conversation (or another user's: the
// same words) or a failure whose details stay in the server's log (tool
// errors, which the model reads).
func (a *App) storeFailed(ctx context.Context, op, id string, err error) error {
	if refusal(err) {
		return err
	}
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("No conversation %q. Start one with the chat tool (without conversation_id), or find yours with conversation_search.", id)
	}
	if errors.Is(err, store.ErrQuota) {
		return fmt.Errorf("Your conversations are at this server's limit (%s); nothing was stored. Ask its operator for more room.", strings.TrimPrefix(err.Error(), store.ErrQuota.Error()+": "))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	a.log.Error("chat: store", "op", op, "conversation", id, "err", err)
	return fmt.Errorf("The conversation store failed to %s; try again later.", op)
}

func usageOf(u agent.Usage) usage {
	return usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens, Estimated: u.Estimated}
}

// conversationOf is a conversation as conversation_get answers it and its
// resource reads.
func conversationOf(c *store.Conversation) *conversation {
	out := &conversation{
		ConversationID: c.ID,
		URI:            URI(c.ID),
		Title:          c.Title,
		CreatedAt:      timestamp(c.CreatedAt),
		UpdatedAt:      timestamp(c.UpdatedAt),
		MessageCount:   c.MessageCount,
		Messages:       make([]message, len(c.Messages)),
	}
	for i, m := range c.Messages {
		out.Messages[i] = message{Seq: m.Seq, Role: m.Role, Content: m.Content, CreatedAt: timestamp(m.CreatedAt), Provider: m.Provider, Model: m.Model}
		if m.Usage != nil {
			u := usageOf(agent.Usage(*m.Usage))
			out.Messages[i].Usage = &u
		}
	}
	return out
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

// indexFold finds q in s ignoring case, as a rune index; 0 when absent.
// Both are lowered rune by rune (a rune's lower case is one rune, so the
// index holds in s) and searched with strings.Index, in linear time: a
// naive search of a long query in a long message took seconds.
func indexFold(s, q []rune) int {
	if len(q) == 0 {
		return 0
	}
	ls := lowered(s)
	i := strings.Index(ls, lowered(q))
	if i < 0 {
		return 0
	}
	return utf8.RuneCountInString(ls[:i])
}

func lowered(rs []rune) string {
	var b strings.Builder
	b.Grow(len(rs))
	for _, r := range rs {
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}
