package check

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/protocol"
)

// An argSet is one set of arguments for a tool, generated from its
// inputSchema: valid, or invalid in exactly one way (broke says which).
type argSet struct {
	args  map[string]any
	valid bool
	broke string // for an invalid set: the keyword it breaks and where ("required /city")
}

// maxInvalid bounds the invalid sets tried per tool: one per kind of
// keyword first, then more of each, up to this many.
const maxInvalid = 8

// argSets generates the argument sets of a tool from its inputSchema: up
// to two valid ones (the required members, then every member) and up to
// maxInvalid that each break one keyword of a top-level member. Every set
// is held to the schema itself (compiled by the reference validator): a
// "valid" set the schema refuses, or an "invalid" one it accepts, is
// dropped. note says why no valid set could be made, if none could.
func argSets(name string, schema map[string]any) (sets []argSet, note string) {
	compiled, err := protocol.CompileSchema("tool "+name+" inputSchema", schema, protocol.FormatAsAnnotation())
	if err != nil {
		return nil, fmt.Sprintf("its inputSchema does not compile: %v", err)
	}
	g := &generator{root: schema}
	var bases []map[string]any
	for _, all := range []bool{false, true} {
		g.nodes = 0
		v, ok := g.object(schema, all, 0)
		if !ok {
			continue
		}
		if compiled.Validate(v) != nil {
			continue
		}
		if len(bases) == 1 && equalJSON(bases[0], v) {
			continue
		}
		bases = append(bases, v)
		sets = append(sets, argSet{args: v, valid: true})
	}
	if len(bases) == 0 {
		return nil, "no valid arguments could be made from its inputSchema (a pattern or a combination this generator does not solve): give examples or defaults"
	}
	base := bases[len(bases)-1] // every member: each can be broken
	for _, c := range g.invalid(schema, base) {
		if len(sets)-len(bases) >= maxInvalid {
			break
		}
		inv := argSet{args: c.build(), broke: c.broke}
		if compiled.Validate(inv.args) == nil {
			continue // a union of types, say: not broken after all
		}
		sets = append(sets, inv)
	}
	return sets, ""
}

// generator makes values a schema accepts, from what the schema says of
// them: const, default, examples, enum, then the type and its bounds.
// nodes bounds the values it makes for one set (a schema of nested
// arrays of required objects would otherwise grow without end).
type generator struct {
	root  map[string]any
	nodes int
}

// Bounds of what a generated set may hold: values, and the length of a
// string or an array (a schema's minLength of a billion is not made).
const (
	maxNodes  = 4096
	maxLength = 4096
)

// maxDepth bounds the nesting of generated values (a recursive schema).
const maxDepth = 8

func (g *generator) resolve(s map[string]any) map[string]any {
	for range maxDepth {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		target, ok := pointer(g.root, strings.TrimPrefix(ref, "#"))
		if !ok {
			return s
		}
		m, ok := target.(map[string]any)
		if !ok {
			return s
		}
		s = m
	}
	return s
}

// pointer follows a JSON pointer inside doc.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func (g *generator) value(s any, depth int) (any, bool) {
	if g.nodes++; depth > maxDepth || g.nodes > maxNodes {
		return nil, false
	}
	switch s := s.(type) {
	case bool:
		return "example", s // true accepts anything, false nothing
	case map[string]any:
		return g.fromSchema(g.resolve(s), depth)
	}
	return "example", true // no schema: anything
}

func (g *generator) fromSchema(s map[string]any, depth int) (any, bool) {
	if c, ok := s["const"]; ok {
		return c, true
	}
	if d, ok := s["default"]; ok {
		return d, true
	}
	if ex, ok := s["examples"].([]any); ok && len(ex) > 0 {
		return ex[0], true
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0], true
	}
	for _, key := range []string{"anyOf", "oneOf", "allOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			if key == "allOf" && len(alts) > 1 {
				break // a value for every branch at once: not solved here
			}
			for _, alt := range alts {
				if v, ok := g.value(alt, depth+1); ok {
					return v, true
				}
			}
			return nil, false
		}
	}
	switch firstType(s) {
	case "object":
		return g.object(s, false, depth)
	case "array":
		return g.array(s, depth)
	case "string":
		return str(s)
	case "integer":
		return number(s, true)
	case "number":
		return number(s, false)
	case "boolean":
		return true, true
	case "null":
		return nil, true
	}
	return "example", true
}

// firstType is the type to make for s: its "type" (the first of a list
// that is not null), or what its keywords imply.
func firstType(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok && x != "null" {
				return x
			}
		}
		if len(t) > 0 {
			return "null"
		}
	}
	switch {
	case s["properties"] != nil || s["required"] != nil:
		return "object"
	case s["items"] != nil:
		return "array"
	case s["minLength"] != nil || s["maxLength"] != nil || s["pattern"] != nil || s["format"] != nil:
		return "string"
	case s["minimum"] != nil || s["maximum"] != nil:
		return "number"
	}
	return ""
}

// object makes the required members (all: every member) of an object.
func (g *generator) object(s map[string]any, all bool, depth int) (map[string]any, bool) {
	s = g.resolve(s)
	props, _ := s["properties"].(map[string]any)
	out := map[string]any{}
	names := required(s)
	if all {
		names = sortedKeys(props)
	}
	for _, name := range names {
		ps, ok := props[name]
		if !ok {
			ps = true // required but not described: anything
		}
		v, ok := g.value(ps, depth+1)
		if !ok {
			return nil, false
		}
		out[name] = v
	}
	return out, true
}

func (g *generator) array(s map[string]any, depth int) (any, bool) {
	n := 1
	if m, ok := intOf(s["minItems"]); ok {
		n = max(n, m)
	}
	if m, ok := intOf(s["maxItems"]); ok {
		n = min(n, m)
	}
	n = min(n, 16)
	out := make([]any, 0, n)
	items, ok := s["items"]
	if !ok {
		items = true
	}
	for range n {
		v, ok := g.value(items, depth+1)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	if u, _ := s["uniqueItems"].(bool); u && n > 1 {
		return nil, false // n equal items would not do: not solved here
	}
	return out, true
}

// formats are values of the common string formats.
var formats = map[string]string{
	"date-time": sampleTime.Format(time.RFC3339), "date": sampleTime.Format(time.DateOnly), "time": sampleTime.Format("15:04:05Z07:00"), "duration": "PT1M",
	"email": "user@example.com", "idn-email": "user@example.com", "hostname": "example.com", "idn-hostname": "example.com",
	"ipv4": "192.0.2.1", "ipv6": "2001:db8::1", "uri": "https://example.com/", "uri-reference": "https://example.com/",
	"iri": "https://example.com/", "iri-reference": "https://example.com/", "uuid": "00000000-0000-4000-8000-000000000000",
	"uri-template": "https://example.com/{id}", "json-pointer": "/a", "relative-json-pointer": "0", "regex": "^a$",
}

// sampleTime is the instant of the date and time formats' values.
var sampleTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// str makes a string within the length bounds that matches the pattern,
// from a few candidates; ok is false when none does.
func str(s map[string]any) (any, bool) {
	minLen, _ := intOf(s["minLength"])
	maxLen, hasMax := intOf(s["maxLength"])
	if minLen > maxLength {
		return nil, false
	}
	var re *regexp.Regexp
	if p, ok := s["pattern"].(string); ok {
		var err error
		if re, err = regexp.Compile(p); err != nil {
			return nil, false // ECMA-262 syntax Go's regexp does not read
		}
	}
	candidates := []string{"example", "a", "1", "A1", "example-1", "user@example.com", "https://example.com/"}
	if f, ok := s["format"].(string); ok && formats[f] != "" {
		candidates = append([]string{formats[f]}, candidates...)
	}
	if minLen > 0 {
		candidates = append(candidates, strings.Repeat("a", minLen))
	}
	for _, c := range candidates {
		n := utf8.RuneCountInString(c)
		if n < minLen || hasMax && n > maxLen {
			continue
		}
		if re != nil && !re.MatchString(c) {
			continue
		}
		return c, true
	}
	return nil, false
}

// number makes a number within the bounds: the lower one when there is
// one, 1 otherwise (or the upper one below 1).
func number(s map[string]any, integer bool) (any, bool) {
	lo, hasLo := floatOf(s["minimum"])
	if x, ok := floatOf(s["exclusiveMinimum"]); ok {
		lo, hasLo = x+1, true
		if !integer {
			lo = x + 0.5
		}
	}
	hi, hasHi := floatOf(s["maximum"])
	if x, ok := floatOf(s["exclusiveMaximum"]); ok {
		hi, hasHi = x-1, true
		if !integer {
			hi = x - 0.5
		}
	}
	v := 1.0
	switch {
	case hasLo:
		v = lo
		if integer {
			v = math.Ceil(lo)
		}
	case hasHi && hi < 1:
		v = hi
		if integer {
			v = math.Floor(hi)
		}
	}
	if hasHi && v > hi {
		return nil, false
	}
	if m, ok := floatOf(s["multipleOf"]); ok && m > 0 {
		v = math.Ceil(v/m) * m
		if hasHi && v > hi {
			return nil, false
		}
	}
	if integer || v == math.Trunc(v) {
		return int64(v), true
	}
	return v, true
}

// invalidSet is an invalid argument set not made yet: each is a copy of
// the base, made only when tried.
type invalidSet struct {
	build func() map[string]any
	broke string
}

// maxTried bounds the invalid sets of one kind tried per tool: a schema
// may declare thousands of members, each a copy of the base to break.
const maxTried = 2 * maxInvalid

// invalid lists, from a valid base object, sets that each break one
// keyword of one top-level member: a required member left out, a value of
// the wrong type, a value past a bound, a member not in the enum, an extra
// member where additionalProperties is false; at most maxTried of each
// kind. One of each kind comes before a second of any.
func (g *generator) invalid(s map[string]any, base map[string]any) []invalidSet {
	s = g.resolve(s)
	props, _ := s["properties"].(map[string]any)
	var kinds [][]invalidSet
	full := func(kind int) bool { return kind < len(kinds) && len(kinds[kind]) >= maxTried }
	add := func(kind int, broke string, build func() map[string]any) {
		for len(kinds) <= kind {
			kinds = append(kinds, nil)
		}
		if !full(kind) {
			kinds[kind] = append(kinds[kind], invalidSet{build: build, broke: broke})
		}
	}
	with := func(name string, v any) func() map[string]any {
		return func() map[string]any {
			out := make(map[string]any, len(base)+1)
			for k, x := range base {
				out[k] = x
			}
			out[name] = v
			return out
		}
	}
	for _, name := range required(s) {
		if full(0) {
			break
		}
		add(0, "required: /"+name+" left out", func() map[string]any {
			out := make(map[string]any, len(base))
			for k, x := range base {
				if k != name {
					out[k] = x
				}
			}
			return out
		})
	}
	for _, name := range sortedKeys(props) {
		if full(1) && full(2) && full(3) {
			break
		}
		ps, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		ps = g.resolve(ps)
		if wrong, ok := wrongType(ps); ok && !full(1) {
			add(1, fmt.Sprintf("type: /%s is %s", name, kindOf(wrong)), with(name, wrong))
		}
		if !full(2) {
			for _, b := range pastBounds(ps) {
				add(2, fmt.Sprintf("%s: /%s", b.keyword, name), with(name, b.value))
			}
		}
		if e, ok := ps["enum"].([]any); ok && len(e) > 0 {
			add(3, "enum: /"+name+" is not one of its values", with(name, "mcpstack-check: not in the enum"))
		}
	}
	if ap, ok := s["additionalProperties"].(bool); ok && !ap {
		add(4, "additionalProperties: /mcpstackCheckUnexpected is not a declared member", with("mcpstackCheckUnexpected", 1))
	}
	var out []invalidSet
	for round := 0; ; round++ {
		more := false
		for _, k := range kinds {
			if round < len(k) {
				out = append(out, k[round])
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// wrongType is a value of a type the schema does not allow, for a
// schema that names its types.
func wrongType(s map[string]any) (any, bool) {
	allowed := map[string]bool{}
	switch t := s["type"].(type) {
	case string:
		allowed[t] = true
	case []any:
		for _, x := range t {
			if x, ok := x.(string); ok {
				allowed[x] = true
			}
		}
	default:
		return nil, false
	}
	for _, v := range []any{int64(12345), "mcpstack-check: a string", true, map[string]any{}, []any{}} {
		k := kindOf(v)
		if !allowed[k] && !(k == "integer" && allowed["number"]) {
			return v, true
		}
	}
	return nil, false
}

// bound is a value past one bound of a schema, and the keyword.
type bound struct {
	keyword string
	value   any
}

func pastBounds(s map[string]any) []bound {
	var out []bound
	integer := firstType(s) == "integer"
	step := 0.5
	if integer {
		step = 1
	}
	if x, ok := floatOf(s["maximum"]); ok {
		out = append(out, bound{"maximum", jsonNumber(x + step)})
	}
	if x, ok := floatOf(s["exclusiveMaximum"]); ok {
		out = append(out, bound{"exclusiveMaximum", jsonNumber(x)})
	}
	if x, ok := floatOf(s["minimum"]); ok {
		out = append(out, bound{"minimum", jsonNumber(x - step)})
	}
	if x, ok := floatOf(s["exclusiveMinimum"]); ok {
		out = append(out, bound{"exclusiveMinimum", jsonNumber(x)})
	}
	if n, ok := intOf(s["maxLength"]); ok && n < maxLength {
		out = append(out, bound{"maxLength", strings.Repeat("a", n+1)})
	}
	if n, ok := intOf(s["minLength"]); ok && n > 0 && n <= maxLength {
		out = append(out, bound{"minLength", strings.Repeat("a", n-1)})
	}
	if n, ok := intOf(s["maxItems"]); ok && n < 1<<10 {
		items := make([]any, n+1)
		for i := range items {
			items[i] = int64(i) // distinct, to break only maxItems where items are free
		}
		out = append(out, bound{"maxItems", items})
	}
	if n, ok := intOf(s["minItems"]); ok && n > 0 {
		out = append(out, bound{"minItems", []any{}})
	}
	return out
}

// equalJSON reports whether two generated values are the same.
func equalJSON(a, b any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func jsonNumber(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return int64(f)
	}
	return f
}

func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case int64, int:
		return "integer"
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func required(s map[string]any) []string {
	req, _ := s["required"].([]any)
	out := make([]string, 0, len(req))
	for _, r := range req {
		if r, ok := r.(string); ok {
			out = append(out, r)
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

func floatOf(v any) (float64, bool) {
	f, err := codec.Float(v)
	return f, err == nil
}

func intOf(v any) (int, bool) {
	f, ok := floatOf(v)
	if !ok || f < 0 || f > 1<<30 {
		return 0, false
	}
	return int(f), true
}
