package core

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/mcp"
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
	// Version counts the updates of the state kept: Update replaces a
	// state at s.Version only, so that two copies of a session that
	// change it at once do not lose either change.
	Version int64 `json:"version,omitempty"`
}

// ErrSessionNotFound is what a SessionStore's Load returns for a session
// it does not keep (or keeps no longer).
var ErrSessionNotFound = errors.New("server: no such session")

// ErrSessionChanged is what a SessionStore's Update returns when the
// state kept is no longer at the version the update was made from.
var ErrSessionChanged = errors.New("server: the session's state changed since it was read")

// SessionStore keeps the state of the sessions a client reaches by id
// alone (those opened without a stream: Streamable HTTP's). The default
// keeps it in the process; one shared by several processes (Redis:
// server/redisstore) lets any of them serve any session.
// Implementations are safe for concurrent use, and may drop a state once
// its Expires has passed.
type SessionStore interface {
	Create(ctx context.Context, s SessionState) error // fails when s.ID is kept already
	Load(ctx context.Context, id string) (SessionState, error)
	// Update replaces the state of s.ID, kept at s.Version, with s at
	// s.Version+1; ErrSessionChanged when the state kept is at another
	// version (another copy changed it), ErrSessionNotFound when it is
	// not kept (the session ended elsewhere).
	Update(ctx context.Context, s SessionState) error
	Delete(ctx context.Context, id string) error // a session not kept is no error
}

// MemorySessions is a SessionStore in the process: the default, and a
// store that several servers in one process can share.
// It holds what the servers that use it hold, and the states a server
// that closed left for the others until they expire: it drops expired
// states whenever it has doubled since it last looked.
func MemorySessions() SessionStore {
	return &memorySessions{states: map[string]SessionState{}, sweepAt: 1024}
}

type memorySessions struct {
	mu      sync.Mutex
	states  map[string]SessionState
	sweepAt int
}

func (m *memorySessions) Create(_ context.Context, s SessionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.states[s.ID]; ok {
		return errors.New("server: session " + s.ID + " exists")
	}
	if len(m.states) >= m.sweepAt {
		now := time.Now()
		maps.DeleteFunc(m.states, func(_ string, s SessionState) bool { return !s.Expires.IsZero() && now.After(s.Expires) })
		m.sweepAt = max(1024, 2*len(m.states))
	}
	m.states[s.ID] = s
	return nil
}

func (m *memorySessions) Load(_ context.Context, id string) (SessionState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.states[id]
	if !ok || !s.Expires.IsZero() && time.Now().After(s.Expires) {
		delete(m.states, id)
		return SessionState{}, ErrSessionNotFound
	}
	return s, nil
}

func (m *memorySessions) Update(_ context.Context, s SessionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept, ok := m.states[s.ID]
	if !ok {
		return ErrSessionNotFound
	}
	if kept.Version != s.Version {
		return ErrSessionChanged
	}
	s.Version++
	m.states[s.ID] = s
	return nil
}

func (m *memorySessions) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.states, id)
	return nil
}

// stateLocked is the session's state now; sess.mu is held.
func (sess *Session) stateLocked() SessionState {
	st := SessionState{ID: sess.id, Transport: sess.transport, Owner: sess.caller.Owner, Client: sess.caller.Key,
		Initialized: sess.initialized, ClientCapabilities: sess.capsJSON, ClientInfo: sess.infoJSON,
		LogLevel: string(sess.logLevel), NextID: sess.nextID.Load(), Opened: sess.opened}
	if sess.spec != nil {
		st.Revision = sess.spec.Revision
	}
	if len(sess.subscriptions) > 0 {
		st.Subscriptions = slices.Sorted(maps.Keys(sess.subscriptions))
	}
	if len(sess.pending) > 0 {
		st.Pending = slices.Collect(maps.Keys(sess.pending))
	}
	if d := sess.srv.cfg.idleTimeout; d > 0 {
		st.Expires = time.Now().Add(d)
	}
	return st
}

// storeTimeout bounds a call into the SessionStore on a request's path.
const storeTimeout = 5 * time.Second

// save writes the session's state to the store after a change. Saves are
// serialized (saveMu across the snapshot and the write), so that an older
// state never overwrites a newer one, and none follows end's Delete. A
// store that no longer keeps the session means it ended elsewhere (its
// client deleted it through another process): it ends here too.
//
// The write is the state this copy last read or wrote (base) with what
// the client changed through it since (delta). When another copy changed
// the state meanwhile, a store that compares versions refuses it
// (ErrSessionChanged): the delta is made again on the state the store
// keeps, a few times at most, and this copy takes that state up.
func (sess *Session) save(ctx context.Context) {
	if !sess.durable {
		return
	}
	sess.saveMu.Lock()
	sess.mu.Lock()
	if sess.closed {
		sess.mu.Unlock()
		sess.saveMu.Unlock()
		return
	}
	mine, delta := sess.stateLocked(), sess.delta
	sess.delta = stateDelta{}
	sess.mu.Unlock()
	ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), sess.srv.storeDeadline())
	st := delta.onto(sess.base, mine)
	err := sess.srv.sessionStore.Update(ctx, st)
	conflicted := errors.Is(err, ErrSessionChanged)
	for try := 1; errors.Is(err, ErrSessionChanged) && try <= saveTries; try++ {
		time.Sleep(rand.N(time.Duration(try) * saveBackoff)) // the copies that raced do not race again in step
		var theirs SessionState
		if theirs, err = sess.srv.sessionStore.Load(ctx, sess.id); err == nil {
			st = delta.onto(theirs, mine)
			err = sess.srv.sessionStore.Update(ctx, st)
		}
	}
	cancel()
	sess.mu.Lock()
	switch {
	case err == nil:
		st.Version++
		sess.base = st
		if conflicted { // else the copy serves st already
			sess.takeLocked(st)
		}
	case !errors.Is(err, ErrSessionNotFound):
		sess.delta = delta.then(sess.delta) // for the next save
	}
	sess.mu.Unlock()
	switch {
	case err == nil:
		sess.saved.Store(time.Now().UnixNano())
		sess.retryAt.Store(0)
	case !errors.Is(err, ErrSessionNotFound):
		sess.retryAt.Store(time.Now().Add(saveRetry).UnixNano()) // touch tries again then
	}
	sess.saveMu.Unlock()
	switch {
	case errors.Is(err, ErrSessionNotFound):
		sess.srv.log.Debug("session ended elsewhere", "session", sessionid.Digest(sess.id))
		sess.endedElsewhere.Store(!sess.expiredUnseen())
		sess.end(true) // everywhere: its state is gone
	case errors.Is(err, ErrSessionChanged):
		sess.srv.log.Warn("session state not saved yet: other copies change it faster; the next request tries again", "session", sessionid.Digest(sess.id))
	case err != nil:
		sess.srv.log.Warn("session state not saved", "session", sessionid.Digest(sess.id), "err", err)
	default:
		sess.srv.relayState(sess.id) // the session's copies in other processes take it
	}
}

// flush saves the session's state when a change made here is not saved:
// its save failed, or has not begun. It waits for a save under way first,
// which may fail and leave its change to this one.
func (sess *Session) flush() {
	if !sess.durable {
		return
	}
	sess.saveMu.Lock()
	sess.mu.Lock()
	unsaved := !sess.delta.empty() || sess.retryAt.Load() != 0
	sess.mu.Unlock()
	sess.saveMu.Unlock()
	if unsaved {
		sess.save(context.Background())
	}
}

// saveTries is how many times save makes its changes again on a state
// that other copies changed meanwhile, waiting up to saveBackoff more
// before each, before it leaves them to a request saveRetry later (as it
// does after any other failure).
const (
	saveTries   = 4
	saveBackoff = 5 * time.Millisecond
	saveRetry   = time.Second
)

// stateDelta is what the client changed in a session through this copy
// since the copy last saved its state: what save makes again on the state
// the store keeps when another copy changed that meanwhile. It records
// the changes themselves, not a difference of states, so that a copy
// that never saw a subscription can still drop it, or set a log level
// back, without undoing what another copy did.
type stateDelta struct {
	level       string          // the log level set last ("": none)
	initialized bool            // notifications/initialized came
	subs        map[string]bool // per URI, the last subscribe (true) or unsubscribe
	bytes       int             // of the URIs in subs
	// overflow: subs was full; the copy's own subscriptions are written
	// whole (the last saver's, as a store without versions keeps them).
	overflow bool
}

// maxDeltaURIs and maxDeltaBytes bound the URIs a delta holds while the
// store refuses saves (overflow past them).
const (
	maxDeltaURIs  = 2 * maxSubscriptions
	maxDeltaBytes = 1 << 20
)

// subscribe records a subscribe (on) or an unsubscribe of uri.
func (d *stateDelta) subscribe(uri string, on bool) {
	if _, ok := d.subs[uri]; !ok {
		if len(d.subs) >= maxDeltaURIs || d.bytes+len(uri) > maxDeltaBytes {
			d.overflow = true
			return
		}
		d.bytes += len(uri)
	}
	if d.subs == nil {
		d.subs = map[string]bool{}
	}
	d.subs[uri] = on
}

// empty reports whether d records no change.
func (d stateDelta) empty() bool {
	return d.level == "" && !d.initialized && len(d.subs) == 0 && !d.overflow
}

// then is d followed by the changes of later.
func (d stateDelta) then(later stateDelta) stateDelta {
	if later.level != "" {
		d.level = later.level
	}
	d.initialized = d.initialized || later.initialized
	d.overflow = d.overflow || later.overflow
	for uri, on := range later.subs {
		d.subscribe(uri, on)
	}
	return d
}

// onto is the state to write: st with d's changes made on it, and what is
// this copy's own from mine, its snapshot: the revision it negotiated,
// the requests it waits on (Pending: the last saver's), its numbering
// (the highest) and the expiry it pushes on (the latest).
func (d stateDelta) onto(st, mine SessionState) SessionState {
	if d.overflow {
		st.Subscriptions = mine.Subscriptions
	}
	d.apply(&st)
	if st.Revision == "" && mine.Revision != "" { // negotiated here
		st.Revision, st.ClientCapabilities, st.ClientInfo = mine.Revision, mine.ClientCapabilities, mine.ClientInfo
	}
	st.Pending = mine.Pending
	st.NextID = max(mine.NextID, st.NextID)
	if mine.Expires.After(st.Expires) {
		st.Expires = mine.Expires
	}
	return st
}

// apply makes d's changes on st.
func (d stateDelta) apply(st *SessionState) {
	if d.level != "" {
		st.LogLevel = d.level
	}
	st.Initialized = st.Initialized || d.initialized
	if len(d.subs) == 0 {
		return
	}
	set := map[string]bool{}
	for _, uri := range st.Subscriptions {
		set[uri] = true
	}
	for uri, on := range d.subs {
		if on {
			set[uri] = true
		} else {
			delete(set, uri)
		}
	}
	subs := slices.Sorted(maps.Keys(set))
	st.Subscriptions = subs[:min(len(subs), maxSubscriptions)]
}

// takeLocked makes the copy serve st, with the changes made here and not
// saved yet on top (initialized, the log level, subscriptions); sess.mu
// is held.
func (sess *Session) takeLocked(st SessionState) {
	if sess.spec == nil { // restored before the process that negotiated saved it
		if err := sess.negotiatedLocked(st); err != nil {
			sess.srv.log.Warn("session state: negotiation not taken", "session", sessionid.Digest(sess.id), "err", err)
		}
	}
	sess.delta.apply(&st)
	sess.initialized = sess.initialized || st.Initialized
	sess.logLevel = mcp.LoggingLevel(st.LogLevel)
	if sess.delta.overflow {
		return // the copy's own subscriptions are the ones to write whole
	}
	// Within the places roomFor holds for subscribes being decided, so that
	// the copy never holds more than maxSubscriptions.
	room := max(0, maxSubscriptions-sess.subscribing)
	subs := make(map[string]struct{}, min(len(st.Subscriptions), room))
	for _, uri := range st.Subscriptions[:min(len(st.Subscriptions), room)] {
		subs[uri] = struct{}{}
	}
	sess.subscriptions = subs
}

// refresh takes the state another process saved for the session: what
// the client changed there (initialized, the log level, subscriptions),
// so that this copy serves it alike. The requests this process waits on,
// its own numbering, and the changes made here not saved yet stay as
// they are. The state is loaded off the caller's goroutine (the relay's
// one goroutine delivers every session's messages), by one goroutine at
// a time, which loads again when told of another change meanwhile.
func (sess *Session) refresh() { sess.refreshes.run(sess.srv, sess.reload) }

// coalesced runs a function on a goroutine of its own, one at a time,
// and once more when asked again while it runs: what each run does
// (load or save a session's state) covers every ask before it began.
type coalesced struct{ running, again atomic.Bool }

func (c *coalesced) run(s *Server, f func()) {
	c.again.Store(true) // before the CAS: a goroutine that ends now sees it
	if !c.running.CompareAndSwap(false, true) {
		return
	}
	s.spawn(&c.running, func() {
		for {
			c.again.Store(false)
			f()
			c.running.Store(false)
			if !c.again.Load() || !c.running.CompareAndSwap(false, true) {
				return
			}
		}
	})
}

// spawn runs f on a goroutine that Close waits for, unless the server is
// closed: then it runs nothing and lets go of claim, the flag its caller
// set so that one such goroutine runs at a time.
func (s *Server) spawn(claim *atomic.Bool, f func()) {
	s.mu.Lock() // Add only before Close's Wait
	if s.closed {
		s.mu.Unlock()
		claim.Store(false)
		return
	}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// reload is one load of refresh's, after any save under way.
func (sess *Session) reload() {
	sess.saveMu.Lock()
	sess.mu.Lock()
	closed := sess.closed
	sess.mu.Unlock()
	if closed { // ended here meanwhile: nothing to take, and no end to report
		sess.saveMu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(sess.ctx, storeTimeout) // from now: not the wait for a save
	st, err := sess.srv.sessionStore.Load(ctx, sess.id)
	cancel()
	if err == nil {
		sess.mu.Lock()
		sess.base = st
		sess.takeLocked(st)
		sess.mu.Unlock()
	}
	sess.saveMu.Unlock()
	switch {
	case errors.Is(err, ErrSessionNotFound):
		sess.endedElsewhere.Store(!sess.expiredUnseen())
		sess.end(true) // it ended elsewhere: everywhere, its state is gone
	case err != nil && sess.ctx.Err() == nil: // not a load the session's end cut short
		sess.srv.log.Warn("session state not refreshed; trying again", "session", sessionid.Digest(sess.id), "err", err)
		time.AfterFunc(saveRetry, sess.refresh) // refresh spawns nothing once the server is closed
	}
}

// touch notes that the session is in use; its stored Expires is pushed
// on once a quarter of the idle timeout has passed since the last save,
// so that another process does not take an active session for expired.
func (sess *Session) touch() {
	now := time.Now().UnixNano()
	sess.lastUsed.Store(now)
	every := sess.srv.cfg.idleTimeout / 4
	if every <= 0 {
		every = resaveWithoutIdle // a store may still drop a state unsaved for long
	}
	if !sess.durable {
		return
	}
	if due, failed := sess.retryDue(now); failed && !due || !failed && time.Duration(now-sess.saved.Load()) <= every {
		return
	}
	sess.save(sess.ctx)
}

// retryDue reports whether the last save failed, and if so whether this
// caller is the one to try again now: after a failed save, one caller a
// second tries, not every request, each waiting on a store that is down.
func (sess *Session) retryDue(now int64) (due, failed bool) {
	retry := sess.retryAt.Load()
	if retry == 0 {
		return false, false
	}
	return now >= retry && sess.retryAt.CompareAndSwap(retry, now+int64(saveRetry)), true
}

// expiredUnseen reports whether the state this copy last saved has
// expired: a store that no longer keeps it may have dropped it for that,
// with no process seeing the session end (rather than another process
// ending it, which observed the end).
func (sess *Session) expiredUnseen() bool {
	d := sess.srv.cfg.idleTimeout
	return d > 0 && time.Now().After(time.Unix(0, sess.saved.Load()).Add(d))
}

// touchLater is touch off the caller's goroutine, one at a time per
// session: the idle sweep must not wait on the store for each busy
// session in turn (5 s each while it is down). Close waits for it.
func (sess *Session) touchLater() {
	if !sess.touching.CompareAndSwap(false, true) {
		return
	}
	sess.srv.spawn(&sess.touching, func() {
		defer sess.touching.Store(false)
		sess.touch()
	})
}

// resaveWithoutIdle is how often a session in use is saved without an
// idle timeout: a store keeps a state without an expiry for a while only
// (redisstore: a day after its last save).
const resaveWithoutIdle = time.Hour

// expireIdle ends a session idle here for the idle timeout. Its state is
// dropped only when the store says so too: another process may have served
// it since (a load balancer moved the client), and pushed its Expires on.
func (sess *Session) expireIdle() {
	if !sess.durable {
		sess.end(true)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	st, err := sess.srv.sessionStore.Load(ctx, sess.id)
	// Ended everywhere when its state is gone (a store forgets an expired
	// state) or expired; only here when another process has pushed its
	// expiry on, or the store cannot say.
	sess.end(errors.Is(err, ErrSessionNotFound) || err == nil && !st.Expires.IsZero() && time.Now().After(st.Expires))
}

// restore makes a live session of a state another process saved: it
// serves requests and notifications at once, and streams once a stream
// attaches. The server's requests the other process was waiting on stay
// unanswered here.
func (s *Server) restore(st SessionState) (*Session, error) {
	sess := newSession(s, st.ID, nil)
	sess.durable = true
	sess.saved.Store(time.Now().UnixNano())
	sess.transport, sess.caller = st.Transport, Caller{Owner: st.Owner, Key: st.Client}
	sess.opened = st.Opened
	sess.nextID.Store(st.NextID)
	sess.base = st
	if err := sess.negotiatedLocked(st); err != nil {
		return nil, err
	}
	sess.takeLocked(st) // initialized, the log level, subscriptions
	return sess, nil
}

// negotiatedLocked takes the revision, capabilities and client info st
// holds, when it holds them (the session was initialized); sess.mu is
// held, or the session not yet shared.
func (sess *Session) negotiatedLocked(st SessionState) error {
	if st.Revision == "" {
		return nil
	}
	spec := sess.srv.sessionSpec(st.Revision)
	if spec == nil {
		return errors.New("server: the session negotiated " + st.Revision + ", which this server does not serve") // no id: logged at warn
	}
	caps, info := new(mcp.ClientCapabilities), new(mcp.Implementation)
	if len(st.ClientCapabilities) > 0 {
		if err := caps.UnmarshalJSON(st.ClientCapabilities); err != nil {
			return err
		}
	}
	if len(st.ClientInfo) > 0 {
		if err := info.UnmarshalJSON(st.ClientInfo); err != nil {
			return err
		}
	}
	sess.spec, sess.clientCaps, sess.clientInfo, sess.capsJSON, sess.infoJSON = spec, caps, info, st.ClientCapabilities, st.ClientInfo
	return nil
}
