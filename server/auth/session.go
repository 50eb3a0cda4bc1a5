package auth

import (
	"net/http"
	"sync"
	"time"
)

// sessionOwners remembers which principal opened each MCP session, so that
// a session id learnt by someone else is useless to them. It lives in the
// middleware because the transport hands out session ids; an entry is
// made when a response without a session in its request carries
// Mcp-Session-Id (initialize), dropped when DELETE succeeds or after ttl
// without use.
type sessionOwners struct {
	mu        sync.Mutex
	owners    map[string]*sessionOwner
	ttl       time.Duration
	now       func() time.Time
	lastSweep time.Time
}

type sessionOwner struct {
	owner string
	used  time.Time
}

func newSessionOwners(ttl time.Duration, now func() time.Time) *sessionOwners {
	return &sessionOwners{owners: map[string]*sessionOwner{}, ttl: ttl, now: now, lastSweep: now()}
}

func (s *sessionOwners) bind(sid, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	s.owners[sid] = &sessionOwner{owner: owner, used: now}
	if s.ttl > 0 && now.Sub(s.lastSweep) > s.ttl/2 {
		for id, o := range s.owners {
			if now.Sub(o.used) > s.ttl {
				delete(s.owners, id)
			}
		}
		s.lastSweep = now
	}
}

// use reports whether owner may use session sid. A session the middleware
// did not see opened (or has forgotten) is refused: it opened every
// session of its endpoint, so the server has closed that one too.
func (s *sessionOwners) use(sid, owner string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.owners[sid]
	if !ok || o.owner != owner {
		return false
	}
	now := s.now()
	if s.ttl > 0 && now.Sub(o.used) > s.ttl {
		delete(s.owners, sid)
		return false
	}
	o.used = now
	return true
}

func (s *sessionOwners) forget(sid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.owners, sid)
}

// bindingWriter sees the status of a response: a response that names a
// new session (initialize) binds it to owner, a successful DELETE forgets
// the request's session. Flush and the rest reach the underlying writer
// through Unwrap (http.ResponseController).
type bindingWriter struct {
	http.ResponseWriter
	owners   *sessionOwners
	owner    string
	sid      string // the request's session, if any
	deleting bool   // the request is a DELETE of sid
	done     bool
}

func (b *bindingWriter) WriteHeader(status int) {
	if !b.done {
		b.done = true
		switch {
		case b.deleting && status >= 200 && status < 300:
			b.owners.forget(b.sid)
		case status == http.StatusOK:
			if sid := b.Header().Get("Mcp-Session-Id"); sid != "" && sid != b.sid {
				b.owners.bind(sid, b.owner)
			}
		}
	}
	b.ResponseWriter.WriteHeader(status)
}

func (b *bindingWriter) Write(p []byte) (int, error) {
	if !b.done {
		b.WriteHeader(http.StatusOK)
	}
	return b.ResponseWriter.Write(p)
}

// FlushError is what http.ResponseController.Flush calls.
func (b *bindingWriter) FlushError() error {
	if !b.done {
		b.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(b.ResponseWriter).Flush()
}

// Flush is for code that asserts http.Flusher.
func (b *bindingWriter) Flush() { _ = b.FlushError() }

// Unwrap is for http.ResponseController.
func (b *bindingWriter) Unwrap() http.ResponseWriter { return b.ResponseWriter }
