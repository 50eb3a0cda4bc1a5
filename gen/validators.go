package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
)

// validators emits the revision's fast validators: for every definition a
// function that reports whether a JSON tree (as the core decodes it) is
// surely valid against it, with no reflection and no allocation. False
// means "not surely": the reference validator (santhosh-tekuri v6) then
// decides and explains, so a failure's {field, reason} is v6's. A check
// gives up (false) where being sure would take work the common case does
// not need: a number whose bound is close, a date-time, an integer written
// with a fraction.
//
// The schemas use a small set of keywords; any other makes generation
// fail, so that a new one is taught here before it is relied on.
func (c *canonical) validators(rs *revisionSchema) (*file, error) {
	g := &vgen{rs: rs, f: newFile(), names: map[string]string{}, envelopes: map[string]string{}}
	defs := make([]string, 0, len(rs.Defs))
	for name := range rs.Defs {
		defs = append(defs, name)
	}
	sort.Strings(defs)
	for _, name := range defs {
		g.names[name] = "valid" + name
	}
	for _, name := range defs {
		if err := g.definition(rs.Defs[name]); err != nil {
			return nil, err
		}
	}
	// Lookups are switches, not map literals: a map is built by code at
	// startup and held on the heap, a switch is code that runs when asked.
	out := newFile()
	out.p("// requires reports whether definition requires member, by itself or")
	out.p("// by the definitions it refers to or is allOf (what the core asks of a")
	out.p("// result without compiling the reference validator).")
	out.p("func requires(definition, member string) bool {")
	out.p("\tswitch definition {")
	for _, name := range defs {
		req, err := g.required(rs.Defs[name])
		if err != nil {
			return nil, err
		}
		if len(req) > 0 {
			out.p("\tcase %q:", name)
			out.p("\t\tswitch member {\n\t\tcase %s:\n\t\t\treturn true\n\t\t}", quoteAll(req))
		}
	}
	out.p("\t}\n\treturn false\n}\n")
	out.p("// surely returns the check of a definition: whether a JSON tree is")
	out.p("// surely valid against it (false: let the reference validator decide).")
	out.p("func surely(definition string) func(any) bool {")
	out.p("\tswitch definition {")
	for _, name := range defs {
		out.p("\tcase %q:\n\t\treturn %s", name, g.names[name])
	}
	out.p("\t}\n\treturn nil\n}\n")
	out.p("// envelope is, for the definitions whose object is JSON-RPC's envelope")
	out.p("// and nothing else, what they ask of a message's parts.")
	out.p("func envelope(definition string) (protocol.Envelope, bool) {")
	out.p("\tswitch definition {")
	for _, name := range defs {
		if e, ok := g.envelopes[name]; ok {
			out.p("\tcase %q:\n\t\treturn protocol.Envelope%s, true", name, e)
		}
	}
	out.p("\t}\n\treturn protocol.Envelope{}, false\n}\n")
	out.Write(g.f.Bytes())
	return out, nil
}

// envelope is the protocol.Envelope literal of a request or notification
// definition whose object holds JSON-RPC's members alone: "id" a
// RequestId (a string or an integer), "jsonrpc" the constant "2.0",
// "method" a constant, "params" any schema, a "required" among them and
// annotations. The reader of messages already holds a message's id and
// jsonrpc to that, so the core checks such a definition on the message's
// method and params, without the message's object. Any other definition
// has none (false). params is the function the definition's own check
// calls for its params ("" for none, or for params every value
// satisfies).
func (g *vgen) envelope(schema any, params string) (string, bool) {
	doc, _ := schema.(map[string]any)
	props, _ := doc["properties"].(map[string]any)
	if doc["type"] != "object" || props["method"] == nil {
		return "", false
	}
	for k := range doc {
		if k != "type" && k != "properties" && k != "required" && !annotation[k] {
			return "", false
		}
	}
	var method string
	for name, p := range props {
		schema, _ := p.(map[string]any)
		switch name {
		case "id":
			if !g.isRequestID(schema) {
				return "", false
			}
		case "jsonrpc":
			if !onlyConst(schema, "2.0") {
				return "", false
			}
		case "method":
			m, ok := schema["const"].(string)
			if !ok || !onlyConst(schema, m) {
				return "", false
			}
			method = m
		case "params":
		default:
			return "", false
		}
	}
	required := map[string]bool{}
	list, _ := doc["required"].([]any)
	for _, r := range list {
		name, _ := r.(string)
		if props[name] == nil && name != "id" && name != "jsonrpc" && name != "method" && name != "params" {
			return "", false
		}
		required[name] = true
	}
	if params == "" {
		params = "nil"
	}
	return fmt.Sprintf("{Method: %q, Params: %s, IDRequired: %v, ParamsRequired: %v}", method, params, required["id"], required["params"]), true
}

// onlyConst reports whether a schema is the string constant c (with its
// type, and annotations), nothing else.
func onlyConst(s map[string]any, c string) bool {
	for k, v := range s {
		switch {
		case k == "const" && v == c, k == "type" && v == "string", annotation[k]:
		default:
			return false
		}
	}
	return s["const"] == c
}

// isRequestID reports whether a schema is a $ref to a definition that is
// a string or an integer and nothing else: what the reader of messages
// holds every id to.
func (g *vgen) isRequestID(s map[string]any) bool {
	ref, _ := s["$ref"].(string)
	if ref == "" || len(s) != 1 {
		return false
	}
	target, ok := g.rs.Defs[strings.TrimSuffix(path.Base(ref), ".json")]
	if !ok {
		return false
	}
	var doc map[string]any
	if err := json.Unmarshal(target.Raw, &doc); err != nil {
		return false
	}
	for k, v := range doc {
		if k == "type" {
			if fmt.Sprint(v) != "[string integer]" {
				return false
			}
		} else if !annotation[k] {
			return false
		}
	}
	return doc["type"] != nil
}

// required lists the members definition d requires: its "required", and
// those of its $ref and allOf branches, as protocol.Validator.Requires
// finds them in the compiled schema (to the same depth).
func (g *vgen) required(d *definition) ([]string, error) {
	var doc any
	if err := json.Unmarshal(d.Raw, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", d.Path, err)
	}
	set := map[string]bool{}
	var walk func(s any, depth int, draft07 bool) error
	walk = func(s any, depth int, draft07 bool) error {
		m, ok := s.(map[string]any)
		if !ok || depth > 8 {
			return nil
		}
		ref, hasRef := m["$ref"].(string)
		if !hasRef || !draft07 { // draft-07 ignores the siblings of $ref, as v6 does
			list, _ := m["required"].([]any)
			for _, r := range list {
				if name, ok := r.(string); ok {
					set[name] = true
				}
			}
			branches, _ := m["allOf"].([]any)
			for _, b := range branches {
				if err := walk(b, depth+1, draft07); err != nil {
					return err
				}
			}
		}
		if hasRef {
			target, ok := g.rs.Defs[strings.TrimSuffix(path.Base(ref), ".json")]
			if !ok {
				return fmt.Errorf("%s: $ref %q names no definition of the revision", d.Path, ref)
			}
			var inner any
			if err := json.Unmarshal(target.Raw, &inner); err != nil {
				return fmt.Errorf("%s: %w", target.Path, err)
			}
			return walk(inner, depth+1, isDraft07(inner))
		}
		return nil
	}
	if err := walk(doc, 0, isDraft07(doc)); err != nil {
		return nil, err
	}
	return sortedKeys(set), nil
}

// isDraft07 reports whether a schema document declares draft-07, whose $ref
// hides its siblings (later drafts apply them too).
func isDraft07(doc any) bool {
	m, _ := doc.(map[string]any)
	return strings.Contains(fmt.Sprint(m["$schema"]), "draft-07")
}

// quoteAll is a Go list of quoted strings.
func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// vgen emits the checks of one revision.
type vgen struct {
	rs    *revisionSchema
	f     *file
	names map[string]string // definition -> its function
	n     int               // functions emitted for inner schemas
	def   string            // the definition being emitted, for errors
	// top is set while a definition's own object is emitted; params is
	// the function its check calls for its params, which its envelope
	// check reuses.
	top       bool
	params    string
	envelopes map[string]string // definition -> its protocol.Envelope literal
}

func (g *vgen) definition(d *definition) error {
	dec := json.NewDecoder(bytes.NewReader(d.Raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("%s: %w", d.Path, err)
	}
	g.def = d.Path
	g.top, g.params = true, ""
	body, err := g.checks(doc, isDraft07(doc))
	if err != nil {
		return err
	}
	if e, ok := g.envelope(doc, g.params); ok {
		g.envelopes[d.Name] = e
	}
	g.f.p("func %s(v any) bool {", g.names[d.Name])
	g.f.p("%s\treturn true\n}\n", body)
	return nil
}

// fn emits an inner schema as a function of its own and returns its
// name ("" for a schema every value satisfies).
func (g *vgen) fn(s any, draft07 bool) (string, error) {
	body, err := g.checks(s, draft07)
	if err != nil || body == "" {
		return "", err
	}
	g.n++
	name := fmt.Sprintf("valid%s_%d", strings.TrimPrefix(g.names[strings.TrimSuffix(path.Base(g.def), ".json")], "valid"), g.n)
	g.f.p("func %s(v any) bool {", name)
	g.f.p("%s\treturn true\n}\n", body)
	return name, nil
}

// annotation keywords say nothing about validity.
var annotation = map[string]bool{"$schema": true, "title": true, "description": true, "default": true,
	"x-mcp-result": true, "x-mcp-task-result": true, "x-mcp-name": true, "x-mcp-header": true, "examples": true, "$comment": true}

// checks returns the statements that return false where v is not surely
// valid against s.
func (g *vgen) checks(s any, draft07 bool) (string, error) {
	switch s := s.(type) {
	case bool:
		if s {
			return "", nil
		}
		return "\treturn false\n", nil
	case map[string]any:
		return g.object(s, draft07)
	}
	return "", fmt.Errorf("%s: a schema that is neither an object nor a boolean: %v", g.def, s)
}

func (g *vgen) object(s map[string]any, draft07 bool) (string, error) {
	top := g.top
	g.top = false
	var b strings.Builder
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if ref, ok := s["$ref"].(string); ok {
		target := strings.TrimSuffix(path.Base(ref), ".json")
		fn, ok := g.names[target]
		if !ok || !strings.HasSuffix(ref, ".json") {
			return "", fmt.Errorf("%s: $ref %q names no definition of the revision", g.def, ref)
		}
		fmt.Fprintf(&b, "\tif !%s(v) {\n\t\treturn false\n\t}\n", fn)
		if draft07 { // draft-07 ignores the siblings of $ref
			return b.String(), nil
		}
	}
	var array, str, num strings.Builder // checks that apply to one kind of value
	var members objectMembers
	for _, k := range keys {
		val := s[k]
		switch k {
		case "$ref":
		case "type":
			check, err := typeCheck(val)
			if err != nil {
				return "", fmt.Errorf("%s: %w", g.def, err)
			}
			fmt.Fprintf(&b, "\tif !(%s) {\n\t\treturn false\n\t}\n", check)
		case "const":
			check, err := constCheck(val)
			if err != nil {
				return "", fmt.Errorf("%s: %w", g.def, err)
			}
			fmt.Fprintf(&b, "\tif !(%s) {\n\t\treturn false\n\t}\n", check)
		case "enum":
			list, _ := val.([]any)
			var alts []string
			for _, e := range list {
				check, err := constCheck(e)
				if err != nil {
					return "", fmt.Errorf("%s: enum: %w", g.def, err)
				}
				alts = append(alts, check)
			}
			if len(alts) == 0 {
				alts = []string{"false"}
			}
			fmt.Fprintf(&b, "\tif !(%s) {\n\t\treturn false\n\t}\n", strings.Join(alts, " || "))
		case "anyOf", "allOf":
			list, _ := val.([]any)
			var calls []string
			always := false
			for _, br := range list {
				fn, err := g.fn(br, draft07)
				if err != nil {
					return "", err
				}
				if fn == "" {
					always = true
					continue
				}
				calls = append(calls, fn+"(v)")
			}
			switch {
			case k == "allOf":
				for _, c := range calls {
					fmt.Fprintf(&b, "\tif !%s {\n\t\treturn false\n\t}\n", c)
				}
			case !always && len(calls) > 0:
				fmt.Fprintf(&b, "\tif !(%s) {\n\t\treturn false\n\t}\n", strings.Join(calls, " || "))
			case !always:
				b.WriteString("\treturn false\n")
			}
		case "properties":
			props, _ := val.(map[string]any)
			for _, p := range sortedKeys(props) {
				fn, err := g.fn(props[p], draft07)
				if err != nil {
					return "", err
				}
				if top && p == "params" {
					g.params = fn
				}
				members.props = append(members.props, property{p, fn})
			}
		case "required":
			list, _ := val.([]any)
			for _, r := range list {
				members.required = append(members.required, fmt.Sprint(r))
			}
		case "additionalProperties":
			members.closed = val == false
			if !members.closed {
				fn, err := g.fn(val, draft07)
				if err != nil {
					return "", err
				}
				members.additional = fn
			}
		case "items":
			if _, tuple := val.([]any); tuple {
				return "", fmt.Errorf("%s: items as an array is not taught to the validator generator", g.def)
			}
			fn, err := g.fn(val, draft07)
			if err != nil {
				return "", err
			}
			if fn != "" {
				fmt.Fprintf(&array, "\t\tfor _, x := range a {\n\t\t\tif !%s(x) {\n\t\t\t\treturn false\n\t\t\t}\n\t\t}\n", fn)
			}
		case "maxItems", "minItems":
			n, err := strconv.Atoi(fmt.Sprint(val))
			if err != nil {
				return "", fmt.Errorf("%s: %s %v", g.def, k, val)
			}
			op := ">"
			if k == "minItems" {
				op = "<"
			}
			fmt.Fprintf(&array, "\t\tif len(a) %s %d {\n\t\t\treturn false\n\t\t}\n", op, n)
		case "minimum", "maximum":
			fn := "AtLeast"
			if k == "maximum" {
				fn = "AtMost"
			}
			fmt.Fprintf(&num, "\tif !protocol.%s(v, %q) {\n\t\treturn false\n\t}\n", fn, fmt.Sprint(val))
		case "format":
			switch val {
			case "uri":
				str.WriteString("\t\tif !protocol.SurelyURI(s) {\n\t\t\treturn false\n\t\t}\n")
			case "uri-template":
				str.WriteString("\t\tif !protocol.SurelyURITemplate(s) {\n\t\t\treturn false\n\t\t}\n")
			case "date-time":
				str.WriteString("\t\treturn false // the reference validator decides\n")
			case "byte": // not a format the reference validator knows: an annotation
			default:
				return "", fmt.Errorf("%s: format %q is not taught to the validator generator", g.def, val)
			}
		default:
			if !annotation[k] {
				return "", fmt.Errorf("%s: keyword %q is not taught to the validator generator", g.def, k)
			}
		}
	}
	if len(members.required) > 64 {
		return "", fmt.Errorf("%s: more than 64 required members is not taught to the validator generator", g.def)
	}
	if object := members.checks(); object != "" {
		fmt.Fprintf(&b, "\tif o, ok := v.(map[string]any); ok {\n%s\t}\n", object)
	}
	if array.Len() > 0 {
		fmt.Fprintf(&b, "\tif a, ok := v.([]any); ok {\n%s\t}\n", &array)
	}
	if str.Len() > 0 {
		fmt.Fprintf(&b, "\tif s, ok := v.(string); ok {\n%s\t}\n", &str)
	}
	b.WriteString(num.String())
	return b.String(), nil
}

// objectMembers is what a schema asks of an object's members: its
// properties' checks, the members it requires, and what it says of the
// others (additionalProperties).
type objectMembers struct {
	props      []property // sorted by name
	required   []string
	closed     bool   // additionalProperties: false
	additional string // the check of the others ("": none)
}

// property is a property's name and its check ("": none).
type property struct{ name, fn string }

// checks is the Go code that checks an object o's members, "" for none.
// A lookup in a small Go map hashes its key, about 140 instructions: an
// object with more than two lookups to make is gone over once instead,
// its members told apart by a switch (the required ones marked in a bit
// set), which costs about one lookup and a few dozen instructions a
// member.
func (m objectMembers) checks() string {
	lookups := len(m.required)
	for _, p := range m.props {
		if p.fn != "" {
			lookups++
		}
	}
	if !m.closed && m.additional == "" && lookups <= 2 {
		var b strings.Builder
		for _, p := range m.props {
			if p.fn != "" {
				fmt.Fprintf(&b, "\t\tif x, ok := o[%q]; ok && !%s(x) {\n\t\t\treturn false\n\t\t}\n", p.name, p.fn)
			}
		}
		for _, r := range m.required {
			fmt.Fprintf(&b, "\t\tif _, ok := o[%q]; !ok {\n\t\t\treturn false\n\t\t}\n", r)
		}
		return b.String()
	}
	if m.closed && len(m.props) == 0 && len(m.required) == 0 {
		return "\t\tif len(o) != 0 {\n\t\t\treturn false\n\t\t}\n"
	}
	// One case a member the schema names: its check, its bit when it is
	// required; the others get the additionalProperties check.
	other := ""
	switch {
	case m.closed:
		other = "\t\t\t\treturn false\n"
	case m.additional != "":
		other = fmt.Sprintf("\t\t\t\tif !%s(x) {\n\t\t\t\t\treturn false\n\t\t\t\t}\n", m.additional)
	}
	type member struct {
		fn       string
		property bool
		bit      int // -1: not required
	}
	named := map[string]*member{}
	for _, p := range m.props {
		named[p.name] = &member{fn: p.fn, property: true, bit: -1}
	}
	for i, r := range m.required {
		if named[r] == nil {
			named[r] = &member{bit: -1}
		}
		if named[r].bit < 0 { // the first of a name required twice
			named[r].bit = i
		}
	}
	var cases strings.Builder
	usesX := m.additional != ""
	for _, name := range sortedKeys(named) {
		mb := named[name]
		var body strings.Builder
		if mb.bit >= 0 {
			fmt.Fprintf(&body, "\t\t\t\tseen |= 1 << %d\n", mb.bit)
		}
		switch {
		case mb.fn != "":
			fmt.Fprintf(&body, "\t\t\t\tif !%s(x) {\n\t\t\t\t\treturn false\n\t\t\t\t}\n", mb.fn)
			usesX = true
		case !mb.property: // required, not a property: one of the others
			body.WriteString(other)
		}
		if body.Len() == 0 && other == "" {
			continue // nothing to do for it, and nothing for the others either
		}
		fmt.Fprintf(&cases, "\t\t\tcase %q:\n%s", name, &body)
	}
	if other != "" {
		fmt.Fprintf(&cases, "\t\t\tdefault:\n%s", other)
	}
	var b strings.Builder
	if len(m.required) > 0 {
		b.WriteString("\t\tvar seen uint64\n")
	}
	vars := "k"
	if usesX {
		vars = "k, x"
	}
	fmt.Fprintf(&b, "\t\tfor %s := range o {\n\t\t\tswitch k {\n%s\t\t\t}\n\t\t}\n", vars, &cases)
	if len(m.required) > 0 {
		all := uint64(0)
		for _, mb := range named {
			if mb.bit >= 0 {
				all |= 1 << mb.bit
			}
		}
		fmt.Fprintf(&b, "\t\tif seen != %#x {\n\t\t\treturn false\n\t\t}\n", all)
	}
	return b.String()
}

// typeCheck is the expression that v has one of the types.
func typeCheck(t any) (string, error) {
	var types []string
	switch t := t.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	default:
		return "", fmt.Errorf("type %v", t)
	}
	var alts []string
	for _, t := range types {
		switch t {
		case "object":
			alts = append(alts, "protocol.IsObject(v)")
		case "array":
			alts = append(alts, "protocol.IsArray(v)")
		case "string":
			alts = append(alts, "protocol.IsString(v)")
		case "boolean":
			alts = append(alts, "protocol.IsBool(v)")
		case "null":
			alts = append(alts, "v == nil")
		case "number":
			alts = append(alts, "protocol.IsNumber(v)")
		case "integer":
			alts = append(alts, "protocol.SurelyInteger(v)")
		default:
			return "", fmt.Errorf("type %q", t)
		}
	}
	return strings.Join(alts, " || "), nil
}

// constCheck is the expression that v surely equals c.
func constCheck(c any) (string, error) {
	switch c := c.(type) {
	case string:
		return fmt.Sprintf("protocol.IsConst(v, %q)", c), nil
	case bool:
		return fmt.Sprintf("v == %v", c), nil
	case nil:
		return "v == nil", nil
	case json.Number:
		return fmt.Sprintf("protocol.IsNumberText(v, %q)", c.String()), nil
	}
	return "", fmt.Errorf("const %v of type %T is not taught to the validator generator", c, c)
}
