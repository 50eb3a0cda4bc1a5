package generated_test

import (
	"encoding/json"
	"io/fs"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/schema"
)

// TestRequiredMembersMatchTheReference: the generated check of required
// members (Spec.Requires) says what santhosh-tekuri v6's compiled schemas
// say, for every definition of every revision and every member name that
// any of the revision's files declares or requires.
func TestRequiredMembersMatchTheReference(t *testing.T) {
	for _, spec := range generated.Specs {
		v, err := spec.Validator()
		if err != nil {
			t.Fatal(err)
		}
		names := memberNames(t, spec.Revision)
		checked, required := 0, 0
		for _, def := range v.Definitions() {
			for p := range names {
				got, want := spec.Requires(def, p), v.Requires(def, p)
				if got != want {
					t.Errorf("%s %s requires %s: table %v, reference %v", spec.Revision, def, p, got, want)
				}
				checked++
				if want {
					required++
				}
			}
		}
		if required == 0 {
			t.Fatalf("%s: %d pairs checked, none required: the check saw nothing", spec.Revision, checked)
		}
	}
}

// memberNames collects every name under "properties" or in "required" in
// the files of a revision.
func memberNames(t *testing.T, rev string) map[string]bool {
	t.Helper()
	files, err := schema.Files(rev)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if props, ok := x["properties"].(map[string]any); ok {
				for p := range props {
					names[p] = true
				}
			}
			if req, ok := x["required"].([]any); ok {
				for _, r := range req {
					if s, ok := r.(string); ok {
						names[s] = true
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, p := range files {
		raw, err := fs.ReadFile(schema.FS, p)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		walk(doc)
	}
	return names
}

// Spec.Method finds a method by binary search: every revision's table is
// sorted by name, each name once.
func TestMethodTablesSorted(t *testing.T) {
	for _, spec := range generated.Specs {
		for i, m := range spec.Methods {
			if i > 0 && spec.Methods[i-1].Name >= m.Name {
				t.Errorf("%s: %q after %q", spec.Revision, m.Name, spec.Methods[i-1].Name)
			}
			if got, ok := spec.Method(m.Name); !ok || got != m {
				t.Errorf("%s: Method(%q) = %v, %v", spec.Revision, m.Name, got.Name, ok)
			}
		}
		if _, ok := spec.Method("no/such/method"); ok {
			t.Errorf("%s: found no/such/method", spec.Revision)
		}
	}
}

// NameParam says, for every method, the member the newest revision that
// has one repeats in Mcp-Name.
func TestNameParamIsTheNewest(t *testing.T) {
	for _, spec := range generated.Specs {
		for _, m := range spec.Methods {
			want := ""
			for i := len(generated.Specs) - 1; i >= 0 && want == ""; i-- {
				if mm, ok := generated.Specs[i].Method(m.Name); ok {
					want = mm.NameParam
				}
			}
			if got := generated.NameParam(m.Name); got != want {
				t.Errorf("NameParam(%q) = %q, want %q", m.Name, got, want)
			}
		}
	}
	if p := generated.NameParam("no/such/method"); p != "" {
		t.Errorf("NameParam of an unknown method: %q", p)
	}
}
