package chat

import (
	"context"
	"errors"

	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/wire"
)

// Access is what a call does with conversations.
type Access int

const (
	// ReadConversations shows a conversation, or that it exists: its
	// turns, its title, a search snippet, its id in a completion or a list.
	ReadConversations Access = iota
	// WriteConversations creates a conversation or adds turns to one.
	WriteConversations
)

func (a Access) String() string {
	if a == WriteConversations {
		return "write conversations"
	}
	return "read conversations"
}

// WithConversationAccess declares, once, who may read and write
// conversations: check is asked before every read and every write of the
// conversation store, whichever entry point leads there (the tools,
// resources/read and resources/list, subscriptions, the
// summarize_conversation prompt, the completion of conversation ids, search
// snippets). A non-nil error is the call's answer as it is (a *wire.Error
// keeps its code: auth.RequireScopes gives -32003). Per-tool checks
// (WithAuthorize) come on top of it.
func WithConversationAccess(check func(ctx context.Context, access Access) error) Option {
	return func(a *App) { a.access = check }
}

// allowed asks the access check, when there is one.
func (a *App) allowed(ctx context.Context, access Access) error {
	if a.access == nil {
		return nil
	}
	return a.access(ctx, access)
}

// guardedStore is the App's only way to its conversations: every method
// asks the access check first, so that no new entry point can forget it.
type guardedStore struct {
	store.Store
	app *App
}

func (g guardedStore) Create(ctx context.Context, user, id, title string, msgs ...store.Message) (*store.Conversation, error) {
	if err := g.app.allowed(ctx, WriteConversations); err != nil {
		return nil, err
	}
	return g.Store.Create(ctx, user, id, title, msgs...)
}

func (g guardedStore) Append(ctx context.Context, user, id string, msgs ...store.Message) (*store.Conversation, error) {
	if err := g.app.allowed(ctx, WriteConversations); err != nil {
		return nil, err
	}
	return g.Store.Append(ctx, user, id, msgs...)
}

func (g guardedStore) Get(ctx context.Context, user, id string) (*store.Conversation, error) {
	if err := g.app.allowed(ctx, ReadConversations); err != nil {
		return nil, err
	}
	return g.Store.Get(ctx, user, id)
}

func (g guardedStore) List(ctx context.Context, user string, opts store.ListOptions) ([]*store.Conversation, bool, error) {
	if err := g.app.allowed(ctx, ReadConversations); err != nil {
		return nil, false, err
	}
	return g.Store.List(ctx, user, opts)
}

func (g guardedStore) Search(ctx context.Context, user, query string, limit int) ([]*store.SearchHit, error) {
	if err := g.app.allowed(ctx, ReadConversations); err != nil {
		return nil, err
	}
	return g.Store.Search(ctx, user, query, limit)
}

func (g guardedStore) Delete(ctx context.Context, user, id string) error {
	if err := g.app.allowed(ctx, WriteConversations); err != nil {
		return err
	}
	return g.Store.Delete(ctx, user, id)
}

// refusal reports whether err is a refusal to be answered as it is (an
// access check's *wire.Error) rather than a store failure.
func refusal(err error) bool {
	var we *wire.Error
	return errors.As(err, &we)
}
