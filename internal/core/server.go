// Package core is mcpstack's MCP server core: sessions, lifecycle, the
// validation of every message against the negotiated revision's schema, and
// dispatch to a generated mcp.Handler. Package server is its public face
// (New, options, the store and observer contracts); the transports
// (internal/transport/..., server/stdio) reach the core through Of, frame
// bytes and hand them to it, and know nothing of MCP methods.
package core

import (
	"context"
	"crypto/cipher"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Server serves one mcp.Handler to any number of sessions.
type Server struct {
	handler mcp.Handler
	// flushBy is when Close stops waiting on the session store (unix
	// nanoseconds; 0: not closing): the saves it makes end by then.
	flushBy atomic.Int64
	// taskRunner says which of the handler's tools run as tasks
	// (WithTaskRunner; nil: none do).
	taskRunner TaskSupporter
	cfg        config
	log        *slog.Logger

	// sessionSpecs are the revisions negotiated with initialize, oldest
	// first: the ones whose method table has it.
	sessionSpecs []*protocol.Spec

	// idBase offsets the ids of this process's requests to clients, apart
	// from other processes' (startRelay).
	idBase    int64
	stopRelay func() // ends the relay's subscription, at Close

	keyOnce sync.Once
	aeads   []cipher.AEAD // the first seals requestState; all open it (previous keys)

	extOnce sync.Once
	ext     *protocol.Validator // schema/ext, for extension notifications
	extErr  error

	// sessionStore keeps what the sessions are (SessionState); the map
	// below holds the ones live in this process.
	sessionStore SessionStore

	mu       sync.Mutex
	sessions map[string]*Session
	clients  map[string]*clientUsage // by Caller.Key
	// forgotten are the sessions ended here whose stored state is being
	// deleted, or was a moment ago: a request that misses one in
	// sessions must not restore it from a state it loaded before the
	// delete (restoreFor, admitSession). Each stays until its time
	// (forgetSession).
	forgotten map[string]time.Time
	// forgottenSweep is the size of forgotten at which its expired marks
	// are dropped next: twice what was left at the last sweep.
	forgottenSweep int
	listeners      map[*listener]bool
	// listensStarting are listen streams that took their share of the
	// session cap and have not registered yet (their Subscribe calls run).
	listensStarting int
	closed          bool
	stop            chan struct{}
	workers         *workers // the goroutines calls run on
	wg              sync.WaitGroup

	drainOnce sync.Once
	draining  chan struct{}

	closeHooks []func(session string, everywhere bool) // under mu

	output *outputBudget
	tasks  tasks // 2025-11-25 tasks, by id
}

// ErrTooManySessions is returned by NewSession at the session cap.
var ErrTooManySessions = errors.New("server: too many sessions")

// errStoreUnavailable is NewSession's error when the SessionStore did not
// take the new session's state: the client is told to try again.
var errStoreUnavailable = errors.New("server: the session store cannot be reached")

// ErrClosed is returned by NewSession after Close.
var ErrClosed = errors.New("server: closed")

// New returns a Server for h.
func New(h mcp.Handler, opts ...Option) *Server {
	cfg := defaults()
	for _, o := range opts {
		o.apply(&cfg)
	}
	if !cfg.clientSessionsSet && cfg.maxSessions > 0 {
		cfg.maxClientSessions = max(cfg.maxSessions/10, min(cfg.maxSessions, 10))
	}
	s := &Server{handler: h, cfg: cfg, log: cfg.logger, sessions: map[string]*Session{}, clients: map[string]*clientUsage{}, forgotten: map[string]time.Time{},
		stop: make(chan struct{}), draining: make(chan struct{}), output: newOutputBudget(cfg.outputPerStream, cfg.outputTotal)}
	s.workers = newWorkers()
	s.startRelay()
	if s.sessionStore = cfg.sessions; s.sessionStore == nil {
		s.sessionStore = MemorySessions()
	}
	for _, sp := range generated.Specs {
		if _, ok := sp.Method(mcp.MethodInitialize); ok {
			s.sessionSpecs = append(s.sessionSpecs, sp)
		}
	}
	if cfg.taskRunner != nil {
		s.taskRunner = cfg.taskRunner
		// A session's own tasks end with it; a copy that ends in this
		// process while the session lives on elsewhere (the store says
		// so) leaves them running, for the client to fetch there.
		s.closeHooks = append(s.closeHooks, func(id string, everywhere bool) {
			if everywhere {
				s.dropSessionTasks(id)
			}
		})
	}
	if cfg.idleTimeout > 0 {
		s.wg.Add(1)
		go s.expire()
	}
	return s
}

// Of returns the core of a *server.Server. Package server sets it in its
// init, as gRPC's internal package does, so that the transports reach the
// core while server exports none of it.
var Of func(facade any) *Server

// Logger is the server's logger.
func (s *Server) Logger() *slog.Logger { return s.log }

// sessionRevisions lists the revisions a client can negotiate, oldest first.
func (s *Server) sessionRevisions() []string {
	out := make([]string, len(s.sessionSpecs))
	for i, sp := range s.sessionSpecs {
		out[i] = sp.Revision
	}
	return out
}

// sessionSpec returns the spec of a negotiable revision, or nil.
func (s *Server) sessionSpec(revision string) *protocol.Spec {
	for _, sp := range s.sessionSpecs {
		if sp.Revision == revision {
			return sp
		}
	}
	return nil
}

// negotiate picks the revision for a client that asked for requested: the
// same when supported, otherwise the newest the server has.
func (s *Server) negotiate(requested string) *protocol.Spec {
	if sp := s.sessionSpec(requested); sp != nil {
		return sp
	}
	return s.sessionSpecs[len(s.sessionSpecs)-1]
}

// NewSession opens a session whose messages not related to a request go to
// out (a GET stream, stdout). id "" draws a random one. It fails with
// ErrTooManySessions at the session cap, and with ErrQuota when the caller
// (OpenedBy) has its share of it open already; listen streams count as
// sessions.
func (s *Server) NewSession(id string, out Outbox, opts ...SessionOption) (*Session, error) {
	if id == "" {
		id = newSessionID()
	}
	sess := newSession(s, id, out)
	for _, o := range opts {
		o(sess)
	}
	// A session opened without a stream is reached by its id alone (a
	// Streamable HTTP client's): its state goes to the store, for any
	// process to serve. One opened on a stream ends with it.
	sess.durable = out == nil && !sess.ephemeral
	if sess.durable {
		if err := s.clusterShare(sess.caller.Key); err != nil {
			return nil, err
		}
	}
	if err := s.admitSession(sess); err != nil {
		return nil, err
	}
	if sess.durable {
		sess.saveMu.Lock() // no save before the state it updates exists
		sess.mu.Lock()
		st := sess.stateLocked()
		sess.base = st
		sess.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		err := s.sessionStore.Create(ctx, st)
		sess.saveMu.Unlock()
		if err != nil {
			s.remove(sess)
			s.log.Warn("session state not created", "err", err)
			return nil, fmt.Errorf("%w: %w", errStoreUnavailable, err)
		}
		sess.saved.Store(time.Now().UnixNano())
	}
	return sess, nil
}

// ClientCounter is what a SessionStore that processes share may also do:
// count the live sessions a client holds in all of them, so that a
// client's share of sessions holds for the whole service, not per process.
type ClientCounter interface {
	ClientSessions(ctx context.Context, client string) (int, error)
}

// clusterShare refuses a new session (ErrQuota) to a client that holds
// its share of sessions across the processes that share the store, where
// the store can count them; a store that cannot answer now leaves the
// decision to this process's own count.
func (s *Server) clusterShare(client string) error {
	counter, ok := s.sessionStore.(ClientCounter)
	if max := s.cfg.maxClientSessions; !ok || max <= 0 || client == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	n, err := counter.ClientSessions(ctx, client)
	if err != nil {
		s.log.Warn("sessions of a client not counted across processes", "err", err)
		return nil
	}
	if n >= s.cfg.maxClientSessions {
		return fmt.Errorf("%w: the client holds %d sessions across the service, its share", ErrQuota, n)
	}
	return nil
}

// admitSession lists sess as live in this process, within the session
// caps.
func (s *Server) admitSession(sess *Session) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, ok := s.sessions[sess.id]; ok {
		return fmt.Errorf("server: session %s exists", sess.id)
	}
	if s.forgottenLocked(sess.id) { // its state was loaded before its client ended it
		return fmt.Errorf("server: session %s ended", sess.id)
	}
	u, err := s.reserveSessionLocked(sess.caller.Key, len(s.sessions)+len(s.listeners))
	if err != nil {
		return err
	}
	sess.usage = u
	s.sessions[sess.id] = sess
	return nil
}

// forgetSession keeps id from being restored here until until: the
// session ended, and its stored state is being deleted. Expired marks go
// whenever the marks have doubled since they were last looked at (as
// MemorySessions sweeps), so there are at most twice the sessions ended
// within a mark's time, and a session's end costs no walk of them all.
func (s *Server) forgetSession(id string, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgotten[id] = until
	if len(s.forgotten) < s.forgottenSweep {
		return
	}
	now := time.Now()
	for k, t := range s.forgotten {
		if now.After(t) {
			delete(s.forgotten, k)
		}
	}
	s.forgottenSweep = max(2*len(s.forgotten), 64)
}

// forgottenLocked reports whether id is marked by forgetSession. Called
// with s.mu held.
func (s *Server) forgottenLocked(id string) bool {
	until, ok := s.forgotten[id]
	return ok && time.Now().Before(until)
}

// ephemeralSession returns a session that is not kept: it serves one body
// as if initialize had negotiated revision (a session revision), and is then
// dropped. It is what a transport in stateless mode uses: nothing is
// remembered between requests, so the server cannot send requests to the
// client (sampling, elicitation, roots fail with a clear error), and the log
// level, subscriptions and cancellation of earlier requests do not carry over.
func (s *Server) ephemeralSession(revision string) (*Session, error) {
	spec := s.sessionSpec(revision)
	if spec == nil {
		return nil, fmt.Errorf("server: %q is not a session revision (have %v)", revision, s.sessionRevisions())
	}
	sess := newSession(s, "", nil)
	sess.spec, sess.initialized, sess.ephemeral = spec, true, true
	sess.clientCaps = &mcp.ClientCapabilities{}
	return sess, nil
}

// detachedSession returns a session that is not kept, before initialize:
// a stateless transport answers initialize with it and forgets it.
func (s *Server) detachedSession() *Session { return newSession(s, "", nil) }

// SessionOption sets a property of a new session.
type SessionOption func(*Session)

// Transport names the transport that opened a session, so that another
// transport that learns its id cannot use it (an HTTP+SSE session id is
// visible in its POST URL, for one).
func Transport(name string) SessionOption { return func(s *Session) { s.transport = name } }

// NeverIdle keeps a session however long its client is quiet: one that
// lives as long as its connection, which the client holds for as long as
// it runs the server (stdio's: the idle timeout would end the process of
// a desktop client that called nothing for half an hour).
func NeverIdle() SessionOption { return func(s *Session) { s.neverIdle = true } }

// Session returns a live session by id, whoever it belongs to: for the
// server's own wiring (notifications a handler sends other sessions).
// Transports use SessionFor.
func (s *Server) Session(id string) (*Session, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sess, ok := s.sessions[id]
	return sess, ok
}

// SessionFor returns the live session id if it was opened over transport
// by owner; a stored session this process does not hold is restored from
// its state (lookup). A session of another transport or another principal is
// reported exactly like one that does not exist, so that a session id
// learnt by someone else (it travels in HTTP+SSE URLs) is of no use to
// them and tells them nothing.
func (s *Server) SessionFor(id, transport, owner string) (*Session, bool) {
	sess, why := s.lookup(context.Background(), id, transport, owner)
	return sess, why == NotRefused
}

// lookup is SessionFor with the reason of a refusal. A session this
// process does not hold is looked up in the SessionStore: one another
// process opened is served here from its state, if this one has room for
// it (RefusedFull, RefusedOverShare otherwise: the session goes on).
func (s *Server) lookup(ctx context.Context, id, transport, owner string) (*Session, Refusal) {
	s.mu.Lock()
	sess, ok := s.sessions[id]
	s.mu.Unlock()
	if !ok && id != "" {
		return s.restoreFor(ctx, id, transport, owner)
	}
	if !ok || sess.transport != transport || sess.caller.Owner != owner {
		return nil, RefusedUnknownSession
	}
	return sess, NotRefused
}

// restoreFor makes the stored session id live here, if it is the
// transport's and the owner's and has not expired.
func (s *Server) restoreFor(ctx context.Context, id, transport, owner string) (*Session, Refusal) {
	s.mu.Lock()
	ending := s.forgottenLocked(id)
	s.mu.Unlock()
	if ending { // ended here a moment ago; its state goes from the store now
		return nil, RefusedUnknownSession
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	st, err := s.sessionStore.Load(ctx, id)
	if errors.Is(err, ErrSessionNotFound) {
		return nil, RefusedUnknownSession
	}
	if err != nil {
		s.log.Warn("session state not loaded", "session", sessionid.Digest(id), "err", err)
		return nil, RefusedUnavailable
	}
	if !st.Expires.IsZero() && time.Now().After(st.Expires) {
		_ = s.sessionStore.Delete(ctx, id)
		return nil, RefusedUnknownSession
	}
	if st.Transport != transport || st.Owner != owner {
		return nil, RefusedUnknownSession
	}
	sess, err := s.restore(st)
	if err != nil {
		s.log.Warn("session state not restored", "session", sessionid.Digest(id), "err", err)
		return nil, RefusedUnknownSession
	}
	if err := s.admitSession(sess); err != nil {
		s.mu.Lock()
		live, ok := s.sessions[id] // restored meanwhile by another request
		s.mu.Unlock()
		switch {
		case ok && live.transport == transport && live.caller.Owner == owner:
			return live, NotRefused
		case errors.Is(err, ErrQuota):
			return nil, RefusedOverShare
		case errors.Is(err, ErrTooManySessions), errors.Is(err, ErrClosed):
			return nil, RefusedFull
		}
		return nil, RefusedUnknownSession
	}
	s.log.Debug("session restored from the store", "session", id, "revision", st.Revision)
	return sess, NotRefused
}

// Sessions returns the live sessions.
func (s *Server) Sessions() []*Session {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		out = append(out, sess)
	}
	return out
}

// SessionCount is the number of live sessions.
func (s *Server) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// ListenCount is the number of open subscriptions/listen streams.
func (s *Server) ListenCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listeners)
}

func (s *Server) remove(sess *Session) {
	s.mu.Lock()
	if s.sessions[sess.id] == sess {
		delete(s.sessions, sess.id)
		s.releaseSessionLocked(sess.caller.Key)
	}
	s.mu.Unlock()
}

// Broadcast sends a notification to every initialized session, on the
// stream for messages not related to a request, and to every
// subscriptions/listen stream whose filter asks for it. Each recipient has
// its own bounded queue, sent in order on its own goroutine, so that a
// client that does not read delays nobody else's notification (and loses
// what does not fit); Broadcast does not wait for them.
func (s *Server) Broadcast(ctx context.Context, method string, params wire.Encoder) {
	s.fanOut(ctx, method, params, (*Session).Initialized)
	s.relayFanOut(method, params)
}

// ResourceUpdated tells the sessions subscribed to uri, and the listen
// streams whose filter names it, that the resource changed
// (notifications/resources/updated), through the same queues as
// Broadcast.
func (s *Server) ResourceUpdated(ctx context.Context, uri string) {
	params := &mcp.ResourceUpdatedNotificationParams{URI: uri}
	s.fanOut(ctx, mcp.MethodResourceUpdated, params, subscribedTo(uri))
	s.relayFanOut(mcp.MethodResourceUpdated, params)
}

// subscribedTo selects the sessions subscribed to uri.
func subscribedTo(uri string) func(*Session) bool {
	return func(sess *Session) bool { return sess.subscribed(uri) }
}

// fanOut queues a notification for the listen streams that ask for it and
// for each session with a stream that to accepts; the notification's
// canonical tree and its coalescing key are computed once for all.
func (s *Server) fanOut(ctx context.Context, method string, params wire.Encoder, to func(*Session) bool) {
	ctx = context.WithoutCancel(ctx)
	var tree any
	if params != nil {
		tree = params.EncodeValue(wire.AllRevisions)
	}
	key := notificationKey(method, tree)
	s.notifyListeners(method, params, tree, key)
	for _, sess := range s.Sessions() {
		if !to(sess) || sess.stream() == nil {
			continue
		}
		queued := sess.broadcasts.push(key, func() {
			if err := sess.Notify(ctx, method, params); err != nil && !errors.Is(err, ErrNoStream) {
				s.log.Debug("broadcast", "session", sess.ID(), "method", method, "err", err)
			}
		})
		if !queued {
			s.log.Debug("broadcast dropped: the client does not read its stream", "session", sess.ID(), "method", method)
		}
	}
}

// notificationKey tells equal notifications apart from different ones;
// tree is the params' canonical tree (nil for none).
func notificationKey(method string, tree any) string {
	if tree == nil {
		return method
	}
	b, err := jsontree.Marshal(tree)
	if err != nil {
		return method + "\x00?" // not coalesced with anything
	}
	return method + "\x00" + string(b)
}

// OnSessionClosed registers fn to be called with the id of every session
// that ends in this process (transports drop what they keep per session:
// streams).
func (s *Server) OnSessionClosed(fn func(session string)) {
	s.OnSessionEnded(func(session string, _ bool) { fn(session) })
}

// OnSessionEnded is OnSessionClosed telling whether the session ended
// everywhere (its client ended it, or it expired), or only here (this
// process closes; another serves the session on): what processes share,
// such as stored stream events, is dropped only in the first case.
func (s *Server) OnSessionEnded(fn func(session string, everywhere bool)) {
	s.mu.Lock()
	s.closeHooks = append(s.closeHooks, fn)
	s.mu.Unlock()
}

func (s *Server) sessionClosed(id string, everywhere bool) {
	s.mu.Lock()
	hooks := append([]func(string, bool){}, s.closeHooks...)
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(id, everywhere)
	}
}

// Drain ends the long-lived streams the server holds open by itself
// (subscriptions/listen), so that an HTTP server can shut down gracefully:
// calls in flight go on.
func (s *Server) Drain() { s.drainOnce.Do(func() { close(s.draining) }) }

// Go runs fn, a call a transport serves, on a goroutine whose stack has
// grown already where one is idle, on a new one otherwise: it never waits.
func (s *Server) Go(fn func()) { s.workers.Go(funcTask(fn)) }

// GoTask is Go for a Task.
func (s *Server) GoTask(t Task) { s.workers.Go(t) }

// Done is closed when the server closes.
func (s *Server) Done() <-chan struct{} { return s.stop }

// Close ends every session (their streams close, calls in flight are
// cancelled) and refuses new ones.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	s.workers.close()
	all := make([]*Session, 0, len(s.sessions))
	for _, sess := range s.sessions {
		all = append(all, sess)
	}
	s.mu.Unlock()
	// A change not saved yet (its save failed, or has not begun) is saved
	// once more, all sessions at once, for storeTimeout at most: the
	// processes that take the sessions over serve them from the store.
	s.flushBy.Store(time.Now().Add(storeTimeout).UnixNano()) // every save from now ends by then
	var flushes sync.WaitGroup
	for _, sess := range all {
		flushes.Go(sess.flush)
	}
	flushes.Wait()
	for _, sess := range all {
		sess.end(false) // the states stay in the store, for the processes that share it
	}
	if s.stopRelay != nil {
		s.stopRelay()
	}
	s.wg.Wait()
}

// expire closes sessions idle for longer than the idle timeout.
func (s *Server) expire() {
	defer s.wg.Done()
	every := s.cfg.idleTimeout / 4
	if every > time.Minute {
		every = time.Minute
	}
	if every < 10*time.Millisecond {
		every = 10 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-t.C:
			for _, sess := range s.Sessions() {
				switch {
				case sess.busy():
					// A request in progress is use: the stored state's
					// expiry moves on with it, or the store would forget
					// the session mid-call.
					sess.touchLater()
				case sess.idleSince(now) > s.cfg.idleTimeout && !sess.neverIdle:
					s.log.Debug("session expired", "session", sess.ID())
					sess.expireIdle()
				}
			}
		}
	}
}

func newSessionID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return hex.EncodeToString(b[:])
}

// storeDeadline is when a save begun now gives up on the session store:
// after storeTimeout, or once Close stops waiting on it.
func (s *Server) storeDeadline() time.Time {
	at := time.Now().Add(storeTimeout)
	if by := s.flushBy.Load(); by != 0 && by < at.UnixNano() {
		return time.Unix(0, by)
	}
	return at
}
