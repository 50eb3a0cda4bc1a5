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
// The app is built on the registration layer (package app): tools with
// typed arguments validated against their schemas, the template, prompts
// and completions are registrations; what is per user (the list of
// conversations, subscriptions to one's own conversations, the sessions
// that hear of a new one) is written here.
//
// The model is an agent.Agent (internal/methods/chat/agent: sampling, openai, echo,
// with fallback); conversations live in a store.Store (internal/methods/chat/store:
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

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
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

// Notifier tells a user's sessions that their list of conversations
// changed (notifications/resources/list_changed): the list is per user, so
// it is not a broadcast. Attach sets one that notifies each session on the
// server; WithNotifier sets another. Calls must not block for long: they
// happen before the tool's result is returned. Updates of a conversation
// reach the sessions subscribed to it through the server core.
type Notifier interface {
	ResourceListChanged(ctx context.Context, sessionIDs []string)
}

// App is the chat application's mcp.Handler. It is safe for concurrent
// use by any number of sessions. Serve it with server.New, which calls its
// Attach.
type App struct {
	*layer       // the registration layer; unexported, so that nobody serves it without the overrides below
	layerHandler // the layer's methods, some overridden below; unexported for the same reason

	store     store.Store
	agent     agent.Agent
	log       *slog.Logger
	authorize func(ctx context.Context, tool string) error
	access    func(ctx context.Context, access Access) error
	timing    Timing
	info      mcp.Implementation
	pageSize  int
	system    string
	// history is the number of earlier messages sent as context.
	history   int
	maxTokens int64

	user      func(ctx context.Context) (string, bool)
	anonymous string

	mu       sync.Mutex
	notifier Notifier
	sessions map[string]string // session id -> its user
}

// layer is the registration layer under App, and layerHandler its
// methods.
type (
	layer        = app.App
	layerHandler = app.Handler
)

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
// LocalUser). "" refuses them: every call, read, completion and
// subscription then answers -32600 (the lists of tools and prompts, the
// same for everyone, stay open).
func WithAnonymousUser(name string) Option { return func(a *App) { a.anonymous = name } }

// WithNotifier sets where list changes for a user's sessions go (default:
// each session of the server the app is attached to).
func WithNotifier(n Notifier) Option { return func(a *App) { a.notifier = n } }

// WithPageSize sets the page size of the list methods.
func WithPageSize(n int) Option { return func(a *App) { a.pageSize = n } }

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

// Instructions is what initialize and server/discover tell the client.
const Instructions = "mcpstack chat: `chat` talks to a language model and keeps the conversation " +
	"(pass conversation_id to continue one); `conversation_search` and `conversation_get` find and read " +
	"your conversations, which are also resources (conversation://{id}). Prompts: code_review, " +
	"summarize_conversation, debug_error."

// New returns the chat application over a store and an agent.
func New(s store.Store, ag agent.Agent, opts ...Option) *App {
	a := &App{
		store:     s,
		agent:     ag,
		log:       slog.New(slog.NewTextHandler(io.Discard, nil)),
		info:      mcp.Implementation{Name: "mcpstack-chat", Version: "dev"},
		system:    DefaultSystemPrompt,
		history:   DefaultHistory,
		anonymous: LocalUser,
		sessions:  map[string]string{},
	}
	for _, o := range opts {
		o(a)
	}
	if a.timing != nil {
		s, a.agent = timedStore{Store: s, t: a.timing}, timedAgent{Agent: ag, t: a.timing}
	}
	a.store = guardedStore{Store: s, app: a}
	const shared, mine = "public", "private" // the same for every user, or not; neither to be kept
	a.layer = app.New(a.info.Name, a.info.Version,
		app.WithTitle("mcpstack chat"),
		app.WithInstructions(Instructions),
		app.WithPageSize(a.pageSize),
		app.WithCacheHint(mcp.MethodListTools, shared, 0),
		app.WithCacheHint(mcp.MethodListPrompts, shared, 0),
		app.WithCacheHint(mcp.MethodListResourceTemplates, shared, 0),
		app.WithCacheHint(mcp.MethodDiscover, shared, 0),
		app.WithCacheHint(mcp.MethodReadResource, mine, 0),
		app.WithCapabilities(func(ctx context.Context, c *mcp.ServerCapabilities) {
			if canStreamContent(peer.From(ctx)) {
				c.Experimental = map[string]mcp.JSONObject{ContentStreamCapability: contentStreamInfo()}
			}
		}),
		app.WithMiddleware(a.admit),
	)
	a.layerHandler = a.layer.Handler()
	a.addTools()
	a.addResources()
	a.addPrompts()
	return a
}

// admit refuses a call without a user (WithAnonymousUser("")) and a tool
// call the caller may not make (WithAuthorize).
func (a *App) admit(ctx context.Context, call app.Invocation, next func(context.Context) (any, error)) (any, error) {
	if call.Method == mcp.MethodCallTool && a.authorize != nil {
		if err := a.authorize(ctx, call.Name); err != nil {
			return nil, err
		}
	}
	if _, err := a.caller(ctx); err != nil {
		return nil, err
	}
	return next(ctx)
}

// Complete refuses a caller without a user, as every method does, then
// completes (languages, or the caller's own conversation ids).
func (a *App) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	if _, err := a.caller(ctx); err != nil {
		return nil, err
	}
	return a.layerHandler.Complete(ctx, p)
}

// Attach wires the app to the server that serves it: list changes and
// conversation updates through the core (app.Handler's Attach), list_changed to
// a user's sessions when they start a conversation (unless WithNotifier
// gave another way), and the end of sessions (EndSession).
func (a *App) Attach(srv *server.Server) {
	a.layerHandler.Attach(srv)
	srv.OnSessionClosed(a.EndSession)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.notifier == nil {
		a.notifier = sessionNotifier{srv}
	}
}

// sessionNotifier is the Notifier of a server: each session on its own
// stream.
type sessionNotifier struct{ srv *server.Server }

func (n sessionNotifier) ResourceListChanged(ctx context.Context, ids []string) {
	for _, id := range ids {
		if err := n.srv.Notify(ctx, id, mcp.MethodResourceListChanged, &mcp.NotificationParams{}); err != nil {
			core.Of(n.srv).Logger().Debug("chat: list_changed", "session", id, "err", err)
		}
	}
}

// Initialize declares tools, resources (subscribe, listChanged), prompts,
// completions and logging, and the content-stream extension when the
// server can send it. It learns the session's user now, so that the
// session hears of new conversations (list_changed) before it calls
// anything; a refused caller is refused later, by the methods that need a
// user.
func (a *App) Initialize(ctx context.Context, p *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	_, _ = a.caller(ctx)
	return a.layerHandler.Initialize(ctx, p)
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
	if p := peer.From(ctx); p != nil && p.SessionID() != "" {
		a.mu.Lock()
		a.sessions[p.SessionID()] = user
		a.mu.Unlock()
	}
	return user, nil
}

// EndSession forgets a session that has ended (Attach has the server call
// it).
func (a *App) EndSession(sessionID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
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

// changed tells the subscribers of a conversation that it changed, and
// the user's sessions that their list changed when it was created.
func (a *App) changed(ctx context.Context, user, id string, created bool) {
	ctx = context.WithoutCancel(ctx)
	a.mu.Lock()
	n := a.notifier
	a.mu.Unlock()
	if n != nil && created {
		if sids := a.sessionsOf(user); len(sids) > 0 {
			n.ResourceListChanged(ctx, sids)
		}
	}
	a.ResourceUpdated(ctx, URI(id))
}
