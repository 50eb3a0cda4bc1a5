package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/wire"
)

// SessionState is what a session is, apart from the connection that
// streams to it: a plain value that encodes to JSON, so that a
// SessionStore may keep it outside the process and another process may
// serve the session from it.
type SessionState struct {
	ID        string `json:"id"`
	Transport string `json:"transport,omitempty"` // the transport that opened it
	Owner     string `json:"owner,omitempty"`     // the principal that opened it ("" without auth)
	Client    string `json:"client,omitempty"`    // whose quotas it counts against
	Revision  string `json:"revision,omitempty"`  // "" before initialize
	// Initialized: the client sent notifications/initialized.
	Initialized        bool            `json:"initialized,omitempty"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	ClientInfo         json.RawMessage `json:"clientInfo,omitempty"`
	LogLevel           string          `json:"logLevel,omitempty"`
	Subscriptions      []string        `json:"subscriptions,omitempty"` // sorted
	// Pending are the ids of the server's requests the client has not
	// answered yet (sampling, elicitation, roots).
	Pending []wire.ID `json:"pending,omitempty"`
	NextID  int64     `json:"nextId,omitempty"` // the id of the server's last request
	Opened  time.Time `json:"opened"`
	// Expires is when the session ends unless it is used (zero: never).
	Expires time.Time `json:"expires,omitzero"`
}

// ErrSessionNotFound is what a SessionStore's Load returns for a session
// it does not keep (or keeps no longer), and Notify for a session that
// is not live.
var ErrSessionNotFound = errors.New("server: no such session")

// SessionStore keeps the state of sessions: the server saves it when it
// changes (initialize, the log level, subscriptions, the requests it
// waits on), deletes it when the session ends, and serves a session it
// does not hold from the state it finds. The default keeps it in the
// process; one several processes share lets any of them serve any
// session. Implementations are safe for concurrent use.
type SessionStore interface {
	Create(ctx context.Context, s SessionState) error // fails when s.ID is kept already
	Load(ctx context.Context, id string) (SessionState, error)
	Update(ctx context.Context, s SessionState) error // replaces the state of s.ID
	Delete(ctx context.Context, id string) error      // a session not kept is no error
}

// WithSessionStore keeps the sessions' state in st (default: in the
// process).
func WithSessionStore(st SessionStore) Option {
	return coreOption(core.WithSessionStore(sessionStore{st}))
}

// sessionStore gives the core a SessionStore in its own types.
type sessionStore struct{ s SessionStore }

func (a sessionStore) Create(ctx context.Context, s core.SessionState) error {
	return a.s.Create(ctx, SessionState(s))
}

func (a sessionStore) Load(ctx context.Context, id string) (core.SessionState, error) {
	s, err := a.s.Load(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		err = core.ErrSessionNotFound
	}
	return core.SessionState(s), err
}

func (a sessionStore) Update(ctx context.Context, s core.SessionState) error {
	return a.s.Update(ctx, SessionState(s))
}

func (a sessionStore) Delete(ctx context.Context, id string) error { return a.s.Delete(ctx, id) }
