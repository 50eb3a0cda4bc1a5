package schema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpstack/mcpstack/internal/schematest"
	"github.com/mcpstack/mcpstack/internal/sharedtest"
	"github.com/mcpstack/mcpstack/internal/tools/schemadiff"
	"github.com/mcpstack/mcpstack/schema"
)

// The differential test judges a corpus of instances with our schemas and with
// the official ones, and requires the same verdict for every instance.
//
// For every definition of every revision the corpus holds:
//   - base instances: every official example of the type (where the revision
//     ships examples), plus instances synthesised from the OFFICIAL definition:
//     a minimal one (required properties only, first anyOf branch, consts and
//     enums honoured), three full ones (every property, union branches
//     rotated), and a minimal and a full one per top-level anyOf branch;
//   - mutations of every base: at every object level, each property dropped,
//     given values of the wrong type and bad values of the right type (which
//     break consts, enums, formats and bounds), and an unknown property added;
//     at every array, emptied, an element duplicated, elements of the wrong
//     type; and the whole instance given wrong-type and bad values.

const maxReportsPerRevision = 25

// TestDifferential runs the corpus for every revision.
func TestDifferential(t *testing.T) {
	shared := sharedtest.Dir(t)
	start := time.Now()
	total, totalValid := 0, 0
	for _, rev := range schema.RevisionsIn(schema.FS) {
		t.Run(rev, func(t *testing.T) {
			c := newCorpus(t, shared, rev)
			ours := schematest.MustOurs(t, rev)
			fast := checkGenerated(t, rev)
			c.each = fast.check
			for _, name := range ours.Names() {
				if !c.theirs.Has(name) {
					t.Errorf("%s: our definition %s is not in the official schema", rev, name)
				}
			}
			reports := 0
			st := c.judge(t, ours, c.theirs.Names(), func(name string, cs labelled, errO, errT error) {
				reports++
				if reports <= maxReportsPerRevision {
					t.Errorf("%s %s, %s: ours valid=%v, official valid=%v\ninstance: %s\nours: %v\nofficial: %v",
						rev, name, cs.label, errO == nil, errT == nil, show(cs.v), brief(errO), brief(errT))
				}
			})
			if reports > maxReportsPerRevision {
				t.Errorf("%s: %d verdicts differ in all (%d shown)", rev, reports, maxReportsPerRevision)
			}
			t.Logf("%s: %d definitions, %d cases (%d valid, %d invalid by the official schema), %d official examples used as bases",
				rev, len(c.theirs.Names()), st.cases, st.valid, st.cases-st.valid, st.examples)
			fast.report()
			total += st.cases
			totalValid += st.valid
		})
	}
	t.Logf("all revisions: %d cases (%d valid, %d invalid) in %v", total, totalValid, total-totalValid, time.Since(start).Round(time.Millisecond))
}

// TestDifferentialDetectsEdits plants edits in a copy of one revision and
// checks that the corpus tells each edited definition from the official one.
func TestDifferentialDetectsEdits(t *testing.T) {
	shared := sharedtest.Dir(t)
	tests := []struct {
		rev, file, old, new string
		def                 string // definition whose verdicts must differ
	}{
		{"2025-11-25", "request/CallToolRequest.json", `"params"` + "\n  ]", `"paramz"` + "\n  ]", "CallToolRequest"},
		{"2025-11-25", "content/TextContent.json", `"const": "text"`, `"const": "txt"`, "TextContent"},
		{"2025-11-25", "jsonrpc/RequestId.json", `"integer"`, `"number"`, "RequestId"},
		{"2025-11-25", "shared/LoggingLevel.json", `"alert",`, ``, "LoggingLevel"},
		{"2025-11-25", "shared/ModelPreferences.json", `"maximum": 1,`, ``, "ModelPreferences"},
		{"2025-06-18", "content/ResourceLink.json", `"format": "uri",`, ``, "ResourceLink"},
		{"2026-07-28", "shared/Tool.json", `"name"` + "\n  ]", `"name",` + "\n    \"title\"\n  ]", "Tool"},
	}
	for _, tt := range tests {
		t.Run(tt.def, func(t *testing.T) {
			fsys := fstest.MapFS{}
			err := fs.WalkDir(schema.FS, tt.rev, func(p string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := fs.ReadFile(schema.FS, p)
				fsys[p] = &fstest.MapFile{Data: b}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			p := tt.rev + "/" + tt.file
			old := string(fsys[p].Data)
			if !strings.Contains(old, tt.old) {
				t.Fatalf("%s lacks %q", p, tt.old)
			}
			fsys[p] = &fstest.MapFile{Data: []byte(strings.Replace(old, tt.old, tt.new, 1))}
			ours, err := schematest.OursFS(fsys, tt.rev)
			if err != nil {
				t.Fatal(err)
			}
			c := newCorpus(t, shared, tt.rev)
			differ := 0
			c.judge(t, ours, []string{tt.def}, func(string, labelled, error, error) { differ++ })
			if differ == 0 {
				t.Errorf("edit of %s (%q → %q) changed no verdict", p, tt.old, tt.new)
			}
			t.Logf("%s: %d verdicts differ", tt.def, differ)
		})
	}
}

// corpus holds what the cases of one revision are built from.
type corpus struct {
	rev      string
	theirs   *schematest.Set
	syn      *synth
	examples map[string][]labelled
	each     func(name string, cs labelled) // called with every case, when set
}

func newCorpus(t *testing.T, shared, rev string) *corpus {
	t.Helper()
	officialFile := filepath.Join(shared, "mcp-spec", rev, "schema.json")
	raw, err := os.ReadFile(officialFile)
	if err != nil {
		t.Skipf("../shared lacks %s: %v", officialFile, err)
	}
	raw = withAccepted(t, rev, raw)
	theirs, err := schematest.Official(rev, raw)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return &corpus{
		rev:      rev,
		theirs:   theirs,
		syn:      newSynth(doc.(map[string]any)),
		examples: loadExamples(t, filepath.Join(shared, "mcp-spec", rev, "examples")),
	}
}

// withAccepted is the official schema with the differences that
// schema/<rev>/differences.json accepts applied: our verdicts must then
// agree everywhere else, and the corpus synthesises from what we accept.
func withAccepted(t *testing.T, rev string, raw []byte) []byte {
	t.Helper()
	rep, err := schemadiff.Compare(schema.FS, rev, raw)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	defs, _ := doc["$defs"].(map[string]any)
	if defs == nil {
		defs, _ = doc["definitions"].(map[string]any)
	}
	for _, d := range rep.Differences {
		if d.Status != schemadiff.StatusAccepted {
			continue
		}
		switch d.Kind {
		case "definition", "property", "$ref", "anyOf", "allOf", "oneOf", "items", "additionalProperties":
			t.Fatalf("%s: the accepted difference %s [%s] holds refs or subschemas: teach withAccepted to apply it", rev, d.Path, d.Kind)
		}
		segs := strings.Split(d.Path, "/")
		var at any = defs
		for _, seg := range segs[:len(segs)-1] {
			seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
			switch v := at.(type) {
			case map[string]any:
				at = v[seg]
			case []any:
				i, err := strconv.Atoi(seg)
				if err != nil || i < 0 || i >= len(v) {
					t.Fatalf("%s: the accepted difference %s is not in the official schema", rev, d.Path)
				}
				at = v[i]
			}
		}
		obj, ok := at.(map[string]any)
		if !ok {
			t.Fatalf("%s: the accepted difference %s is not in the official schema", rev, d.Path)
		}
		if d.Ours == nil {
			delete(obj, segs[len(segs)-1])
			continue
		}
		var v any
		if err := json.Unmarshal(d.Ours, &v); err != nil {
			t.Fatal(err)
		}
		obj[segs[len(segs)-1]] = v
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type stats struct{ cases, valid, examples int }

// judge validates every case of the named definitions with ours and the
// official schemas, and calls mismatch for each differing verdict.
func (c *corpus) judge(t *testing.T, ours *schematest.Set, names []string, mismatch func(name string, cs labelled, errOurs, errTheirs error)) stats {
	t.Helper()
	var st stats
	for _, name := range names {
		if !ours.Has(name) {
			t.Errorf("%s: official definition %s has no schema of ours", c.rev, name)
			continue
		}
		o, err := ours.Schema(name)
		if err != nil {
			t.Fatalf("ours %s: %v", name, err)
		}
		th, err := c.theirs.Schema(name)
		if err != nil {
			t.Fatalf("official %s: %v", name, err)
		}
		bases := append([]labelled{}, c.examples[name]...)
		st.examples += len(bases)
		synth := c.syn.instances(name)
		if len(synth) == 0 {
			t.Errorf("%s: could not synthesise an instance of %s", c.rev, name)
		} else if err := th.Validate(synth[0].v); err != nil {
			// The minimal instance must be valid, or the corpus says little
			// about this definition.
			t.Errorf("%s: synthesised minimal %s is invalid against the official schema: %v\n%s", c.rev, name, err, show(synth[0].v))
		}
		bases = append(bases, synth...)

		seen := map[string]bool{}
		for _, b := range bases {
			for _, cs := range append([]labelled{b}, mutations(b)...) {
				key := show(cs.v)
				if seen[key] {
					continue
				}
				seen[key] = true
				st.cases++
				if c.each != nil {
					c.each(name, cs)
				}
				errO, errT := o.Validate(cs.v), th.Validate(cs.v)
				if errT == nil {
					st.valid++
				}
				if (errO == nil) != (errT == nil) {
					mismatch(name, cs, errO, errT)
				}
			}
		}
	}
	return st
}

// TestOfficialExamples checks that every official example validates against
// our definition of its type (and, as a sanity check, the official one).
func TestOfficialExamples(t *testing.T) {
	shared := sharedtest.Dir(t)
	n := 0
	for _, rev := range schema.RevisionsIn(schema.FS) {
		examples := loadExamples(t, filepath.Join(shared, "mcp-spec", rev, "examples"))
		if len(examples) == 0 {
			continue
		}
		ours := schematest.MustOurs(t, rev)
		theirs := schematest.MustOfficial(t, rev)
		for _, name := range sortedKeys(examples) {
			for _, ex := range examples[name] {
				n++
				if !ours.Has(name) {
					t.Errorf("%s: example %s names type %s, which we do not define", rev, ex.label, name)
					continue
				}
				if err := ours.Validate(name, ex.v); err != nil {
					t.Errorf("%s: %s is invalid against our %s: %v", rev, ex.label, name, err)
				}
				if err := theirs.Validate(name, ex.v); err != nil {
					t.Errorf("%s: %s is invalid against the official %s: %v", rev, ex.label, name, err)
				}
			}
		}
	}
	if n == 0 {
		t.Skip("../shared has no official examples for our revisions")
	}
	t.Logf("%d official examples validate against our schemas", n)
}

// labelled is an instance with a description of how it was made.
type labelled struct {
	label string
	v     any
}

// loadExamples reads dir/<TypeName>/*.json, keyed by type name; it returns
// nil when dir does not exist.
func loadExamples(t *testing.T, dir string) map[string][]labelled {
	t.Helper()
	types, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]labelled{}
	for _, typ := range types {
		if !typ.IsDir() {
			continue
		}
		files, err := filepath.Glob(filepath.Join(dir, typ.Name(), "*.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out[typ.Name()] = append(out[typ.Name()], labelled{"example " + typ.Name() + "/" + filepath.Base(f), v})
		}
	}
	return out
}

// synth synthesises instances from the official schema document.
type synth struct {
	root   map[string]any
	rotate int // advances to vary union branches in full instances
}

func newSynth(root map[string]any) *synth { return &synth{root: root} }

// def returns the official definition name.
func (s *synth) def(name string) any {
	for _, key := range []string{"$defs", "definitions"} {
		if defs, ok := s.root[key].(map[string]any); ok {
			if d, ok := defs[name]; ok {
				return d
			}
		}
	}
	return nil
}

// resolve follows a "#/…" ref within the official document.
func (s *synth) resolve(ref string) any {
	ptr, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	var cur any = s.root
	for _, seg := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if seg == "" {
			continue
		}
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[seg]
	}
	return cur
}

// deref follows $refs until a schema without one.
func (s *synth) deref(n any) any {
	for i := 0; i < 32; i++ {
		m, ok := n.(map[string]any)
		if !ok {
			return n
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return n
		}
		n = s.resolve(ref)
	}
	return n
}

// instances returns the bases synthesised for definition name: minimal first.
func (s *synth) instances(name string) []labelled {
	d := s.def(name)
	var out []labelled
	add := func(label string, n any, full bool) {
		if v, ok := s.gen(n, full, 0); ok {
			out = append(out, labelled{label, v})
		}
	}
	add("minimal", d, false)
	if len(out) == 0 {
		return nil
	}
	// Each full instance rotates union branches further, so the three
	// differ where the definition nests unions.
	add("full", d, true)
	add("full, variant 2", d, true)
	add("full, variant 3", d, true)
	if m, ok := s.deref(d).(map[string]any); ok {
		for _, kw := range []string{"anyOf", "oneOf"} {
			branches, _ := m[kw].([]any)
			for i, b := range branches {
				add(fmt.Sprintf("minimal %s[%d]", kw, i), b, false)
				add(fmt.Sprintf("full %s[%d]", kw, i), b, true)
			}
		}
	}
	return out
}

const (
	fullDepth = 6  // below this depth, full instances become minimal
	maxDepth  = 40 // give up
)

// gen produces an instance of schema n: minimal (required properties only)
// or full (every property).
func (s *synth) gen(n any, full bool, depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	if depth > fullDepth {
		full = false
	}
	switch x := n.(type) {
	case bool:
		return "any", x
	case map[string]any:
		return s.genObject(x, full, depth)
	default:
		return nil, false
	}
}

func (s *synth) genObject(m map[string]any, full bool, depth int) (any, bool) {
	if ref, ok := m["$ref"].(string); ok {
		return s.gen(s.resolve(ref), full, depth+1)
	}
	if c, ok := m["const"]; ok {
		return c, true
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		if full {
			return e[len(e)-1], true
		}
		return e[0], true
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		branches, ok := m[kw].([]any)
		if !ok || len(branches) == 0 {
			continue
		}
		first := 0
		if full {
			s.rotate++
			first = s.rotate % len(branches)
		}
		for i := range branches {
			if v, ok := s.gen(branches[(first+i)%len(branches)], full, depth+1); ok {
				return v, true
			}
		}
		return nil, false
	}
	if all, ok := m["allOf"].([]any); ok {
		merged := map[string]any{}
		for _, b := range all {
			v, ok := s.gen(b, full, depth+1)
			if !ok {
				return nil, false
			}
			vm, ok := v.(map[string]any)
			if !ok {
				return v, true // not an object: use the branch's value
			}
			for k, e := range vm {
				merged[k] = e
			}
		}
		// allOf may sit next to properties of its own.
		rest := map[string]any{}
		for k, v := range m {
			if k != "allOf" {
				rest[k] = v
			}
		}
		if v, ok := s.genTyped(rest, full, depth); ok {
			if vm, ok := v.(map[string]any); ok {
				for k, e := range vm {
					merged[k] = e
				}
			}
		}
		return merged, true
	}
	return s.genTyped(m, full, depth)
}

// genTyped produces an instance from type and the keywords that go with it.
func (s *synth) genTyped(m map[string]any, full bool, depth int) (any, bool) {
	typ := ""
	switch t := m["type"].(type) {
	case string:
		typ = t
	case []any:
		if len(t) > 0 {
			i := 0
			if full {
				i = len(t) - 1
			}
			typ, _ = t[i].(string)
		}
	}
	if typ == "" {
		switch {
		case m["properties"] != nil || m["required"] != nil || m["additionalProperties"] != nil:
			typ = "object"
		case m["items"] != nil:
			typ = "array"
		default:
			return "any", true // unconstrained
		}
	}
	switch typ {
	case "object":
		props, _ := m["properties"].(map[string]any)
		out := map[string]any{}
		required := map[string]bool{}
		if req, ok := m["required"].([]any); ok {
			for _, r := range req {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		for _, name := range sortedKeys(props) {
			if !full && !required[name] {
				continue
			}
			v, ok := s.gen(props[name], full, depth+1)
			if !ok {
				if required[name] {
					return nil, false
				}
				continue
			}
			out[name] = v
		}
		for name := range required {
			if _, ok := out[name]; !ok {
				out[name] = "any" // required but unconstrained
			}
		}
		if full && len(props) == 0 {
			if ap, ok := m["additionalProperties"]; ok && ap != false {
				if v, ok := s.gen(ap, full, depth+1); ok {
					out["key"] = v
				}
			}
		}
		return out, true
	case "array":
		if !full {
			return []any{}, true
		}
		if items, ok := m["items"]; ok {
			if v, ok := s.gen(items, full, depth+1); ok {
				return []any{v}, true
			}
		}
		return []any{}, true
	case "string":
		switch m["format"] {
		case "uri":
			return "https://example.com/a", true
		case "uri-template":
			return "https://example.com/{id}", true
		case "byte":
			return "aGVsbG8=", true
		case "date-time":
			return "2025-01-02T03:04:05Z", true
		case "email":
			return "a@example.com", true
		}
		if full {
			return "full text", true
		}
		return "s", true
	case "integer", "number":
		v := big.NewRat(0, 1)
		if full && typ == "number" {
			v = big.NewRat(1, 2)
		}
		if mn, ok := rat(m["minimum"]); ok && v.Cmp(mn) < 0 {
			v = mn
		}
		if mx, ok := rat(m["maximum"]); ok && v.Cmp(mx) > 0 {
			v = mx
		}
		return number(v), true
	case "boolean":
		return full, true
	case "null":
		return nil, true
	}
	return nil, false
}

func rat(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(string(n))
}

func number(r *big.Rat) json.Number {
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	f, _ := r.Float64()
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}

// mutations returns the mutated variants of base.
func mutations(base labelled) []labelled {
	var out []labelled
	add := func(what string, v any) {
		out = append(out, labelled{base.label + ", " + what, v})
	}
	scalarMutations(add, base.v, nil, base.v) // the whole instance
	var walk func(p []any, v any)
	walk = func(p []any, v any) {
		switch x := v.(type) {
		case map[string]any:
			add("unknown property at "+pointer(p), replaceAt(base.v, p, func(old any) any {
				m := copyMap(old.(map[string]any))
				m["zzUnknownProperty"] = "surprise"
				return m
			}))
			for _, k := range sortedKeys(x) {
				kp := append(append([]any{}, p...), k)
				add("drop "+pointer(kp), replaceAt(base.v, p, func(old any) any {
					m := copyMap(old.(map[string]any))
					delete(m, k)
					return m
				}))
				scalarMutations(add, base.v, kp, x[k])
				walk(kp, x[k])
			}
		case []any:
			add("empty array at "+pointer(p), replaceAt(base.v, p, func(any) any { return []any{} }))
			if len(x) > 0 {
				add("duplicate element at "+pointer(p), replaceAt(base.v, p, func(old any) any {
					a := old.([]any)
					return append(append([]any{}, a...), a[0])
				}))
			}
			for i, e := range x {
				ip := append(append([]any{}, p...), i)
				scalarMutations(add, base.v, ip, e)
				walk(ip, e)
			}
		}
	}
	walk(nil, base.v)
	return out
}

// scalarMutations adds the wrong-type and bad-value variants of the value v
// at path p.
func scalarMutations(add func(string, any), root any, p []any, v any) {
	for _, w := range wrongTypes(v) {
		add("wrong type "+show(w)+" at "+pointer(p), replaceAt(root, p, func(any) any { return w }))
	}
	for _, b := range badValues(v) {
		add("bad value "+show(b)+" at "+pointer(p), replaceAt(root, p, func(any) any { return b }))
	}
}

// wrongTypes returns values whose JSON type differs from v's.
func wrongTypes(v any) []any {
	switch v.(type) {
	case string:
		return []any{json.Number("42"), map[string]any{}}
	case json.Number:
		return []any{"42", nil}
	case bool:
		return []any{"true", json.Number("1")}
	case map[string]any:
		return []any{"object", []any{}}
	case []any:
		return []any{map[string]any{}, "array"}
	case nil:
		return []any{"null", json.Number("0")}
	}
	return nil
}

// badValues returns values of v's type that break a const, an enum, a
// format, a bound or integer-ness.
func badValues(v any) []any {
	switch x := v.(type) {
	case string:
		return []any{x + "-bad", "", "not a uri, not base64 %%"}
	case json.Number:
		r, ok := new(big.Rat).SetString(string(x))
		if !ok {
			return nil
		}
		return []any{
			number(new(big.Rat).Add(r, big.NewRat(1, 1))),
			number(new(big.Rat).Add(r, big.NewRat(1, 2))),
			json.Number("-1"),
			json.Number("1000000"),
		}
	case bool:
		return []any{!x}
	}
	return nil
}

// replaceAt returns a deep copy of root with the value at path p replaced
// by f(old).
func replaceAt(root any, p []any, f func(any) any) any {
	if len(p) == 0 {
		return f(deepCopy(root))
	}
	switch x := root.(type) {
	case map[string]any:
		m := copyMap(x)
		k := p[0].(string)
		m[k] = replaceAt(x[k], p[1:], f)
		return m
	case []any:
		a := append([]any{}, x...)
		i := p[0].(int)
		a[i] = replaceAt(x[i], p[1:], f)
		return a
	}
	return root
}

// copyMap copies one level; replaceAt copies the path it changes, so the
// shared rest is never modified.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

func pointer(p []any) string {
	if len(p) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, seg := range p {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(seg), "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

func brief(err error) string {
	if err == nil {
		return "valid"
	}
	s := err.Error()
	if len(s) > 600 {
		s = s[:600] + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
