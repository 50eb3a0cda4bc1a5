package core

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Caller is who a message comes from, as the transport that received it
// knows: the key that sessions are bound to, the key that quotas are
// counted under, and when the caller's credentials end.
type Caller struct {
	// Owner is the authenticated principal (auth.Principal.Owner), "" when
	// the transport has no authentication (stdio, a loopback server
	// without --auth). A session answers only to the owner that opened it.
	Owner string
	// Key is what per-client quotas count: Owner when there is one, the
	// client's address otherwise. "" is exempt from per-client quotas.
	Key string
	// Expires is when the caller's credentials end (the token's exp); a
	// long-lived stream or socket opened by the caller ends then. Zero:
	// never.
	Expires time.Time
}

// Expiry returns a channel that fires when the caller's credentials end
// (nil, which never fires, when they do not) and a function that stops
// it: a stream held open for the caller waits on it too.
func (c Caller) Expiry() (<-chan time.Time, func()) {
	if c.Expires.IsZero() {
		return nil, func() {}
	}
	t := time.NewTimer(time.Until(c.Expires))
	return t.C, func() { t.Stop() }
}

type callerKey struct{}

// WithCaller returns a context carrying c, for the transports: the server
// reads it to bind the sessions and count the quotas of stateless
// requests.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller a transport put in ctx (the zero Caller,
// the local user, when none did).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// OpenedBy binds a new session to its caller: requests, responses and
// notifications reach it only through SessionFor with the same owner, and
// it counts against the caller's quotas.
func OpenedBy(c Caller) SessionOption { return func(s *Session) { s.caller = c } }

// clientUsage is what one client key holds now: its sessions (listen
// streams included) and its requests in flight. A session keeps a pointer
// to its client's usage, so that counting a request is one atomic add, not
// a lock of the server.
type clientUsage struct {
	sessions int // under Server.mu
	inflight atomic.Int64
	// idle is set when the client's last session went while calls of it
	// were still in flight (tasks, or calls its end cancelled that have
	// not returned yet): the last of them drops the client's entry.
	idle atomic.Bool
	// leave gives back a call in flight of one of the client's sessions:
	// made once, with the client's first session (under Server.mu,
	// before the session is served), so that a call's quota check
	// allocates nothing and takes no lock.
	leave func()
}

// enter counts a request in flight, unless the client is at max.
func (u *clientUsage) enter(max int) bool {
	if u.inflight.Add(1) > int64(max) {
		u.inflight.Add(-1)
		return false
	}
	return true
}

// ErrQuota is what errors.Is finds in the error of NewSession over the
// caller's share of the sessions; transports answer it with 429 and
// Retry-After (ErrTooManySessions, the cap of all clients, with 503).
var ErrQuota = errors.New("server: over the client's quota")

// reserveSessionLocked counts a new session (or listen stream) of key against
// the global cap and key's share, and returns key's usage (nil for "").
// Called with s.mu held.
func (s *Server) reserveSessionLocked(key string, open int) (*clientUsage, error) {
	if s.cfg.maxSessions > 0 && open >= s.cfg.maxSessions {
		return nil, ErrTooManySessions
	}
	if key == "" {
		return nil, nil
	}
	u := s.usageLocked(key)
	if max := s.cfg.maxClientSessions; max > 0 && u.sessions >= max {
		s.dropIdleClientLocked(key, u)
		return nil, fmt.Errorf("%w: this client already has %d sessions open", ErrQuota, max)
	}
	u.sessions++
	u.idle.Store(false)
	if u.leave == nil {
		u.leave = func() {
			if u.inflight.Add(-1) == 0 && u.idle.Load() {
				s.mu.Lock()
				s.dropIdleClientLocked(key, u)
				s.mu.Unlock()
			}
		}
	}
	return u, nil
}

func (s *Server) usageLocked(key string) *clientUsage {
	u := s.clients[key]
	if u == nil {
		u = &clientUsage{}
		s.clients[key] = u
	}
	return u
}

// releaseSessionLocked undoes reserveSessionLocked. Called with s.mu held.
func (s *Server) releaseSessionLocked(key string) {
	if key == "" {
		return
	}
	if u := s.clients[key]; u != nil {
		u.sessions--
		if u.sessions <= 0 {
			u.idle.Store(true) // its calls still in flight drop it as they end
		}
		s.dropIdleClientLocked(key, u)
	}
}

func (s *Server) dropIdleClientLocked(key string, u *clientUsage) {
	if u.sessions <= 0 && u.inflight.Load() <= 0 && s.clients[key] == u {
		delete(s.clients, key)
	}
}

// startCall counts a request in flight for the client of u (a session's:
// its usage lives as long as the session) or, when u is nil, of key (a
// request without a session); it fails over the per-client cap. done must
// be called when the request ends.
func (s *Server) startCall(u *clientUsage, key string) (done func(), ok bool) {
	max := s.cfg.maxClientInflight
	if max <= 0 {
		return func() {}, true
	}
	if u != nil {
		if !u.enter(max) {
			return nil, false
		}
		return u.leave, true
	}
	if key == "" {
		return func() {}, true
	}
	s.mu.Lock()
	u = s.usageLocked(key)
	ok = u.enter(max)
	if !ok {
		s.dropIdleClientLocked(key, u)
	}
	s.mu.Unlock()
	if !ok {
		return nil, false
	}
	return func() { // a request without a session: its client may hold nothing after it
		u.inflight.Add(-1)
		s.mu.Lock()
		s.dropIdleClientLocked(key, u)
		s.mu.Unlock()
	}, true
}
