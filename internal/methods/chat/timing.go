package chat

import (
	"context"

	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
)

// Timing is told of each call the app makes to its store ("store") and
// its model providers ("model"): it may return a context for the call
// (a child span) and is told how the call ended. observe.(*Observer).
// Dependency is one.
type Timing func(ctx context.Context, kind, operation string) (context.Context, func(error))

// WithTiming times the store's and the model providers' calls with t.
func WithTiming(t Timing) Option { return func(a *App) { a.timing = t } }

// timedStore times every call of a Store.
type timedStore struct {
	store.Store
	t Timing
}

func (s timedStore) Create(ctx context.Context, user, id, title string, msgs ...store.Message) (*store.Conversation, error) {
	ctx, end := s.t(ctx, "store", "create")
	c, err := s.Store.Create(ctx, user, id, title, msgs...)
	end(err)
	return c, err
}

func (s timedStore) Append(ctx context.Context, user, id string, msgs ...store.Message) (*store.Conversation, error) {
	ctx, end := s.t(ctx, "store", "append")
	c, err := s.Store.Append(ctx, user, id, msgs...)
	end(err)
	return c, err
}

func (s timedStore) Get(ctx context.Context, user, id string) (*store.Conversation, error) {
	ctx, end := s.t(ctx, "store", "get")
	c, err := s.Store.Get(ctx, user, id)
	end(err)
	return c, err
}

func (s timedStore) List(ctx context.Context, user string, opts store.ListOptions) ([]*store.Conversation, bool, error) {
	ctx, end := s.t(ctx, "store", "list")
	cs, more, err := s.Store.List(ctx, user, opts)
	end(err)
	return cs, more, err
}

func (s timedStore) Search(ctx context.Context, user, query string, limit int) ([]*store.SearchHit, error) {
	ctx, end := s.t(ctx, "store", "search")
	hits, err := s.Store.Search(ctx, user, query, limit)
	end(err)
	return hits, err
}

func (s timedStore) Delete(ctx context.Context, user, id string) error {
	ctx, end := s.t(ctx, "store", "delete")
	err := s.Store.Delete(ctx, user, id)
	end(err)
	return err
}

// timedAgent times every answer of an Agent.
type timedAgent struct {
	agent.Agent
	t Timing
}

func (a timedAgent) Generate(ctx context.Context, req *agent.Request, onDelta agent.DeltaFunc) (*agent.Response, error) {
	ctx, end := a.t(ctx, "model", a.Name())
	r, err := a.Agent.Generate(ctx, req, onDelta)
	end(err)
	return r, err
}
