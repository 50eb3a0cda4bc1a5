package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	// Version counts the updates of the state kept (see Update).
	Version int64 `json:"version,omitempty"`
}

// ErrSessionNotFound is what a SessionStore's Load returns for a session
// it does not keep (or keeps no longer), and Notify for a session that
// is not live.
var ErrSessionNotFound = errors.New("server: no such session")

// ErrSessionChanged is what a SessionStore's Update returns when the
// state it keeps is no longer at the version the update was made from.
var ErrSessionChanged = errors.New("server: the session's state changed since it was read")

// SessionStore keeps the state of the sessions a client reaches by id
// alone (Streamable HTTP's; a session that lives on one stream or socket
// ends with it). The server saves a state when it changes (initialize,
// the log level, subscriptions, the requests it waits on) and while the
// session is in use (Expires), deletes it when the client ends the
// session or lets it expire, keeps it when the process shuts down, and
// serves a session it does not hold from the state it finds. The default
// keeps it in the process; one several processes share lets any of them
// serve any session. Implementations are safe for concurrent use, and
// may drop a state once its Expires has passed.
//
// A client whose requests go to several processes has a copy of its
// session in each. With a store that relays (below), a copy that saves a
// change tells the others, which load the state again; with one that
// compares versions (Update), two copies that change the state at once
// both keep their change. Without both, route a session to one process
// while it lives (sticky sessions), and let another take it over when it
// is gone.
type SessionStore interface {
	Create(ctx context.Context, s SessionState) error // fails when s.ID is kept already
	Load(ctx context.Context, id string) (SessionState, error)
	// Update replaces the state of s.ID, when the state kept is at
	// s.Version, with s at s.Version+1; ErrSessionChanged when it is at
	// another (another process changed it: the server makes its changes
	// again on the state it loads, so that neither is lost);
	// ErrSessionNotFound when it is not kept (the session ended
	// elsewhere, and ends here too). A store that does not compare
	// versions keeps the last update.
	Update(ctx context.Context, s SessionState) error
	Delete(ctx context.Context, id string) error // a session not kept is no error
}

// WithSessionStore keeps the sessions' state in st (default, and with
// nil: in the process).
//
// A store that several processes share may also relay a client's
// messages between them, with the methods
//
//	Publish(ctx context.Context, session string, msg []byte) error
//	Subscribe(deliver func(session string, msg []byte)) (stop func())
//
// Then a response to a request another process sent (sampling,
// elicitation, roots) and a cancellation of a call another process runs
// reach the process that waits for them, whichever one the client sent
// them to: Publish hands a message to every other process, Subscribe makes
// deliver receive what the others publish. The ids of the requests each
// process sends to clients then carry a number of the process's own, so
// that copies of a session in two processes never send one id twice.
//
// It may also count the sessions a client holds in all the processes,
//
//	ClientSessions(ctx context.Context, client string) (int, error)
//
// so that a client's share of sessions (WithLimits) holds for the whole
// service; the client is SessionState.Client. redisstore.NewSessions is
// such a store.
func WithSessionStore(st SessionStore) Option {
	if st == nil {
		return optionFunc(func(*config) {})
	}
	var store core.SessionStore = sessionStore{st}
	if c, ok := st.(core.ClientCounter); ok {
		store = countingStore{sessionStore{st}, c}
	}
	opts := []core.Option{core.WithSessionStore(store)}
	if r, ok := st.(core.Relay); ok {
		opts = append(opts, core.WithRelay(r))
	}
	return optionFunc(func(c *config) { c.core = append(c.core, opts...) })
}

// countingStore is a sessionStore that counts a client's sessions.
type countingStore struct {
	sessionStore
	core.ClientCounter
}

// sessionStore gives the core a SessionStore in its own types.
type sessionStore struct{ s SessionStore }

func (a sessionStore) Create(ctx context.Context, s core.SessionState) error {
	return a.s.Create(ctx, SessionState(s))
}

func (a sessionStore) Load(ctx context.Context, id string) (core.SessionState, error) {
	s, err := a.s.Load(ctx, id)
	return core.SessionState(s), coreErr(err)
}

func (a sessionStore) Update(ctx context.Context, s core.SessionState) error {
	return coreErr(a.s.Update(ctx, SessionState(s)))
}

// coreErr is err in the core's words.
func coreErr(err error) error {
	switch {
	case errors.Is(err, ErrSessionNotFound):
		return fmt.Errorf("%w (%w)", core.ErrSessionNotFound, err)
	case errors.Is(err, ErrSessionChanged):
		return fmt.Errorf("%w (%w)", core.ErrSessionChanged, err)
	}
	return err
}

func (a sessionStore) Delete(ctx context.Context, id string) error { return a.s.Delete(ctx, id) }
