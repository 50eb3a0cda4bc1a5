package schema_test

import (
	"maps"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
)

// generatedCheck holds the generated validators of one revision to the
// reference validator (santhosh-tekuri v6 over the same schemas, format
// asserted, as the server falls back to): an instance they call surely
// valid must be valid, and they must be sure of nearly every valid one,
// or the server would pay for both.
type generatedCheck struct {
	t                  *testing.T
	spec               *protocol.Spec
	ref                *protocol.Validator
	valid, sure, wrong int
	sureEnvelope       int // valid messages the envelope checks are sure of
}

// minSure is the share of the valid cases the generated validators must
// be sure of: they give up only on what takes more than the common case
// (a date-time, a number near its bound, an integer written 1.0).
const minSure = 0.9

func checkGenerated(t *testing.T, rev string) *generatedCheck {
	spec := generated.Lookup(rev)
	if spec == nil {
		t.Fatalf("no generated table for %s", rev)
	}
	ref, err := spec.Validator()
	if err != nil {
		t.Fatal(err)
	}
	return &generatedCheck{t: t, spec: spec, ref: ref}
}

func (g *generatedCheck) check(name string, cs labelled) {
	sure := g.spec.SurelyValid(name, cs.v)
	err := g.ref.Validate(name, cs.v)
	if err == nil {
		g.valid++
		if sure {
			g.sure++
		}
	}
	if sure && err != nil {
		g.wrong++
		if g.wrong <= maxReportsPerRevision {
			g.t.Errorf("%s %s, %s: the generated validator calls it valid, the reference says %v\ninstance: %s", g.spec.Revision, name, cs.label, err, show(cs.v))
		}
	}
	msg, v := asMessage(cs.v)
	if msg != nil && g.spec.SurelyValidMessage(name, msg) {
		if v != nil { // the instance with the "jsonrpc" member the reader asks for
			err = g.ref.Validate(name, v)
		}
		if err == nil {
			g.sureEnvelope++
			return
		}
		g.wrong++
		if g.wrong <= maxReportsPerRevision {
			g.t.Errorf("%s %s, %s: the generated envelope check calls it valid, the reference says %v\ninstance: %s", g.spec.Revision, name, cs.label, err, show(cs.v))
		}
	}
}

// asMessage is an instance as the server reads it (jsonrpc.Parse), when
// it is one JSON-RPC message; nil otherwise. The cases of the revisions
// whose definitions do not name "jsonrpc" often lack it, which the reader
// requires: such an instance is read with "jsonrpc": "2.0" added, and
// returned as v, for the reference to judge too.
func asMessage(instance any) (_ *jsonrpc.Message, v map[string]any) {
	obj, ok := instance.(map[string]any)
	if !ok {
		return nil, nil
	}
	if _, ok := obj["jsonrpc"]; !ok {
		v = maps.Clone(obj)
		v["jsonrpc"] = "2.0"
		obj = v
	}
	b, err := jsontree.Marshal(obj)
	if err != nil {
		return nil, nil
	}
	items, batch, perr := jsonrpc.Parse(b, jsonrpc.Limits{MaxDepth: 10000})
	if perr != nil || batch {
		return nil, nil
	}
	return items[0].Msg, v
}

func (g *generatedCheck) report() {
	share := float64(g.sure) / float64(max(g.valid, 1))
	g.t.Logf("%s: the generated validators are sure of %d of the %d valid cases (%.1f%%), the envelope checks of %d, wrong about %d",
		g.spec.Revision, g.sure, g.valid, 100*share, g.sureEnvelope, g.wrong)
	if g.sureEnvelope == 0 {
		g.t.Errorf("%s: the envelope checks were sure of no valid message", g.spec.Revision)
	}
	if share < minSure {
		g.t.Errorf("%s: the generated validators are sure of %.1f%% of the valid cases, want at least %.0f%%", g.spec.Revision, 100*share, 100*minSure)
	}
}
