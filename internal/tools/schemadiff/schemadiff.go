package schemadiff

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/schema"
)

// Status says how a Difference relates to the revision's differences.json.
type Status string

const (
	// StatusNew is a difference that differences.json does not list.
	StatusNew Status = "new"
	// StatusAccepted is a difference that differences.json lists, with a reason.
	StatusAccepted Status = "accepted"
	// StatusStale is an entry of differences.json that no longer occurs.
	StatusStale Status = "stale"
)

// Kinds that are not keyword names.
const (
	KindDefinition = "definition"
	KindProperty   = "property"
)

// DifferencesFile is the name of the accepted-differences file in a revision
// folder.
const DifferencesFile = "differences.json"

// Difference is one place where our schema and the official one differ.
type Difference struct {
	// Path starts with the definition name, followed by JSON Pointer
	// segments, e.g. "CallToolRequest/properties/params/required".
	Path string `json:"path"`
	// Kind is "definition", "property" or the keyword that differs.
	Kind string `json:"kind"`
	// Ours and Theirs are the normalised values on each side, as JSON; nil
	// when that side lacks it.
	Ours   json.RawMessage `json:"ours,omitempty"`
	Theirs json.RawMessage `json:"theirs,omitempty"`
	Status Status          `json:"status"`
	// Reason comes from differences.json for accepted and stale entries.
	Reason string `json:"reason,omitempty"`
}

// Listed is one entry of differences.json.
type Listed struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
}

// Report is the outcome of comparing one revision.
type Report struct {
	Revision    string       `json:"revision"`
	Definitions int          `json:"definitions"` // definitions on either side
	Differences []Difference `json:"differences"`
	New         int          `json:"new"`
	Accepted    int          `json:"accepted"`
	Stale       int          `json:"stale"`
}

// Clean reports whether there are no new and no stale differences.
func (r *Report) Clean() bool { return r.New == 0 && r.Stale == 0 }

// Diff compares the embedded schemas of revision rev (schema.FS) with the
// official monolithic schema, and returns every difference sorted by path and
// kind: new, accepted and stale ones alike.
func Diff(rev string, official []byte) ([]Difference, error) {
	r, err := Compare(schema.FS, rev, official)
	if err != nil {
		return nil, err
	}
	return r.Differences, nil
}

// Compare compares the schema folder dir of fsys (laid out as
// <kind>/<Definition>.json, with an optional differences.json) with the
// official monolithic schema.
func Compare(fsys fs.FS, dir string, official []byte) (*Report, error) {
	ours, err := loadOurs(fsys, dir)
	if err != nil {
		return nil, err
	}
	listed, err := loadListed(fsys, dir)
	if err != nil {
		return nil, err
	}
	theirs, err := loadOfficial(official)
	if err != nil {
		return nil, err
	}
	rep := &Report{Revision: path.Base(dir)}
	c := &comparer{}
	names := unionKeys(ours.defs, theirs.defs)
	rep.Definitions = len(names)
	for _, n := range names {
		o, ok1 := ours.defs[n]
		t, ok2 := theirs.defs[n]
		switch {
		case !ok1:
			c.add(n, KindDefinition, nil, theirs.pointer(n))
		case !ok2:
			c.add(n, KindDefinition, ours.paths[n], nil)
		default:
			c.schema(n, normalize(o, ours.refs(n)), normalize(t, theirs.refs))
		}
	}
	rep.Differences = match(c.diffs, listed)
	for _, d := range rep.Differences {
		switch d.Status {
		case StatusNew:
			rep.New++
		case StatusAccepted:
			rep.Accepted++
		case StatusStale:
			rep.Stale++
		}
	}
	return rep, nil
}

// unionKeys are the keys of a and b, sorted.
func unionKeys(a, b map[string]any) []string {
	names := make(map[string]bool, len(a)+len(b))
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	return sortedKeys(names)
}

// match marks differences as new or accepted and appends stale entries.
func match(diffs []Difference, listed []Listed) []Difference {
	type key struct{ path, kind string }
	reasons := map[key]string{}
	for _, l := range listed {
		reasons[key{l.Path, l.Kind}] = l.Reason
	}
	seen := map[key]bool{}
	out := make([]Difference, 0, len(diffs))
	for _, d := range diffs {
		k := key{d.Path, d.Kind}
		seen[k] = true
		if r, ok := reasons[k]; ok {
			d.Status, d.Reason = StatusAccepted, r
		} else {
			d.Status = StatusNew
		}
		out = append(out, d)
	}
	for _, l := range listed {
		if !seen[key{l.Path, l.Kind}] {
			out = append(out, Difference{Path: l.Path, Kind: l.Kind, Status: StatusStale, Reason: l.Reason})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// oursSet is one revision folder of our schemas.
type oursSet struct {
	dir    string
	defs   map[string]any             // name → parsed file
	paths  map[string]json.RawMessage // name → JSON string of the path under dir
	files  map[string]string          // name → path in fsys
	byPath map[string]string          // path in fsys → name
}

func loadOurs(fsys fs.FS, dir string) (*oursSet, error) {
	s := &oursSet{dir: dir, defs: map[string]any{}, paths: map[string]json.RawMessage{}, files: map[string]string{}, byPath: map[string]string{}}
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") || path.Base(p) == DifferencesFile {
			return nil
		}
		name := strings.TrimSuffix(path.Base(p), ".json")
		if prev, dup := s.files[name]; dup {
			return fmt.Errorf("definition %s is defined twice: %s and %s", name, prev, p)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		v, err := decode(b)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		s.defs[name] = v
		s.files[name] = p
		s.byPath[p] = name
		s.paths[name] = mustJSON(strings.TrimPrefix(p, dir+"/"))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading schemas %s: %w", dir, err)
	}
	if len(s.defs) == 0 {
		return nil, fmt.Errorf("reading schemas %s: no definitions", dir)
	}
	return s, nil
}

// refs returns the ref normaliser for the definition name: refs are relative
// to its file.
func (s *oursSet) refs(name string) func(string) string {
	file := s.files[name]
	return func(ref string) string {
		target, frag, _ := strings.Cut(ref, "#")
		def := name
		if target != "" {
			p := path.Join(path.Dir(file), target)
			n, ok := s.byPath[p]
			if !ok {
				return "unresolved:" + ref
			}
			def = n
		}
		if frag == "" || frag == "/" {
			return def
		}
		return def + "#" + frag
	}
}

func loadListed(fsys fs.FS, dir string) ([]Listed, error) {
	p := path.Join(dir, DifferencesFile)
	b, err := fs.ReadFile(fsys, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var listed []Listed
	if err := dec.Decode(&listed); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	seen := map[[2]string]bool{}
	for i, l := range listed {
		if l.Path == "" || l.Kind == "" || strings.TrimSpace(l.Reason) == "" {
			return nil, fmt.Errorf("%s: entry %d needs a path, a kind and a reason", p, i)
		}
		k := [2]string{l.Path, l.Kind}
		if seen[k] {
			return nil, fmt.Errorf("%s: entry %d (%s, %s) is listed twice", p, i, l.Path, l.Kind)
		}
		seen[k] = true
	}
	return listed, nil
}

// officialSet is a parsed official monolithic schema.
type officialSet struct {
	key  string // "$defs" or "definitions"
	defs map[string]any
}

func loadOfficial(b []byte) (*officialSet, error) {
	v, err := decode(b)
	if err != nil {
		return nil, fmt.Errorf("official schema: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("official schema: not a JSON object")
	}
	s := &officialSet{}
	for _, key := range []string{"$defs", "definitions"} {
		d, ok := root[key].(map[string]any)
		if !ok {
			continue
		}
		if s.defs != nil {
			return nil, errors.New("official schema: has both $defs and definitions")
		}
		s.key, s.defs = key, d
	}
	if s.defs == nil {
		return nil, errors.New("official schema: no $defs or definitions")
	}
	return s, nil
}

func (s *officialSet) pointer(name string) json.RawMessage {
	return mustJSON("#/" + s.key + "/" + escape(name))
}

// refs normalises a ref of the official schema.
func (s *officialSet) refs(ref string) string {
	for _, prefix := range []string{"#/$defs/", "#/definitions/"} {
		rest, ok := strings.CutPrefix(ref, prefix)
		if !ok {
			continue
		}
		name, frag, hasFrag := strings.Cut(rest, "/")
		name = unescape(name)
		if _, ok := s.defs[name]; !ok {
			return "unresolved:" + ref
		}
		if !hasFrag {
			return name
		}
		return name + "#/" + frag
	}
	return "unresolved:" + ref
}

// comparer collects differences.
type comparer struct {
	diffs []Difference
	// unions: compare anyOf/oneOf/allOf members as sets (the changelog:
	// two revisions of ours may list a union's members in another order),
	// not by position (against the official schema, whose order we keep).
	unions bool
}

func (c *comparer) add(p, kind string, ours, theirs any) {
	d := Difference{Path: p, Kind: kind}
	if ours != nil {
		d.Ours = toJSON(ours)
	}
	if theirs != nil {
		d.Theirs = toJSON(theirs)
	}
	c.diffs = append(c.diffs, d)
}

func toJSON(v any) json.RawMessage {
	if r, ok := v.(json.RawMessage); ok {
		return r
	}
	return mustJSON(v)
}

// schema compares two normalised schemas at path p.
func (c *comparer) schema(p string, ours, theirs any) {
	o, ok1 := ours.(map[string]any)
	t, ok2 := theirs.(map[string]any)
	if !ok1 || !ok2 {
		// Not a schema object (an invalid schema); compare as values.
		if !equal(ours, theirs) {
			c.add(p, "schema", ours, theirs)
		}
		return
	}
	keys := map[string]bool{}
	for k := range o {
		keys[k] = true
	}
	for k := range t {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		ov, has1 := o[k]
		tv, has2 := t[k]
		kp := p + "/" + escape(k)
		switch {
		case nameMapKeywords[k]:
			c.nameMap(kp, asMap(ov), asMap(tv))
		case schemaListKeywords[k] && has1 && has2:
			c.list(kp, k, ov, tv)
		case k == "items" && has1 && has2:
			_, arr1 := ov.([]any)
			_, arr2 := tv.([]any)
			if arr1 || arr2 {
				c.list(kp, k, ov, tv)
			} else {
				c.schema(kp, ov, tv)
			}
		case schemaKeywords[k] && has1 && has2:
			c.schema(kp, ov, tv)
		default:
			if !has1 || !has2 || !equal(ov, tv) {
				c.add(kp, k, orNil(ov, has1), orNil(tv, has2))
			}
		}
	}
}

func orNil(v any, ok bool) any {
	if !ok {
		return nil
	}
	if v == nil {
		return json.RawMessage("null")
	}
	return v
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// nameMap compares maps of name → schema (properties and the like).
func (c *comparer) nameMap(p string, ours, theirs map[string]any) {
	names := map[string]bool{}
	for k := range ours {
		names[k] = true
	}
	for k := range theirs {
		names[k] = true
	}
	for _, n := range sortedKeys(names) {
		o, ok1 := ours[n]
		t, ok2 := theirs[n]
		np := p + "/" + escape(n)
		if ok1 && ok2 {
			c.schema(np, o, t)
		} else {
			c.add(np, KindProperty, orNil(o, ok1), orNil(t, ok2))
		}
	}
}

// list compares arrays of schemas (anyOf and the like) pairwise when they
// have the same length, and as a whole otherwise.
func (c *comparer) list(p, kind string, ours, theirs any) {
	o, ok1 := ours.([]any)
	t, ok2 := theirs.([]any)
	if ok1 && ok2 && c.unions && kind != "prefixItems" {
		c.members(p, kind, o, t)
		return
	}
	if !ok1 || !ok2 || len(o) != len(t) {
		c.add(p, kind, ours, theirs)
		return
	}
	for i := range o {
		c.schema(fmt.Sprintf("%s/%d", p, i), o[i], t[i])
	}
}

// members compares a union's members as a set: the ones on both sides
// are no change wherever they stand; of the rest, as many as pair up are
// compared in order, and the others are a member added or removed
// (Kind is the keyword, one side absent).
func (c *comparer) members(p, kind string, o, t []any) {
	left := map[string]int{}
	for _, v := range t {
		left[string(mustJSON(v))]++
	}
	var onlyO []int
	for i, v := range o {
		if k := string(mustJSON(v)); left[k] > 0 {
			left[k]--
		} else {
			onlyO = append(onlyO, i)
		}
	}
	var onlyT []int
	seen := map[string]int{}
	for j, v := range t {
		k := string(mustJSON(v))
		seen[k]++
		if seen[k] > countIn(o, k) {
			onlyT = append(onlyT, j)
		}
	}
	n := min(len(onlyO), len(onlyT))
	for x := 0; x < n; x++ {
		c.schema(fmt.Sprintf("%s/%d", p, onlyT[x]), o[onlyO[x]], t[onlyT[x]])
	}
	for _, i := range onlyO[n:] {
		c.add(fmt.Sprintf("%s/%d", p, i), kind, o[i], nil)
	}
	for _, j := range onlyT[n:] {
		c.add(fmt.Sprintf("%s/%d", p, j), kind, nil, t[j])
	}
}

// countIn is how many members of vs encode as k.
func countIn(vs []any, k string) int {
	n := 0
	for _, v := range vs {
		if string(mustJSON(v)) == k {
			n++
		}
	}
	return n
}

// Keyword classes, by what their value holds.
var (
	// name → schema maps: the keys are names, not keywords.
	nameMapKeywords = map[string]bool{
		"properties": true, "patternProperties": true, "$defs": true,
		"definitions": true, "dependentSchemas": true,
	}
	// arrays of schemas.
	schemaListKeywords = map[string]bool{
		"anyOf": true, "allOf": true, "oneOf": true, "prefixItems": true,
	}
	// single schemas ("items" may also be an array, draft-07).
	schemaKeywords = map[string]bool{
		"items": true, "additionalProperties": true, "additionalItems": true,
		"not": true, "contains": true, "propertyNames": true, "if": true,
		"then": true, "else": true, "unevaluatedProperties": true,
		"unevaluatedItems": true, "contentSchema": true,
	}
)

// isAnnotation reports whether a keyword carries no validation meaning that
// schemadiff compares.
func isAnnotation(k string) bool {
	switch k {
	case "description", "title", "$schema", "$comment", "default", "examples":
		return true
	}
	return strings.HasPrefix(k, "x-")
}

// normalize returns a copy of a schema in the normal form described in the
// package documentation. refs normalises $ref values.
func normalize(v any, refs func(string) string) any {
	switch s := v.(type) {
	case bool:
		if s {
			return map[string]any{}
		}
		return map[string]any{"not": map[string]any{}}
	case map[string]any:
		out := make(map[string]any, len(s))
		for k, val := range s {
			if isAnnotation(k) {
				continue
			}
			switch {
			case nameMapKeywords[k]:
				m, ok := val.(map[string]any)
				if !ok {
					out[k] = canonical(val)
					continue
				}
				nm := make(map[string]any, len(m))
				for name, sub := range m {
					nm[name] = normalize(sub, refs)
				}
				out[k] = nm
			case schemaListKeywords[k], k == "items":
				if arr, ok := val.([]any); ok {
					list := make([]any, len(arr))
					for i, sub := range arr {
						list[i] = normalize(sub, refs)
					}
					out[k] = list
				} else if k == "items" {
					out[k] = normalize(val, refs)
				} else {
					out[k] = canonical(val)
				}
			case schemaKeywords[k]:
				out[k] = normalize(val, refs)
			case k == "$ref":
				if r, ok := val.(string); ok {
					out[k] = refs(r)
				} else {
					out[k] = canonical(val)
				}
			case k == "type":
				out[k] = normalizeType(val)
			case k == "required":
				out[k] = sortedSet(val)
			case k == "enum":
				out[k] = sortedSet(val)
			default:
				out[k] = canonical(val)
			}
		}
		return out
	default:
		return canonical(v)
	}
}

func normalizeType(v any) any {
	arr, ok := v.([]any)
	if !ok {
		return canonical(v)
	}
	set := sortedSet(arr).([]any)
	if len(set) == 1 {
		return set[0]
	}
	return set
}

// sortedSet returns the distinct elements of an array sorted by their JSON
// text; a non-array is returned canonicalised.
func sortedSet(v any) any {
	arr, ok := v.([]any)
	if !ok {
		return canonical(v)
	}
	byText := map[string]any{}
	for _, e := range arr {
		c := canonical(e)
		byText[string(mustJSON(c))] = c
	}
	out := make([]any, 0, len(byText))
	for _, k := range sortedKeys(byText) {
		out = append(out, byText[k])
	}
	return out
}

// canonical returns a copy of a JSON value with numbers in a normal form.
func canonical(v any) any {
	switch x := v.(type) {
	case json.Number:
		return normNumber(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canonical(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canonical(e)
		}
		return out
	default:
		return v
	}
}

func equal(a, b any) bool {
	return bytes.Equal(mustJSON(a), mustJSON(b))
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

// mustJSON marshals a JSON value built by this package; it cannot fail.
func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escape and unescape a JSON Pointer segment.
func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

func unescape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

// normNumber writes a number so that equal values compare equal: integers
// without a fraction or exponent, other numbers in shortest float form.
func normNumber(n json.Number) json.Number {
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return n
	}
	if r.IsInt() {
		return json.Number(r.Num().String())
	}
	f, _ := r.Float64()
	return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
}
