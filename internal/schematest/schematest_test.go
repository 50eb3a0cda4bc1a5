package schematest

import (
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/schema"
)

// TestOursCompile compiles every definition of every revision and of the
// extensions: all refs resolve and every file is a valid schema.
func TestOursCompile(t *testing.T) {
	for _, dir := range append(append([]string{}, schema.RevisionsIn(schema.FS)...), schema.Ext) {
		s := MustOurs(t, dir)
		files, err := schema.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Names()) != len(files) {
			t.Errorf("%s: %d definitions, schema.Files has %d", dir, len(s.Names()), len(files))
		}
		for _, name := range s.Names() {
			if _, err := s.Schema(name); err != nil {
				t.Errorf("%s/%s: %v", dir, name, err)
			}
		}
	}
}

func TestOfficial(t *testing.T) {
	doc := `{"$defs":{"A":{"type":"object","required":["b"],"properties":{"b":{"$ref":"#/$defs/B"}}},"B":{"type":"string"},"x/y":{"type":"null"}}}`
	s, err := Official("r", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Names(), ","); got != "A,B,x/y" {
		t.Fatalf("Names = %s", got)
	}
	if err := s.Validate("A", map[string]any{"b": "s"}); err != nil {
		t.Error(err)
	}
	if err := s.Validate("A", map[string]any{"b": 1}); err == nil {
		t.Error("A accepted b=1")
	}
	if err := s.Validate("x/y", nil); err != nil {
		t.Error(err)
	}
	if _, err := s.Schema("C"); err == nil {
		t.Error("Schema(C) succeeded")
	}
	if _, err := Official("r", []byte(`{"type":"object"}`)); err == nil {
		t.Error("Official accepted a schema without definitions")
	}
}

// TestOfficialRevisions compiles every definition of the shared official
// schemas (skipped where ../shared is absent).
func TestOfficialRevisions(t *testing.T) {
	for _, rev := range schema.RevisionsIn(schema.FS) {
		s := MustOfficial(t, rev)
		for _, name := range s.Names() {
			if _, err := s.Schema(name); err != nil {
				t.Errorf("%s/%s: %v", rev, name, err)
			}
		}
	}
}
