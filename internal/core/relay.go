package core

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/sessionid"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Relay carries messages between the processes that serve one service
// (replicas behind a load balancer, sharing a SessionStore): a client's
// response to a request another process sent, and its cancellation of a
// call another process runs, reach the process that waits for them; a
// notification for every session (Broadcast, ResourceUpdated) reaches the
// processes that hold the sessions' streams (it travels with the session
// ""); and a saved session state makes the other processes' copies of the
// session refresh theirs.
// Publish hands a message to every other process; Subscribe makes deliver
// receive what the others publish, until stop. Implementations are safe
// for concurrent use; a message may be lost when the relay is down (the
// request that waited for it ends with its own timeout).
type Relay interface {
	Publish(ctx context.Context, session string, msg []byte) error
	Subscribe(deliver func(session string, msg []byte)) (stop func())
}

// WithRelay carries the messages one process cannot place to the others
// (default: none, for a single process).
func WithRelay(r Relay) Option { return optionFunc(func(c *config) { c.relay = r }) }

// relayTimeout bounds a Publish on a request's path.
const relayTimeout = 2 * time.Second

// startRelay subscribes to what the other processes relay, and draws the
// base of the ids this process gives its requests to clients: copies of
// one session live in several processes, and each numbers its own
// requests, so they number them apart (bits 32 to 51 are the process's;
// the ids stay below 2^53, exact in every JSON parser).
func (s *Server) startRelay() {
	if s.cfg.relay == nil {
		return
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	s.idBase = int64(binary.BigEndian.Uint32(b[:])%(1<<20)+1) << 32
	s.stopRelay = s.cfg.relay.Subscribe(s.relayed)
}

// maxRelayed bounds a client message relayed to the other processes.
const maxRelayed = 1 << 20

// relayOut hands msg, which sess could not place here, to the other
// processes: only what another process may wait for. A session that lives
// on one stream or socket has no copies elsewhere; a response names the
// process whose request it answers in its id (idBase), so one to a
// request of no process, or of this one, goes nowhere.
func (sess *Session) relayOut(msg *jsonrpc.Message) {
	r := sess.srv.cfg.relay
	if r == nil || !sess.durable {
		return
	}
	if msg.Kind == jsonrpc.Response {
		if base := msg.ID.Int() >> 32; !msg.ID.IsInt() || base == 0 || base == sess.srv.idBase>>32 {
			return
		}
	}
	b, err := jsontree.Marshal(msg.Root())
	if err != nil || len(b) > maxRelayed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, sess.id, b); err != nil {
		sess.srv.log.Warn("relay: a message for another process is lost", "session", sessionid.Digest(sess.id), "err", err)
	}
}

// relayed places a message another process relayed, in the session it
// names, when it is live here; nothing is relayed on from here.
func (s *Server) relayed(session string, raw []byte) {
	if session == "" {
		s.fannedOut(raw)
		return
	}
	s.mu.Lock()
	sess := s.sessions[session]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	if string(raw) == stateChanged {
		sess.refresh()
		return
	}
	items, batch, e := jsonrpc.Parse(raw, jsonrpc.Limits{})
	if e != nil || batch || len(items) != 1 || items[0].Msg == nil {
		return
	}
	switch msg := items[0].Msg; {
	case msg.Kind == jsonrpc.Response:
		sess.deliverHere(msg)
	case msg.Kind == jsonrpc.Notification && msg.Method == mcp.MethodCancelled:
		sess.cancelHere(msg)
	}
}

// cancelHere cancels the call a notifications/cancelled names, when it
// runs here; it reports whether it did.
func (sess *Session) cancelHere(msg *jsonrpc.Message) bool {
	params, _ := msg.Params.(map[string]any)
	raw, ok := params["requestId"]
	if !ok {
		return false
	}
	id, err := wire.IDFromValue(raw)
	if err != nil {
		return false
	}
	sess.mu.Lock()
	f := sess.inflight[id]
	sess.mu.Unlock()
	if f == nil {
		return false
	}
	f.cancelledByPeer.Store(true)
	f.cancel()
	return true
}

// relayFanOut hands a notification for every session to the other
// processes: each gives it to the sessions whose stream it holds (a
// session's copies in processes without its stream skip it, so it is
// sent once).
func (s *Server) relayFanOut(method string, params wire.Encoder) {
	r := s.cfg.relay
	if r == nil {
		return
	}
	ev := map[string]any{"method": method}
	if params != nil {
		ev["params"] = params.EncodeValue(wire.AllRevisions)
	}
	b, err := jsontree.Marshal(ev)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, "", b); err != nil {
		s.log.Warn("relay: a notification for the sessions of other processes is lost", "method", method, "err", err)
	}
}

// fannedOut gives a notification another process relayed to the
// sessions here that take it, as Broadcast and ResourceUpdated do, or
// does what another process asked of a task that runs here.
func (s *Server) fannedOut(raw []byte) {
	v, err := jsontree.Parse(raw)
	ev, _ := v.(map[string]any)
	if op, _ := ev["task"].(string); err == nil && op != "" {
		s.taskRelayed(op, ev)
		return
	}
	if session, _ := ev["session"].(string); err == nil && session != "" {
		s.notifyRelayed(session, ev)
		return
	}
	method, _ := ev["method"].(string)
	if err != nil || method == "" {
		return
	}
	var params wire.Encoder
	if p, ok := ev["params"]; ok {
		if params, err = mcp.DecodeParams(method, p, wire.AllRevisions); err != nil {
			s.log.Debug("relay: a notification that does not decode", "method", method, "err", err)
			return
		}
	}
	to := (*Session).Initialized
	if p, ok := params.(*mcp.ResourceUpdatedNotificationParams); ok && method == mcp.MethodResourceUpdated {
		to = subscribedTo(p.URI)
	}
	s.fanOut(context.Background(), method, params, to)
}

// stateChanged is what a process relays when it saved a session's state:
// the other processes' copies of the session refresh theirs.
const stateChanged = "state"

// relayState tells the other processes that session's state changed.
func (s *Server) relayState(session string) {
	r := s.cfg.relay
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, session, []byte(stateChanged)); err != nil {
		s.log.Warn("relay: other processes' copies of a session are not told of its change", "session", sessionid.Digest(session), "err", err)
	}
}

// What one process asks of a task another runs.
const (
	taskCancel = "cancel" // tasks/cancel
	taskAnswer = "answer" // tasks/update: the answers to its input requests
)

// relayTaskWait bounds how long a tasks/cancel relayed to the process
// running the task waits for its record to say it ended, read every
// relayTaskPoll.
const (
	relayTaskWait = 3 * time.Second
	relayTaskPoll = 50 * time.Millisecond
)

// relayTask asks the process that runs task id (of owner) to cancel it or
// take answers; false without a relay or when the relay fails.
func (s *Server) relayTask(op, id, owner string, responses map[string]any) bool {
	r := s.cfg.relay
	if r == nil {
		return false
	}
	ev := map[string]any{"task": op, "id": id, "owner": owner}
	if responses != nil {
		ev["responses"] = responses
	}
	b, err := jsontree.Marshal(ev)
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, "", b); err != nil {
		s.log.Warn("relay: a task operation for another process is lost", "task", id, "op", op, "err", err)
		return false
	}
	return true
}

// taskRelayed does what another process asked of a task that runs here,
// when it is its owner's.
func (s *Server) taskRelayed(op string, ev map[string]any) {
	id, _ := ev["id"].(string)
	owner, _ := ev["owner"].(string)
	s.tasks.mu.Lock()
	t := s.tasks.byID[id]
	s.tasks.mu.Unlock()
	if t == nil || !t.local || t.owner != owner {
		return
	}
	switch op {
	case taskCancel:
		_, _ = s.cancelTask(context.Background(), t.spec, t)
	case taskAnswer:
		responses, _ := ev["responses"].(map[string]any)
		t.answer(responses)
	}
}

// relayToStream hands a message for a session's stream (a notification,
// or a request whose answer the relay brings back), which has no stream
// here, to the other processes: the one that holds the stream sends it.
// It reports whether it did; without a relay, or for a session with no
// copies elsewhere, it does not.
func (s *Server) relayToStream(sess *Session, msg []byte) bool {
	r := s.cfg.relay
	if r == nil || !sess.durable {
		return false
	}
	b, err := jsontree.Marshal(map[string]any{"session": sess.id, "message": json.RawMessage(msg)})
	if err != nil || len(b) > maxRelayed {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, "", b); err != nil {
		s.log.Warn("relay: a message for a session's stream elsewhere is lost", "session", sessionid.Digest(sess.id), "err", err)
		return false
	}
	return true
}

// notifyRelayed sends a message another process relayed for one
// session's stream, when the stream is here.
func (s *Server) notifyRelayed(session string, ev map[string]any) {
	s.mu.Lock()
	sess := s.sessions[session]
	s.mu.Unlock()
	if sess == nil {
		return
	}
	out := sess.stream()
	msg, err := jsontree.Marshal(ev["message"])
	if out == nil || err != nil || len(msg) < 2 {
		return
	}
	s.tap(session, ServerToClient, msg)
	if err := out.Send(msg); err != nil {
		s.log.Debug("relay: a message for a session's stream", "session", session, "err", err)
	}
}
