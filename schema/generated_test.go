package schema_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
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
}

func (g *generatedCheck) report() {
	share := float64(g.sure) / float64(max(g.valid, 1))
	g.t.Logf("%s: the generated validators are sure of %d of the %d valid cases (%.1f%%), wrong about %d",
		g.spec.Revision, g.sure, g.valid, 100*share, g.wrong)
	if share < minSure {
		g.t.Errorf("%s: the generated validators are sure of %.1f%% of the valid cases, want at least %.0f%%", g.spec.Revision, 100*share, 100*minSure)
	}
}
