// Package peertest is the fake client the tests of handwritten methods
// share: a peer.Peer that checks everything sent to it against the schema
// of a protocol revision, records it, and answers requests.
package peertest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Rev is the revision the fake client speaks unless told otherwise.
const Rev = "2025-11-25"

// Sent is a message the server sent to the fake client: its method and
// params as the client reads them (projected, through JSON and back).
type Sent struct {
	Method string
	Params map[string]any
}

// Peer is the client as a method sees it.
type Peer struct {
	T       testing.TB
	Rev     string
	Token   wire.ID
	Level   mcp.LoggingLevel
	Caps    *mcp.ClientCapabilities
	Session string
	// Answer answers requests with a JSON result (nil: every request
	// fails).
	Answer func(method string, params map[string]any) (string, error)
	// OnNotify, when set, is called after each notification is recorded.
	OnNotify func(method string)

	mu    sync.Mutex
	notes []Sent
	calls []Sent
}

var _ peer.Peer = (*Peer)(nil)

// New returns a client that declared sampling, wants every log level and
// is in session "session-1".
func New(t testing.TB) *Peer {
	return &Peer{
		T: t, Rev: Rev, Level: mcp.LoggingLevelDebug, Session: "session-1",
		Caps: &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}},
	}
}

// Ctx is a context carrying the peer.
func (p *Peer) Ctx() context.Context { return peer.With(context.Background(), p) }

func (p *Peer) spec() *protocol.Spec {
	rev := p.Rev
	if rev == "" {
		rev = Rev
	}
	return generated.Lookup(rev)
}

// Call validates and records a request, then answers it with Answer.
func (p *Peer) Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	tree := p.message(method, params, true)
	p.mu.Lock()
	p.calls = append(p.calls, Sent{method, tree})
	p.mu.Unlock()
	if p.Answer == nil {
		return nil, fmt.Errorf("fake client: no answer for %s", method)
	}
	body, err := p.Answer(method, tree)
	if err != nil {
		return nil, err
	}
	v, err := jsontree.Parse([]byte(body))
	if err != nil {
		p.T.Fatalf("fake client: bad answer %s: %v", body, err)
	}
	spec := p.spec()
	m, _ := spec.Method(method)
	if err := spec.Validate(m.Result, v); err != nil {
		p.T.Fatalf("fake client: answer %s to %s is invalid: %v", body, method, err)
	}
	return mcp.DecodeResult(method, v, spec.Index)
}

// Notify validates and records a notification.
func (p *Peer) Notify(ctx context.Context, method string, params wire.Encoder) error {
	tree := p.message(method, params, false)
	p.mu.Lock()
	p.notes = append(p.notes, Sent{method, tree})
	p.mu.Unlock()
	if p.OnNotify != nil {
		p.OnNotify(method)
	}
	return nil
}

func (p *Peer) message(method string, params wire.Encoder, request bool) map[string]any {
	p.T.Helper()
	spec := p.spec()
	m, ok := spec.Method(method)
	if !ok || !m.ServerToClient {
		p.T.Fatalf("%s is not a server-to-client method of %s", method, spec.Revision)
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": spec.Project(params)}
	if request {
		msg["id"] = 1
	}
	tree := Reparse(p.T, msg)
	if err := spec.Validate(m.Request, tree); err != nil {
		p.T.Fatalf("%s sent to the client is invalid in %s: %v\n%s", method, spec.Revision, err, MustJSON(tree))
	}
	return tree.(map[string]any)["params"].(map[string]any)
}

func (p *Peer) ProgressToken() wire.ID                      { return p.Token }
func (p *Peer) LogLevel() mcp.LoggingLevel                  { return p.Level }
func (p *Peer) ClientCapabilities() *mcp.ClientCapabilities { return p.Caps }
func (p *Peer) SessionID() string                           { return p.Session }

// Notifications returns the notifications sent so far.
func (p *Peer) Notifications() []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Sent(nil), p.notes...)
}

// Requests returns the requests sent so far.
func (p *Peer) Requests() []Sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Sent(nil), p.calls...)
}

// Reparse sends a tree through JSON, as it travels.
func Reparse(t testing.TB, v any) any {
	t.Helper()
	b, err := jsontree.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	out, err := jsontree.Parse(b)
	if err != nil {
		t.Fatalf("parse %s: %v", b, err)
	}
	return out
}

// MustJSON renders v for messages.
func MustJSON(v any) string {
	b, err := jsontree.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
