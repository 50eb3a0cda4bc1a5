package schemadiff

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcpstack/mcpstack/internal/sharedtest"
	"github.com/mcpstack/mcpstack/schema"
)

// TestOfficialClean compares every revision with its official schema.json
// from ../shared/mcp-spec; each must be clean.
func TestOfficialClean(t *testing.T) {
	shared := sharedtest.Dir(t)
	for _, rev := range schema.RevisionsIn(schema.FS) {
		t.Run(rev, func(t *testing.T) {
			file := filepath.Join(shared, "mcp-spec", rev, "schema.json")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Skipf("../shared lacks the official schema: %v", err)
			}
			rep, err := Compare(schema.FS, rev, b)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range rep.Differences {
				if d.Status == StatusAccepted {
					t.Logf("%s", FormatDifference(d))
				} else {
					t.Errorf("%s", FormatDifference(d))
				}
			}
			if rep.Definitions == 0 {
				t.Fatal("no definitions compared")
			}
			t.Logf("%s: %d definitions, %d accepted differences", rev, rep.Definitions, rep.Accepted)
		})
	}
}
