package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/internal/methods/chat"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
)

// chatConfig is what the chat profile can be told.
type chatConfig struct {
	providers      string
	openaiBaseURL  string
	openaiModel    string
	openaiTimeout  time.Duration
	openaiRetries  int
	dataDir        string
	postgresDSN    string
	postgresSchema string
	toolScopes     string
	readScope      string
	writeScope     string
	quota          store.Quota
}

func (c *chatConfig) register(fl *flag.FlagSet) {
	fl.StringVar(&c.providers, "chat-providers", "sampling,openai,echo", "chat: the model providers to try, in order (sampling: the client's own model; openai: any OpenAI-compatible endpoint; echo: offline demo)")
	fl.StringVar(&c.openaiBaseURL, "openai-base-url", agent.DefaultOpenAIBaseURL, "chat: OpenAI-compatible API root (Ollama: http://127.0.0.1:11434/v1); the key comes from MCPSTACK_OPENAI_API_KEY or OPENAI_API_KEY")
	fl.StringVar(&c.openaiModel, "openai-model", agent.DefaultOpenAIModel, "chat: model name for the openai provider")
	fl.DurationVar(&c.openaiTimeout, "openai-timeout", agent.DefaultOpenAITimeout, "chat: bound on one openai attempt")
	fl.IntVar(&c.openaiRetries, "openai-retries", agent.DefaultOpenAIRetries, "chat: retries of a failed openai request before any answer streamed")
	fl.StringVar(&c.dataDir, "data-dir", store.DefaultDataDir(), "chat: folder of the SQLite database (chat.db)")
	fl.StringVar(&c.postgresDSN, "postgres-dsn", "", "chat: keep conversations in PostgreSQL instead (prefer MCPSTACK_POSTGRES_DSN, to keep passwords out of ps)")
	fl.StringVar(&c.postgresSchema, "postgres-schema", store.DefaultPostgresSchema, "chat: PostgreSQL schema of the tables")
	fl.StringVar(&c.readScope, "conversation-read-scope", "", "chat: the `scope` a token needs to see conversation content by any path: tools, resources, subscriptions, the summarize prompt, completions, search (JSON-RPC -32003 without)")
	fl.StringVar(&c.writeScope, "conversation-write-scope", "", "chat: the `scope` a token needs to start or continue a conversation (JSON-RPC -32003 without)")
	fl.IntVar(&c.quota.Conversations, "user-max-conversations", store.DefaultQuota.Conversations, "chat: conversations one user may keep (the chat tool answers an error above)")
	fl.Int64Var(&c.quota.Bytes, "user-max-bytes", store.DefaultQuota.Bytes, "chat: `bytes` of messages one user may keep, all conversations together")
	fl.StringVar(&c.toolScopes, "tool-scopes", "", "chat: more scopes a token needs per tool, e.g. \"chat=chat:admin\"; these guard the tool only: guard conversation content with --conversation-read-scope")
}

// built is a profile's handler and what it needs from the server (the
// handler's Attach, where it has one, is server.New's to call).
type built struct {
	handler mcp.Handler
	options []server.Option // e.g. hooks for ended sessions
	close   func()          // called after the server closed
}

// profile is one handler `serve` can run.
type profile struct {
	summary string
	build   func(ctx context.Context, c serveConfig, log *slog.Logger) (*built, error)
}

// profiles are the handlers `serve` can run.
var profiles = map[string]profile{
	"chat": {"the chat agent of the MCP docs: chat tool, conversation:// resources, code_review prompt (default)", buildChat},
	"conformance": {"the fixtures of the official MCP conformance suite", func(_ context.Context, c serveConfig, _ *slog.Logger) (*built, error) {
		f := conformance.New(conformance.WithPageSize(c.pageSize))
		return &built{handler: f}, nil
	}},
	"bench": {"one echo tool, for load tests", func(context.Context, serveConfig, *slog.Logger) (*built, error) {
		a := bench.New()
		return &built{handler: a.Handler()}, nil
	}},
}

func profileNames() []string {
	var names []string
	for n := range profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// buildChat opens the conversation store, builds the provider chain and the
// app, and binds conversations to the authenticated caller.
func buildChat(ctx context.Context, c serveConfig, log *slog.Logger) (*built, error) {
	cc := c.chat
	dsn := cc.postgresDSN
	if dsn == "" {
		dsn = os.Getenv("MCPSTACK_POSTGRES_DSN")
	}
	st, err := store.Open(ctx, store.Config{DataDir: cc.dataDir, PostgresDSN: dsn, PostgresSchema: cc.postgresSchema, Quota: cc.quota})
	if err != nil {
		return nil, err
	}
	retries := cc.openaiRetries
	if retries == 0 {
		retries = -1 // OpenAIConfig: 0 means the default, < 0 none
	}
	ag, err := agent.New(agent.Config{Providers: cc.providers, OpenAI: agent.OpenAIConfig{
		BaseURL: cc.openaiBaseURL, Model: cc.openaiModel, APIKey: agent.APIKeyFromEnv(os.Getenv),
		Timeout: cc.openaiTimeout, Retries: retries}})
	if err != nil {
		st.Close()
		return nil, err
	}
	opts := []chat.Option{chat.WithLogger(log), chat.WithPageSize(c.pageSize),
		chat.WithUser(func(ctx context.Context) (string, bool) { o := auth.OwnerFrom(ctx); return o, o != "" })}
	if !c.stdio && c.auth.Mode != auth.ModeOff {
		opts = append(opts, chat.WithAnonymousUser("")) // no token, no conversations
		scopes, err := parseToolScopes(cc.toolScopes)
		if err != nil {
			st.Close()
			return nil, err
		}
		opts = append(opts, chat.WithAuthorize(scopes.Check))
		needs := map[chat.Access]string{chat.ReadConversations: cc.readScope, chat.WriteConversations: cc.writeScope}
		opts = append(opts, chat.WithConversationAccess(func(ctx context.Context, a chat.Access) error {
			return auth.RequireScopes(ctx, needs[a])
		}))
		if cc.readScope == "" && (len(scopes[chat.ToolGet]) > 0 || len(scopes[chat.ToolSearch]) > 0) {
			log.Warn("--tool-scopes guards conversation_get and conversation_search only: resources/read, the summarize_conversation prompt and completions still show conversations; set --conversation-read-scope to guard them all")
		}
	}
	if c.obs != nil { // the store's and the model providers' calls, timed and traced
		opts = append(opts, chat.WithTiming(c.obs.Dependency))
	}
	app := chat.New(st, ag, opts...)
	return &built{handler: app, close: func() { st.Close() }}, nil
}

// parseToolScopes reads "tool=scope[,scope] tool2=scope".
func parseToolScopes(s string) (auth.ScopeMap, error) {
	m := auth.ScopeMap{}
	for _, part := range strings.Fields(s) {
		tool, scopes, ok := strings.Cut(part, "=")
		if !ok || tool == "" || scopes == "" {
			return nil, fmt.Errorf("--tool-scopes: %q is not tool=scope[,scope]", part)
		}
		m[tool] = append(m[tool], strings.Split(scopes, ",")...)
	}
	return m, nil
}
