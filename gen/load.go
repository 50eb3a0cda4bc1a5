package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// definition is one schema file: a named definition of one revision.
type definition struct {
	Name        string
	Path        string // relative to the schema root, e.g. 2025-11-25/request/CallToolRequest.json
	Description string
	Result      string // x-mcp-result: the result definition a request is answered with
	TaskResult  string // x-mcp-task-result: the one it is answered with when it runs as a task
	NameParam   string // x-mcp-name: the params member its Mcp-Name header repeats
	Extension   string // the extension that adds it; "" for the revision's own
	Body        *schemas.Type
	Raw         []byte // the file, for the validators
}

// revisionSchema is every definition of one revision folder.
type revisionSchema struct {
	Name   string
	Index  int
	Defs   map[string]*definition
	Hash   string
	Layers []*extension // the extensions layered onto it
}

// annotations are the members of a schema file that go-jsonschema's model
// does not keep.
type annotations struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	Result      string `json:"x-mcp-result"`
	TaskResult  string `json:"x-mcp-task-result"`
	NameParam   string `json:"x-mcp-name"`
}

// loadRevision parses every definition file of one revision, and of the
// extensions layered onto it, with go-jsonschema's schema model.
func loadRevision(fsys fs.FS, rev string, index int, exts []*extension) (*revisionSchema, error) {
	rs := &revisionSchema{Name: rev, Index: index, Defs: map[string]*definition{}}
	var paths []string
	err := fs.WalkDir(fsys, rev, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") && path.Base(p) != "differences.json" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("revision %s: %w", rev, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("revision %s: no schema files", rev)
	}
	sort.Strings(paths)
	hash := newHasher()
	for _, p := range paths {
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, err
		}
		hash.add(p, raw)
		def, err := parseDefinition(p, raw)
		if err != nil {
			return nil, err
		}
		if prev, dup := rs.Defs[def.Name]; dup {
			return nil, fmt.Errorf("%s: definition %s is also defined in %s", p, def.Name, prev.Path)
		}
		rs.Defs[def.Name] = def
	}
	for _, x := range exts {
		if err := rs.layer(fsys, x, hash); err != nil {
			return nil, err
		}
	}
	rs.Hash = hash.sum()
	for _, def := range rs.Defs {
		if err := checkRefs(rs, def.Path, def.Body); err != nil {
			return nil, err
		}
		for _, a := range [...]struct{ keyword, ref string }{{"x-mcp-result", def.Result}, {"x-mcp-task-result", def.TaskResult}} {
			if _, ok := rs.Defs[refName(a.ref)]; a.ref != "" && !ok {
				return nil, fmt.Errorf("%s: %s %q names no definition of %s", def.Path, a.keyword, a.ref, rev)
			}
		}
		if def.NameParam != "" && !rs.hasParam(def, def.NameParam) {
			return nil, fmt.Errorf("%s: x-mcp-name %q is not a member of its params", def.Path, def.NameParam)
		}
	}
	return rs, nil
}

// hasParam reports whether a request's params (inline or a reference to
// another definition) has the member name.
func (rs *revisionSchema) hasParam(def *definition, name string) bool {
	params := def.Body.Properties["params"]
	if params == nil {
		return false
	}
	if params.Ref != "" {
		d := rs.Defs[refName(params.Ref)]
		if d == nil {
			return false
		}
		params = d.Body
	}
	_, ok := params.Properties[name]
	return ok
}

func parseDefinition(p string, raw []byte) (*definition, error) {
	var ann annotations
	if err := json.Unmarshal(raw, &ann); err != nil {
		return nil, positioned(p, raw, err)
	}
	s, err := schemas.FromJSONReader(bytes.NewReader(raw))
	if err != nil {
		return nil, positioned(p, raw, err)
	}
	name := strings.TrimSuffix(path.Base(p), ".json")
	if ann.Title != "" && ann.Title != name {
		return nil, fmt.Errorf("%s: title %q differs from the file name %q", p, ann.Title, name)
	}
	if !isGoIdent(name) {
		return nil, fmt.Errorf("%s: definition name %q is not a Go identifier", p, name)
	}
	return &definition{
		Name:        name,
		Path:        p,
		Description: ann.Description,
		Result:      ann.Result,
		TaskResult:  ann.TaskResult,
		NameParam:   ann.NameParam,
		Body:        (*schemas.Type)(s.ObjectAsType),
		Raw:         raw,
	}, nil
}

// positioned turns a JSON syntax error into file:line:column.
func positioned(p string, raw []byte, err error) error {
	var se *json.SyntaxError
	if ok := asSyntax(err, &se); ok {
		line, col := 1, 1
		for _, b := range raw[:se.Offset] {
			if b == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
		}
		return fmt.Errorf("%s:%d:%d: %v", p, line, col, se)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// refName is the definition a relative file reference points at.
func refName(ref string) string {
	return strings.TrimSuffix(path.Base(ref), ".json")
}

// checkRefs fails on a reference to a definition the revision lacks.
func checkRefs(rs *revisionSchema, where string, t *schemas.Type) error {
	if t == nil {
		return nil
	}
	if t.Ref != "" {
		if strings.HasPrefix(t.Ref, "#") {
			return fmt.Errorf("%s: $ref %q: references point at files (../kind/Name.json), not into documents", where, t.Ref)
		}
		if _, ok := rs.Defs[refName(t.Ref)]; !ok {
			return fmt.Errorf("%s: $ref %q names no definition of %s", where, t.Ref, rs.Name)
		}
	}
	for _, c := range children(t) {
		if err := checkRefs(rs, where, c); err != nil {
			return err
		}
	}
	return nil
}

// children lists the subschemas of t that the generator looks at.
func children(t *schemas.Type) []*schemas.Type {
	var out []*schemas.Type
	for _, k := range sortedKeys(t.Properties) {
		out = append(out, t.Properties[k])
	}
	out = append(out, t.Items, t.AdditionalProperties)
	out = append(out, t.AnyOf...)
	out = append(out, t.AllOf...)
	out = append(out, t.OneOf...)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
