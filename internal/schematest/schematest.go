// Package schematest compiles mcpstack's schemas, and the official monolithic
// ones, with github.com/santhosh-tekuri/jsonschema/v6 for use in tests.
//
// Our schema files are registered as resources under BaseURL followed by
// their path in schema.FS ("https://schema.mcpstack.invalid/2025-11-25/request/CallToolRequest.json"),
// so their relative $refs resolve among themselves and nothing is fetched.
package schematest

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpstack/mcpstack/internal/sharedtest"
	"github.com/mcpstack/mcpstack/schema"
)

// BaseURL is the URL prefix under which our schema files are registered.
const BaseURL = "https://schema.mcpstack.invalid/"

// OfficialURL is the URL prefix under which official schemas are registered;
// the revision and "/schema.json" follow.
const OfficialURL = "https://official.mcpstack.invalid/"

// Set is a compiler for the definitions of one schema folder; compiled
// definitions are cached. A Set is not safe for concurrent use.
type Set struct {
	c     *jsonschema.Compiler
	locs  map[string]string // definition name → URL to compile
	cache map[string]*jsonschema.Schema
}

// Ours returns a Set over our schemas in dir of schema.FS: a revision such as
// "2025-11-25", or schema.Ext.
func Ours(dir string) (*Set, error) {
	return OursFS(schema.FS, dir)
}

// OursFS is Ours for a folder of any file system laid out like schema.FS.
func OursFS(fsys fs.FS, dir string) (*Set, error) {
	s := newSet()
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") || path.Base(p) == "differences.json" {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if err := s.c.AddResource(BaseURL+p, doc); err != nil {
			return err
		}
		name := strings.TrimSuffix(path.Base(p), ".json")
		if prev, dup := s.locs[name]; dup {
			return fmt.Errorf("definition %s is defined twice: %s and %s", name, prev, BaseURL+p)
		}
		s.locs[name] = BaseURL + p
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.locs) == 0 {
		return nil, fmt.Errorf("no schemas in %s", dir)
	}
	return s, nil
}

// Official returns a Set over the definitions of an official monolithic
// schema (with "$defs" or "definitions"), registered as
// OfficialURL+rev+"/schema.json".
func Official(rev string, doc []byte) (*Set, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("official %s schema: %w", rev, err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("official %s schema: not an object", rev)
	}
	s := newSet()
	url := OfficialURL + rev + "/schema.json"
	if err := s.c.AddResource(url, v); err != nil {
		return nil, err
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, _ := root[key].(map[string]any)
		for name := range defs {
			s.locs[name] = url + "#/" + key + "/" + escape(name)
		}
	}
	if len(s.locs) == 0 {
		return nil, fmt.Errorf("official %s schema: no $defs or definitions", rev)
	}
	return s, nil
}

func newSet() *Set {
	return &Set{c: jsonschema.NewCompiler(), locs: map[string]string{}, cache: map[string]*jsonschema.Schema{}}
}

// Names returns the definition names, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.locs))
	for n := range s.locs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Has reports whether the set defines name.
func (s *Set) Has(name string) bool {
	_, ok := s.locs[name]
	return ok
}

// Schema compiles (once) and returns the definition name.
func (s *Set) Schema(name string) (*jsonschema.Schema, error) {
	if sch, ok := s.cache[name]; ok {
		return sch, nil
	}
	loc, ok := s.locs[name]
	if !ok {
		return nil, fmt.Errorf("no definition %s", name)
	}
	sch, err := s.c.Compile(loc)
	if err != nil {
		return nil, err
	}
	s.cache[name] = sch
	return sch, nil
}

// Validate validates a decoded JSON value (as from jsonschema.UnmarshalJSON
// or encoding/json) against the definition name.
func (s *Set) Validate(name string, v any) error {
	sch, err := s.Schema(name)
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

// MustOurs is Ours for tests: it fails t on error.
func MustOurs(t testing.TB, dir string) *Set {
	t.Helper()
	s, err := Ours(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// MustOfficial reads <shared>/mcp-spec/<rev>/schema.json and returns its Set.
// It skips t when the shared folder or the file is absent, and fails t when
// the file cannot be compiled.
func MustOfficial(t testing.TB, rev string) *Set {
	t.Helper()
	b, err := os.ReadFile(sharedtest.Path(t, "mcp-spec", rev, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Official(rev, b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
