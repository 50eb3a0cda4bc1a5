// Package chat is the chat application of the MCP docs as an mcp.Handler
// (`mcpstack serve --profile chat`):
//
//   - tools: chat {query, conversation_id?}, conversation_search {query,
//     limit?}, conversation_get {conversation_id};
//   - resources: conversation://{id} (a template; resources/list lists the
//     caller's conversations, resources/read returns one as JSON), with
//     subscriptions (notifications/resources/updated) and list_changed;
//   - prompts: code_review, summarize_conversation, debug_error, with
//     completion of their arguments;
//   - streaming: while the model answers, notifications/progress carries
//     each fragment in its message (when the call has a progress token),
//     and clients that opt in get the content_start / content_delta /
//     content_end events of the docs (see ContentStreamCapability).
//
// The model is an agent.Agent (methods/chat/agent: sampling, openai, echo,
// with fallback); conversations live in a store.Store (methods/chat/store:
// SQLite or PostgreSQL). Every conversation belongs to the user the call
// is made for (WithUser); no method lets a user see or touch another's, and
// another user's conversation is answered exactly like one that does not
// exist.
package chat

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"sync"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/methods/chat/agent"
	"github.com/mcpstack/mcpstack/methods/chat/store"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// LocalUser is the user of calls that carry no identity (stdio, HTTP
// without authentication): a single-user server.
const LocalUser = "local"

// DefaultSystemPrompt is what the model is told before the conversation.
const DefaultSystemPrompt = "You are a helpful assistant answering through the Model Context Protocol. " +
	"Answer clearly and concisely; use Markdown where it helps."

// DefaultHistory is how many earlier messages are sent as context.
const DefaultHistory = 40

// Notifier delivers the notifications that concern sessions other than
// the current call's; the server wiring implements it over
// server.Server.Session(id).Notify (see Example_wiring). Calls must not
// block for long: they happen before the tool's result is returned.
type Notifier interface {
	// ResourceUpdated sends notifications/resources/updated {uri} to each
	// session (sessions subscribed to the resource).
	ResourceUpdated(ctx context.Context, uri string, sessionIDs []string)
	// ResourceListChanged sends notifications/resources/list_changed to
	// each session (the sessions of the user whose list changed).
	ResourceListChanged(ctx context.Context, sessionIDs []string)
}

// App is the chat application's mcp.Handler. It is safe for concurrent
// use by any number of sessions.
type App struct {
	base.Lifecycle

	store     store.Store
	agent     agent.Agent
	log       *slog.Logger
	authorize func(ctx context.Context, tool string) error
	access    func(ctx context.Context, access Access) error
	info      mcp.Implementation
	pager     base.Paginator
	system    string
	// history is the number of earlier messages sent as context.
	history   int
	maxTokens int64

	user      func(ctx context.Context) (string, bool)
	anonymous string

	mu       sync.Mutex
	notifier Notifier
	subs     map[string]map[string]struct{} // session id -> subscribed URIs
	sessions map[string]string              // session id -> its user
}

var _ mcp.Handler = (*App)(nil)

// Option configures an App.
type Option func(*App)

// WithUser sets how the user of a call is found: typically the subject of
// the bearer token (auth.PrincipalFrom(ctx)). When it reports false, the
// call is made by the anonymous user (WithAnonymousUser).
func WithUser(f func(ctx context.Context) (user string, ok bool)) Option {
	return func(a *App) { a.user = f }
}

// WithAnonymousUser names the user of calls without an identity (default
// LocalUser). "" refuses them: every method then answers -32600.
func WithAnonymousUser(name string) Option { return func(a *App) { a.anonymous = name } }

// WithNotifier sets where notifications for other sessions go (see
// SetNotifier for wiring that needs the App first).
func WithNotifier(n Notifier) Option { return func(a *App) { a.notifier = n } }

// WithPageSize sets the page size of the list methods.
func WithPageSize(n int) Option { return func(a *App) { a.pager.PageSize = n } }

// WithServerInfo sets the name and version in initialize and
// server/discover (default "mcpstack-chat", "dev").
func WithServerInfo(name, version string) Option {
	return func(a *App) { a.info.Name, a.info.Version = name, version }
}

// WithSystemPrompt replaces DefaultSystemPrompt ("" sends none).
func WithSystemPrompt(s string) Option { return func(a *App) { a.system = s } }

// WithHistory sets how many earlier messages go to the model as context
// (default DefaultHistory; 0 sends none).
func WithHistory(n int) Option { return func(a *App) { a.history = max(n, 0) } }

// WithMaxTokens caps each answer (0: the provider's default).
func WithMaxTokens(n int64) Option { return func(a *App) { a.maxTokens = n } }

// WithLogger sets the server-side logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(a *App) { a.log = l } }

// WithAuthorize checks each tool call before it runs (per-tool scopes):
// a non-nil error is sent as it is (a *wire.Error keeps its code).
func WithAuthorize(fn func(ctx context.Context, tool string) error) Option {
	return func(a *App) { a.authorize = fn }
}

// New returns the chat application over a store and an agent.
func New(s store.Store, ag agent.Agent, opts ...Option) *App {
	a := &App{
		store:     s,
		agent:     ag,
		log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		info:      mcp.Implementation{Name: "mcpstack-chat", Title: "mcpstack chat", Version: "dev"},
		system:    DefaultSystemPrompt,
		history:   DefaultHistory,
		anonymous: LocalUser,
		subs:      map[string]map[string]struct{}{},
		sessions:  map[string]string{},
	}
	for _, o := range opts {
		o(a)
	}
	a.store = guardedStore{Store: s, app: a}
	return a
}

// SetNotifier sets where notifications for other sessions go, for wiring
// where the server is built after the App.
func (a *App) SetNotifier(n Notifier) {
	a.mu.Lock()
	a.notifier = n
	a.mu.Unlock()
}

// Instructions is what initialize and server/discover tell the client.
const Instructions = "mcpstack chat: `chat` talks to a language model and keeps the conversation " +
	"(pass conversation_id to continue one); `conversation_search` and `conversation_get` find and read " +
	"your conversations, which are also resources (conversation://{id}). Prompts: code_review, " +
	"summarize_conversation, debug_error."

func (a *App) capabilities(ctx context.Context) mcp.ServerCapabilities {
	yes := func() *bool { b := true; return &b }
	c := mcp.ServerCapabilities{
		Tools:       &mcp.ServerCapabilitiesTools{},
		Resources:   &mcp.ServerCapabilitiesResources{Subscribe: yes(), ListChanged: yes()},
		Prompts:     &mcp.ServerCapabilitiesPrompts{},
		Logging:     mcp.JSONObject{},
		Completions: mcp.JSONObject{},
	}
	if canStreamContent(peer.From(ctx)) {
		c.Experimental = map[string]mcp.JSONObject{ContentStreamCapability: contentStreamInfo()}
	}
	return c
}

func (a *App) serverInfo() *mcp.Implementation {
	info := a.info
	return &info
}

// Initialize declares tools, resources (subscribe, listChanged), prompts,
// completions and logging, and the content-stream extension when the
// server can send it. The server fills protocolVersion.
func (a *App) Initialize(ctx context.Context, _ *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	// Learn the session's user now, so that it hears of new conversations
	// (list_changed) before it calls anything. A refused caller is refused
	// later, by the methods that need a user.
	_, _ = a.caller(ctx)
	return &mcp.InitializeResult{Capabilities: a.capabilities(ctx), ServerInfo: *a.serverInfo(), Instructions: Instructions}, nil
}

// Discover (2026-07-28) describes the same server as Initialize; it is the
// same for every user.
func (a *App) Discover(ctx context.Context, _ *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	return &mcp.DiscoverResult{
		Meta:         &mcp.ResultMetaObject{ServerInfo: a.serverInfo()},
		Capabilities: a.capabilities(ctx),
		Instructions: Instructions,
		ResultType:   "complete",
		CacheScope:   "public",
	}, nil
}

// caller returns the user of the call, and remembers which user the
// call's session belongs to (for list_changed).
func (a *App) caller(ctx context.Context) (string, error) {
	user, ok := "", false
	if a.user != nil {
		user, ok = a.user(ctx)
	}
	if !ok || user == "" {
		if a.anonymous == "" {
			return "", &wire.Error{Code: wire.CodeInvalidRequest, Message: "authentication required"}
		}
		user = a.anonymous
	}
	if sid := sessionID(ctx); sid != "" {
		a.mu.Lock()
		a.sessions[sid] = user
		a.mu.Unlock()
	}
	return user, nil
}

func sessionID(ctx context.Context) string {
	if p := peer.From(ctx); p != nil {
		return p.SessionID()
	}
	return ""
}

// EndSession forgets a session that has ended: its subscriptions and its
// user. The server calls it when a session closes.
func (a *App) EndSession(sessionID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.subs, sessionID)
	delete(a.sessions, sessionID)
}

// sessionsOf lists the known sessions of user, sorted.
func (a *App) sessionsOf(user string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for sid, u := range a.sessions {
		if u == user {
			out = append(out, sid)
		}
	}
	slices.Sort(out)
	return out
}

// Subscribers lists, sorted, the sessions subscribed to uri.
func (a *App) Subscribers(uri string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for sid, set := range a.subs {
		if _, ok := set[uri]; ok {
			out = append(out, sid)
		}
	}
	slices.Sort(out)
	return out
}

// changed tells subscribers that a conversation changed, and the user's
// sessions that their list changed when it was created.
func (a *App) changed(ctx context.Context, user, id string, created bool) {
	a.mu.Lock()
	n := a.notifier
	a.mu.Unlock()
	if n == nil {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if created {
		if sids := a.sessionsOf(user); len(sids) > 0 {
			n.ResourceListChanged(ctx, sids)
		}
	}
	if sids := a.Subscribers(URI(id)); len(sids) > 0 {
		n.ResourceUpdated(ctx, URI(id), sids)
	}
}
