package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"sort"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/internal/protocol"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// testRev is the revision the fake client speaks: the conformance suite's.
const testRev = "2025-11-25"

// newPeer returns a client like the conformance suite's: it declared
// sampling and elicitation, wants every log level, speaks testRev.
func newPeer(t testing.TB) *peertest.Peer {
	p := peertest.New(t)
	p.Rev = testRev
	p.Caps = &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}, Elicitation: &mcp.ClientCapabilitiesElicitation{}}
	return p
}

// streamClosingPeer is a fake client whose transport can close the stream.
type streamClosingPeer struct {
	*peertest.Peer
	closed int
}

func (p *streamClosingPeer) CloseStream() { p.closed++ }

func reparse(t testing.TB, v any) any { return peertest.Reparse(t, v) }

func mustJSON(v any) string { return peertest.MustJSON(v) }

// serverFill does what the server does to a result before it sends it:
// initialize's protocolVersion, discover's supportedVersions, and the
// resultType 2026-07-28 requires of every result.
func serverFill(method string, spec *protocol.Spec, tree map[string]any) {
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

// statelessRev is the revision whose clients answer a method's questions by
// retrying the request (input-required results).
const statelessRev = "2026-07-28"

// asked is one input a method asked for under statelessRev: its key, and its
// method and params as they stand in the input-required result.
type asked struct {
	key, Method string
	Params      map[string]any
}

// askingPeer is a client of statelessRev as a method sees it: a peer.Asker,
// as the server's stateless peer is. It answers the inputs it has answers
// for (JSON results by key), reports the others missing with
// peer.ErrInputRequired, and records every input asked, checking that the
// input-required result listing them is valid.
type askingPeer struct {
	*peertest.Peer
	answers map[string]string

	amu     sync.Mutex
	asks    [][]asked // the inputs of each Ask, sorted by key
	missing []asked   // the inputs asked without an answer, in order
	calls   int
}

var _ peer.Asker = (*askingPeer)(nil)

// inputResults are the definitions of the answers to the input requests of
// statelessRev, which has them as inputs, not as methods.
var inputResults = map[string]string{
	mcp.MethodElicit:        "ElicitResult",
	mcp.MethodCreateMessage: "CreateMessageResult",
	mcp.MethodListRoots:     "ListRootsResult",
}

// newAskingPeer returns a statelessRev client that declared caps and has
// the answers so far.
func newAskingPeer(t testing.TB, caps *mcp.ClientCapabilities, answers map[string]string) *askingPeer {
	p := newPeer(t)
	p.Rev, p.Caps, p.Session, p.Level = statelessRev, caps, "", ""
	return &askingPeer{Peer: p, answers: answers}
}

func (p *askingPeer) Ctx() context.Context { return peer.With(context.Background(), p) }

func (p *askingPeer) Ask(ctx context.Context, inputs map[string]peer.Input) (map[string]wire.Encoder, error) {
	p.T.Helper()
	spec := generated.Lookup(statelessRev)
	keys := make([]string, 0, len(inputs))
	for k := range inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	reqs := map[string]any{}
	round := make([]asked, 0, len(keys))
	for _, k := range keys {
		in := inputs[k]
		if _, ok := inputResults[in.Method]; !ok {
			p.T.Fatalf("input %q: %s is not an input request of %s", k, in.Method, statelessRev)
		}
		params := obj(p.T, reparse(p.T, spec.Project(in.Params)))
		reqs[k] = map[string]any{"method": in.Method, "params": params}
		round = append(round, asked{k, in.Method, params})
	}
	irr := reparse(p.T, map[string]any{"resultType": "input_required", "inputRequests": reqs, "requestState": "opaque"})
	if err := spec.Validate("InputRequiredResult", irr); err != nil {
		p.T.Fatalf("the inputs make an invalid input-required result: %v\n%s", err, mustJSON(irr))
	}
	p.amu.Lock()
	defer p.amu.Unlock()
	p.asks = append(p.asks, round)
	out := make(map[string]wire.Encoder, len(inputs))
	missing := false
	for _, a := range round {
		body, ok := p.answers[a.key]
		if !ok {
			p.missing = append(p.missing, a)
			missing = true
			continue
		}
		v, err := jsontree.Parse([]byte(body))
		if err != nil {
			p.T.Fatalf("fake client: bad answer %s: %v", body, err)
		}
		if err := spec.Validate(inputResults[a.Method], v); err != nil {
			p.T.Fatalf("fake client: answer %s to %s is invalid: %v", body, a.Method, err)
		}
		r, err := mcp.DecodeResult(a.Method, v, spec.Index)
		if err != nil {
			p.T.Fatalf("fake client: answer %s to %s: %v", body, a.Method, err)
		}
		out[a.key] = r
	}
	if missing {
		return out, peer.ErrInputRequired
	}
	return out, nil
}

// Call asks one input, as the server's stateless peer does.
func (p *askingPeer) Call(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error) {
	p.amu.Lock()
	p.calls++
	key := fmt.Sprintf("%s#%d", method, p.calls)
	p.amu.Unlock()
	r, err := p.Ask(ctx, map[string]peer.Input{key: {Method: method, Params: params}})
	if err != nil {
		return nil, err
	}
	return r[key], nil
}

func (p *askingPeer) missingInputs() []asked {
	p.amu.Lock()
	defer p.amu.Unlock()
	return append([]asked(nil), p.missing...)
}

// mrtr drives a method as a statelessRev client does: it calls it, and
// while the method waits for input (peer.ErrInputRequired, and no result),
// answers every input it asked for with respond and calls again with all
// the answers so far. It returns the final result and error, and the peer
// of each call.
func mrtr[R any](t testing.TB, caps *mcp.ClientCapabilities, respond func(a asked) string, call func(ctx context.Context) (R, error)) (R, error, []*askingPeer) {
	t.Helper()
	answers := map[string]string{}
	var peers []*askingPeer
	for range 10 {
		p := newAskingPeer(t, caps, maps.Clone(answers))
		peers = append(peers, p)
		r, err := call(p.Ctx())
		missing := p.missingInputs()
		if len(missing) == 0 {
			if errors.Is(err, peer.ErrInputRequired) {
				t.Fatalf("round %d: %v, but nothing is missing", len(peers), err)
			}
			return r, err, peers
		}
		if !errors.Is(err, peer.ErrInputRequired) {
			t.Fatalf("round %d: inputs %v are missing, but the method returned %v, want peer.ErrInputRequired", len(peers), missing, err)
		}
		if v := reflect.ValueOf(r); v.IsValid() && !v.IsNil() {
			t.Errorf("round %d: the method returned a result while it waits for input", len(peers))
		}
		for _, a := range missing {
			answers[a.key] = respond(a)
		}
	}
	t.Fatal("the method never completes")
	var zero R
	return zero, nil, peers
}

// rounds lists the inputs each call of an mrtr run waited for: what each
// input-required result lists, as JSON with sorted keys.
func rounds(peers []*askingPeer) []string {
	var out []string
	for _, p := range peers {
		m := p.missingInputs()
		if len(m) == 0 {
			continue
		}
		reqs := map[string]any{}
		for _, a := range m {
			reqs[a.key] = map[string]any{"method": a.Method, "params": a.Params}
		}
		out = append(out, mustJSON(reqs))
	}
	return out
}

// canon rewrites a JSON text with sorted keys and no spaces.
func canon(t testing.TB, s string) string {
	t.Helper()
	v, err := jsontree.Parse([]byte(s))
	if err != nil {
		t.Fatalf("canon %s: %v", s, err)
	}
	return mustJSON(v)
}
