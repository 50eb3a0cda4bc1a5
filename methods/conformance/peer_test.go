package conformance

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/generated"
	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// testRev is the revision the fake client speaks: the conformance suite's.
const testRev = "2025-11-25"

// sent is one message the fixtures sent to the fake client: its method and
// its params as the client receives them (projected onto testRev, through
// JSON and back).
type sent struct {
	method string
	params map[string]any
}

// fakePeer is the client as a method sees it. It checks every notification
// and request against the schema of testRev, records it, and answers
// requests with answer (a JSON result, decoded as the server would).
type fakePeer struct {
	t        testing.TB
	token    wire.ID
	level    mcp.LoggingLevel
	caps     *mcp.ClientCapabilities
	session  string
	answer   func(method string, params map[string]any) (string, error)
	onNotify func(method string) // called after each notification is recorded

	mu    sync.Mutex
	notes []sent
	calls []sent
}

var _ peer.Peer = (*fakePeer)(nil)

// newPeer returns a client that declared sampling and elicitation, like the
// conformance suite's, and wants every log level.
func newPeer(t testing.TB) *fakePeer {
	return &fakePeer{
		t:       t,
		level:   mcp.LoggingLevelDebug,
		caps:    &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}, Elicitation: &mcp.ClientCapabilitiesElicitation{}},
		session: "session-1",
	}
}

func (p *fakePeer) ctx() context.Context { return peer.With(context.Background(), p) }

func (p *fakePeer) Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	tree := p.message(method, params, true)
	p.mu.Lock()
	p.calls = append(p.calls, sent{method, tree})
	p.mu.Unlock()
	if p.answer == nil {
		return nil, fmt.Errorf("fake client: no answer for %s", method)
	}
	body, err := p.answer(method, tree)
	if err != nil {
		return nil, err
	}
	v, err := wire.Parse([]byte(body))
	if err != nil {
		p.t.Fatalf("fake client: bad answer %s: %v", body, err)
	}
	spec := generated.Lookup(testRev)
	m, _ := spec.Method(method)
	if err := spec.Validate(m.Result, v); err != nil {
		p.t.Fatalf("fake client: answer %s to %s is invalid: %v", body, method, err)
	}
	return mcp.DecodeResult(method, v, spec.Index)
}

func (p *fakePeer) Notify(ctx context.Context, method string, params wire.Encoder) error {
	tree := p.message(method, params, false)
	p.mu.Lock()
	p.notes = append(p.notes, sent{method, tree})
	p.mu.Unlock()
	if p.onNotify != nil {
		p.onNotify(method)
	}
	return nil
}

// message validates the message carrying params against testRev's schema
// and returns the params as the client reads them.
func (p *fakePeer) message(method string, params wire.Encoder, request bool) map[string]any {
	p.t.Helper()
	spec := generated.Lookup(testRev)
	m, ok := spec.Method(method)
	if !ok || !m.ServerToClient {
		p.t.Fatalf("%s is not a server-to-client method of %s", method, testRev)
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": spec.Project(params)}
	if request {
		msg["id"] = 1
	}
	tree := reparse(p.t, msg)
	if err := spec.Validate(m.Request, tree); err != nil {
		p.t.Fatalf("%s sent to the client is invalid in %s: %v\n%s", method, testRev, err, mustJSON(tree))
	}
	return tree.(map[string]any)["params"].(map[string]any)
}

func (p *fakePeer) ProgressToken() wire.ID                      { return p.token }
func (p *fakePeer) LogLevel() mcp.LoggingLevel                  { return p.level }
func (p *fakePeer) ClientCapabilities() *mcp.ClientCapabilities { return p.caps }
func (p *fakePeer) SessionID() string                           { return p.session }

func (p *fakePeer) notifications() []sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sent(nil), p.notes...)
}

func (p *fakePeer) requests() []sent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sent(nil), p.calls...)
}

// streamClosingPeer is a fakePeer whose transport can close the stream.
type streamClosingPeer struct {
	*fakePeer
	closed int
}

func (p *streamClosingPeer) CloseStream() { p.closed++ }

// reparse sends a tree through JSON, as it travels.
func reparse(t testing.TB, v any) any {
	t.Helper()
	b, err := wire.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	out, err := wire.Parse(b)
	if err != nil {
		t.Fatalf("parse %s: %v", b, err)
	}
	return out
}

func mustJSON(v any) string {
	b, err := wire.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// serverFill does what the server does to a result before it sends it:
// initialize's protocolVersion, discover's supportedVersions, and the
// resultType 2026-07-28 requires of every result.
func serverFill(method string, spec *wire.Spec, tree map[string]any) {
	if method == mcp.MethodInitialize {
		tree["protocolVersion"] = spec.Revision
	}
	if method == mcp.MethodDiscover {
		tree["supportedVersions"] = []any{spec.Revision}
	}
	if spec.Revision >= "2026-07-28" {
		if rt, _ := tree["resultType"].(string); rt == "" {
			tree["resultType"] = "complete"
		}
	}
}

// wireResult projects a result onto revision rev, sends it through JSON,
// validates it against the method's result definition there, and returns
// the tree the client receives.
func wireResult(t testing.TB, method string, rev string, r wire.Encoder) map[string]any {
	t.Helper()
	spec := generated.Lookup(rev)
	m, ok := spec.Method(method)
	if !ok {
		t.Fatalf("%s has no method %s", rev, method)
	}
	tree, ok := reparse(t, spec.Project(r)).(map[string]any)
	if !ok {
		t.Fatalf("%s result is not an object", method)
	}
	serverFill(method, spec, tree)
	if err := spec.Validate(m.Result, tree); err != nil {
		t.Fatalf("%s result invalid in %s: %v\n%s", method, rev, err, mustJSON(tree))
	}
	return tree
}

// revisionsOf lists the revisions that have method.
func revisionsOf(method string) []string {
	var out []string
	for _, s := range generated.Specs {
		if _, ok := s.Method(method); ok {
			out = append(out, s.Revision)
		}
	}
	return out
}

// wireError asserts err is a *wire.Error with code, and returns it.
func wireError(t testing.TB, err error, code int) *wire.Error {
	t.Helper()
	we, ok := err.(*wire.Error)
	if !ok {
		t.Fatalf("error %v (%T), want a *wire.Error %d", err, err, code)
	}
	if we.Code != code {
		t.Fatalf("error code %d (%s), want %d", we.Code, we.Message, code)
	}
	return we
}
