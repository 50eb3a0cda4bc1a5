package schemadiff

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
)

// A changelog between two of our revisions: what a maintainer reads first
// when a revision comes out. Methods come from the generated method
// tables (extensions layered on included), definitions from the schema
// folders (with the same layers), compared in schemadiff's normal form.

// Change is one entry of a changelog.
type Change struct {
	// What changed: "method added", "method removed", "method changed",
	// "definition added", "definition removed", "property added",
	// "property removed", "made required", "made optional", "retyped",
	// "union member added", "union member removed", "enum value added",
	// "enum value removed", "const changed", "changed" (any other keyword).
	What string `json:"what"`
	// Pointer locates it: a method name, or a definition name followed
	// by JSON Pointer segments ("CallToolResult/properties/resultType").
	Pointer string `json:"pointer"`
	// Capability: the change is to what a side declares it can do
	// (ClientCapabilities, ServerCapabilities).
	Capability bool `json:"capability,omitempty"`
	// From and To are the two sides, as JSON ("" when absent), or a few
	// words for a method.
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
}

// Changelog is what changed from one revision to the next.
type Changelog struct {
	From    string   `json:"from"`
	To      string   `json:"to"`
	Changes []Change `json:"changes"`
}

// Changes compares revisions from and to of fsys (with the extensions the
// generated tables layer onto them).
func Changes(fsys fs.FS, from, to string) (*Changelog, error) {
	a, err := loadLayered(fsys, from)
	if err != nil {
		return nil, err
	}
	b, err := loadLayered(fsys, to)
	if err != nil {
		return nil, err
	}
	cl := &Changelog{From: from, To: to}
	methods, err := methodChanges(from, to)
	if err != nil {
		return nil, err
	}
	cl.Changes = append(cl.Changes, methods...)
	c := &comparer{unions: true}
	for _, n := range unionKeys(a.defs, b.defs) {
		o, ok1 := a.defs[n]
		t, ok2 := b.defs[n]
		switch {
		case !ok1:
			c.add(n, KindDefinition, nil, b.paths[n])
		case !ok2:
			c.add(n, KindDefinition, a.paths[n], nil)
		default:
			c.schema(n, normalize(o, a.refs(n)), normalize(t, b.refs(n)))
		}
	}
	for _, d := range c.diffs {
		cl.Changes = append(cl.Changes, classify(d)...)
	}
	return cl, nil
}

// loadLayered reads a revision folder and the folders of the extensions
// its generated table layers onto it, as the revision's own files.
func loadLayered(fsys fs.FS, rev string) (*oursSet, error) {
	s, err := loadOurs(fsys, rev)
	if err != nil {
		return nil, err
	}
	spec := generated.Lookup(rev)
	if spec == nil {
		return nil, notGenerated(rev)
	}
	for _, x := range spec.Extensions {
		err := fs.WalkDir(fsys, x.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") || path.Base(p) == "extension.json" {
				return err
			}
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				return err
			}
			v, err := decode(b)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			name := strings.TrimSuffix(path.Base(p), ".json")
			if prev, dup := s.files[name]; dup {
				return fmt.Errorf("%s: defines %s, which %s defines already (an extension adds definitions, it does not replace them)", p, name, prev)
			}
			virtual := path.Join(rev, strings.TrimPrefix(p, x.Dir+"/")) // where its refs resolve
			s.defs[name], s.files[name], s.byPath[virtual] = v, virtual, name
			s.paths[name] = mustJSON(p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading extension %s: %w", x.ID, err)
		}
	}
	return s, nil
}

// notGenerated is a revision this binary has no generated table of: its
// methods and the extensions layered onto it are only known after make
// generate, and a changelog without them would mislead.
func notGenerated(rev string) error {
	return fmt.Errorf("revision %s is not in this binary's generated tables: run make generate, then go run . schemadiff (a changelog needs its methods and extension layers)", rev)
}

// methodChanges compares the two revisions' method tables.
func methodChanges(from, to string) ([]Change, error) {
	a, b := generated.Lookup(from), generated.Lookup(to)
	if a == nil {
		return nil, notGenerated(from)
	}
	if b == nil {
		return nil, notGenerated(to)
	}
	names := map[string]bool{}
	for _, m := range a.Methods {
		names[m.Name] = true
	}
	for _, m := range b.Methods {
		names[m.Name] = true
	}
	var out []Change
	for _, n := range sortedKeys(names) {
		ma, ok1 := a.Method(n)
		mb, ok2 := b.Method(n)
		switch {
		case !ok1:
			out = append(out, Change{What: "method added", Pointer: n, To: describe(mb)})
		case !ok2:
			out = append(out, Change{What: "method removed", Pointer: n, From: describe(ma)})
		case describe(ma) != describe(mb):
			out = append(out, Change{What: "method changed", Pointer: n, From: describe(ma), To: describe(mb)})
		}
	}
	return out, nil
}

// describe says what a method is: direction, request and result.
func describe(m protocol.Method) string {
	dir := "client → server"
	switch {
	case m.ClientToServer && m.ServerToClient:
		dir = "both ways"
	case m.ServerToClient:
		dir = "server → client"
	}
	s := dir + ", " + m.Request
	if m.Result != "" {
		s += " → " + m.Result
	}
	if m.Extension != "" {
		s += " (extension " + m.Extension + ")"
	}
	return s
}

// classify turns one schema difference into changelog entries.
func classify(d Difference) []Change {
	def, _, _ := strings.Cut(d.Path, "/")
	capability := def == "ClientCapabilities" || def == "ServerCapabilities"
	entry := func(what, ptr string, from, to json.RawMessage) Change {
		return Change{What: what, Pointer: ptr, Capability: capability, From: string(from), To: string(to)}
	}
	added, removed := d.Ours == nil, d.Theirs == nil // Ours is the older side here
	switch d.Kind {
	case KindDefinition:
		if added {
			return []Change{entry("definition added", d.Path, nil, d.Theirs)}
		}
		return []Change{entry("definition removed", d.Path, d.Ours, nil)}
	case KindProperty:
		if added {
			return []Change{entry("property added", d.Path, nil, d.Theirs)}
		}
		if removed {
			return []Change{entry("property removed", d.Path, d.Ours, nil)}
		}
		return []Change{entry("changed", d.Path, d.Ours, d.Theirs)}
	case "required":
		var was, is []string
		_ = json.Unmarshal(d.Ours, &was)
		_ = json.Unmarshal(d.Theirs, &is)
		base := strings.TrimSuffix(d.Path, "/required")
		var out []Change
		made, unmade := minus(is, was), minus(was, is)
		slices.Sort(made)
		slices.Sort(unmade)
		for _, p := range made {
			out = append(out, entry("made required", base+"/properties/"+escape(p), nil, nil))
		}
		for _, p := range unmade {
			out = append(out, entry("made optional", base+"/properties/"+escape(p), nil, nil))
		}
		return out
	case "type", "$ref":
		return []Change{entry("retyped", d.Path, d.Ours, d.Theirs)}
	case "enum":
		var was, is []any
		if json.Unmarshal(d.Ours, &was) != nil || json.Unmarshal(d.Theirs, &is) != nil {
			return []Change{entry("enum changed", d.Path, d.Ours, d.Theirs)}
		}
		var out []Change
		isJSON, wasJSON := encoded(is), encoded(was)
		for _, v := range minus(isJSON, wasJSON) {
			out = append(out, entry("enum value added", d.Path, nil, json.RawMessage(v)))
		}
		for _, v := range minus(wasJSON, isJSON) {
			out = append(out, entry("enum value removed", d.Path, json.RawMessage(v), nil))
		}
		return out
	case "anyOf", "oneOf", "allOf":
		if added {
			return []Change{entry("union member added", d.Path, nil, d.Theirs)}
		}
		if removed {
			return []Change{entry("union member removed", d.Path, d.Ours, nil)}
		}
		return []Change{entry("changed", d.Path, d.Ours, d.Theirs)}
	case "const":
		return []Change{entry("const changed", d.Path, d.Ours, d.Theirs)}
	}
	return []Change{entry("changed", d.Path, d.Ours, d.Theirs)}
}

// encoded is each value as JSON, to compare values by.
func encoded(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(mustJSON(v))
	}
	return out
}

// minus is the members of a that b lacks, in a's order.
func minus[T comparable](a, b []T) []T {
	in := make(map[T]bool, len(b))
	for _, v := range b {
		in[v] = true
	}
	var out []T
	for _, v := range a {
		if !in[v] {
			out = append(out, v)
		}
	}
	return out
}

// WriteChangelog writes a changelog as text (one line per change),
// markdown (a section per kind of change) or JSON.
func WriteChangelog(w io.Writer, cl *Changelog, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(cl)
	case "markdown":
		ew := &errWriter{w: w}
		w := ew
		fmt.Fprintf(w, "## %s → %s\n\n%d changes.\n", cl.From, cl.To, len(cl.Changes))
		groups := map[string][]Change{}
		var order []string
		for _, c := range cl.Changes {
			if _, seen := groups[c.What]; !seen {
				order = append(order, c.What)
			}
			groups[c.What] = append(groups[c.What], c)
		}
		sort.SliceStable(order, func(i, j int) bool { return whatRank(order[i]) < whatRank(order[j]) })
		for _, what := range order {
			fmt.Fprintf(w, "\n### %s (%d)\n\n", upperFirst(what), len(groups[what]))
			for _, c := range groups[what] {
				fmt.Fprintf(w, "- `%s`%s\n", c.Pointer, detail(c, "`"))
			}
		}
		return ew.err
	case "text", "":
		for _, c := range cl.Changes {
			fmt.Fprintf(w, "%s: %s%s\n", c.What, c.Pointer, detail(c, ""))
		}
		_, err := fmt.Fprintf(w, "schemadiff %s → %s: %d changes\n", cl.From, cl.To, len(cl.Changes))
		return err
	}
	return fmt.Errorf("format %q is not text, markdown or json", format)
}

// detail is the rest of a change's line: its sides, and whether it is a
// capability's.
func detail(c Change, quote string) string {
	var s string
	if c.Capability {
		s += " (capability)"
	}
	side := func(v string) string {
		if v == "" {
			return "(none)"
		}
		return quote + v + quote
	}
	switch {
	case strings.HasPrefix(c.What, "method") && c.From != "" && c.To != "":
		s += ": " + c.From + " → " + c.To
	case c.To != "" && strings.HasPrefix(c.What, "method"):
		s += ": " + c.To
	case c.From != "" && strings.HasPrefix(c.What, "method"):
		s += ": was " + c.From
	case c.What == "definition added":
		s += ": " + strings.Trim(c.To, `"`)
	case c.What == "definition removed":
		s += ": was " + strings.Trim(c.From, `"`)
	case c.From != "" || c.To != "":
		s += fmt.Sprintf(": %s → %s", side(c.From), side(c.To))
	}
	return s
}

// errWriter keeps the first write error, so that a run of writes is
// checked once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

// whatRank orders a changelog's sections: methods, then definitions, then
// their members.
func whatRank(what string) int {
	for i, w := range []string{"method added", "method removed", "method changed", "definition added", "definition removed",
		"property added", "property removed", "made required", "made optional", "retyped", "union member added", "union member removed",
		"enum value added", "enum value removed", "enum changed", "const changed", "changed"} {
		if w == what {
			return i
		}
	}
	return 99
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
