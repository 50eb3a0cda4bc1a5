package core

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Relay carries a client's messages between the processes that serve one
// session (replicas behind a load balancer, sharing a SessionStore): a
// response to a request another process sent, and a cancellation of a
// call another process runs, reach the process that waits for them.
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

// relayOut hands msg, which sess could not place here, to the other
// processes.
func (sess *Session) relayOut(msg *jsonrpc.Message) {
	r := sess.srv.cfg.relay
	if r == nil {
		return
	}
	b, err := jsontree.Marshal(msg.Tree)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), relayTimeout)
	defer cancel()
	if err := r.Publish(ctx, sess.id, b); err != nil {
		sess.srv.log.Warn("relay: a message for another process is lost", "session", sess.id, "err", err)
	}
}

// relayed places a message another process relayed, in the session it
// names, when it is live here; nothing is relayed on from here.
func (s *Server) relayed(session string, raw []byte) {
	s.mu.Lock()
	sess := s.sessions[session]
	s.mu.Unlock()
	if sess == nil {
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
