package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/atombender/go-jsonschema/pkg/schemas"
)

// typeKind is the shape of a Go type the generator emits.
type typeKind int

const (
	kAny       typeKind = iota // a free-form JSON value
	kString                    // string
	kInt                       // int64
	kFloat                     // float64
	kBool                      // bool
	kID                        // wire.ID: string or integer
	kArray                     // []elem
	kMap                       // map[string]elem
	kNamed                     // a declared type
	kOneOrMany                 // one value or an array of them: []elem, the form remembered
)

// goType is a Go type expression.
type goType struct {
	Kind     typeKind
	Elem     *goType
	Name     string // kNamed
	Nullable bool   // JSON null is a value of it
}

func (t *goType) key() string {
	switch t.Kind {
	case kArray:
		return "[]" + t.Elem.key()
	case kMap:
		return "map[" + t.Elem.key() + "]"
	case kNamed:
		return "N:" + t.Name
	case kOneOrMany:
		return "1*" + t.Elem.key()
	}
	return fmt.Sprint(int(t.Kind), t.Nullable)
}

var anyType = &goType{Kind: kAny}

// declKind says what a declared type is.
type declKind int

const (
	dStruct declKind = iota // an object with known properties
	dUnion                  // a sealed interface over struct members
	dEnum                   // a string with a closed set of values
	dAlias                  // another name for a type expression
)

// decl is one declared Go type of the canonical model.
type decl struct {
	Name    string
	Kind    declKind
	Doc     string
	Ref     string // schema path of the newest revision that defines it by name
	Named   bool   // defined by name in some revision (not an inline object)
	Revs    []bool // indexed by revision: the revision has this type
	Fields  []*field
	Members []*member // dUnion
	Tag     string    // dUnion: the discriminating const property, "" when decided by presence
	Values  []string  // dEnum
	Alias   *goType   // dAlias

	// per-revision field sets, used to compute what a projection drops
	revFields []map[string]bool
	// open: the object declares additionalProperties itself, so members it
	// does not name are welcome there and a projection drops none.
	open bool
}

type field struct {
	JSON     string
	Go       string
	Type     *goType
	Const    string // the property is a constant in every revision that has it
	Required bool   // required in every revision, so always present
	// Default is the JSON text of the property's "default", written by the
	// encoders where a revision requires the member and the value is
	// absent (a result's resultType "complete"): the schema, not the
	// handwritten code, says what an answer that leaves it out means.
	Default  string
	revs     []bool
	required []bool
	owner    string // the struct declaring it
}

type member struct {
	Type     string   // struct decl
	Tag      string   // tag value, for tagged unions
	Required []string // required properties, for presence unions
}

// model is the canonical model: every declaration of every revision merged
// under one name, plus the method table.
type model struct {
	Revisions []*revisionSchema
	Decls     map[string]*decl
	Methods   []*method
}

// method is one JSON-RPC method of some revision.
type method struct {
	Name         string // "tools/call"
	Request      string // newest request definition name, e.g. CallToolRequest
	GoName       string // Handler method name
	Notification bool
	Params       *goType // nil when the request has no params member
	Result       *goType // nil for notifications
	C2S, S2C     bool
	Revs         []revMethod // indexed by revision; zero value: absent
}

// revMethod is what one revision says about a method.
type revMethod struct {
	Present        bool
	Request        string // definition the whole message is validated against
	Result         string // definition the result is validated against
	ParamsRequired bool
	TaskResult     string // what it is answered with when it runs as a task; "" when it cannot
	NameParam      string // the params member its Mcp-Name header repeats (x-mcp-name); "" for none
	TaskExtension  string // the extension that lets it run as a task ("" for params.task)
	Extension      string // the extension that adds it ("" for the revision's own)
	C2S, S2C       bool
}

// messageUnions are the anyOf definitions that list messages: they decide
// direction in the method table and are never decoded into Go values
// (results are decoded through the method table, never guessed).
var messageUnions = map[string]bool{
	"ClientRequest": true, "ServerRequest": true, "ClientNotification": true,
	"ServerNotification": true, "ClientResult": true, "ServerResult": true,
	"JSONRPCMessage": true, "JSONRPCResponse": true, "JSONRPCBatchRequest": true,
	"JSONRPCBatchResponse": true,
}

// builder lowers one revision's definitions into declarations.
type builder struct {
	rs     *revisionSchema
	decls  map[string]*decl // this revision's declarations
	origin map[string]*schemas.Type
	errs   []string
}

func (b *builder) fail(format string, args ...any) {
	b.errs = append(b.errs, fmt.Sprintf(b.rs.Name+": "+format, args...))
}

// buildRevision declares every definition of a revision.
func buildRevision(rs *revisionSchema, nrev int) (map[string]*decl, error) {
	b := &builder{rs: rs, decls: map[string]*decl{}, origin: map[string]*schemas.Type{}}
	for _, name := range sortedKeys(rs.Defs) {
		if messageUnions[name] {
			continue
		}
		b.def(name)
	}
	for _, d := range b.decls {
		d.Revs = make([]bool, nrev)
		d.Revs[rs.Index] = true
		d.revFields = make([]map[string]bool, nrev)
		set := map[string]bool{}
		for _, f := range d.Fields {
			set[f.JSON] = true
			f.revs = make([]bool, nrev)
			f.revs[rs.Index] = true
			f.required = make([]bool, nrev)
			f.required[rs.Index] = f.Required
		}
		if d.Kind == dStruct && !d.open {
			d.revFields[rs.Index] = set
		}
	}
	if len(b.errs) > 0 {
		sort.Strings(b.errs)
		return nil, fmt.Errorf("%s", strings.Join(b.errs, "\n"))
	}
	return b.decls, nil
}

// def declares a named definition once and returns its type.
func (b *builder) def(name string) *goType {
	d := b.rs.Defs[name]
	if d == nil {
		b.fail("no definition %s", name)
		return anyType
	}
	if _, done := b.decls[name]; done {
		return &goType{Kind: kNamed, Name: name}
	}
	if messageUnions[name] {
		return anyType
	}
	t := d.Body
	// Placeholder first: definitions may refer to themselves.
	dc := &decl{Name: name, Kind: dAlias, Alias: anyType, Doc: d.Description, Ref: d.Path, Named: true}
	b.decls[name] = dc
	switch {
	case t.Ref != "":
		dc.Alias = b.typeOf(t, name)
	case len(t.AnyOf) > 0:
		if u := b.union(t.AnyOf, name); u != nil {
			*dc = *u
			dc.Doc, dc.Ref, dc.Named = d.Description, d.Path, true
		} else {
			dc.Alias = b.typeOf(t, name)
		}
	case isObject(t) && (len(t.Properties) > 0 || len(t.AllOf) > 0):
		b.structDecl(dc, t, name)
	case len(t.Enum) > 0 && t.Type.Equals(schemas.TypeList{"string"}):
		dc.Kind = dEnum
		for _, v := range t.Enum {
			dc.Values = append(dc.Values, fmt.Sprint(v))
		}
	default:
		dc.Alias = b.typeOf(t, name)
	}
	return &goType{Kind: kNamed, Name: name}
}

func isObject(t *schemas.Type) bool {
	return len(t.Properties) > 0 || len(t.AllOf) > 0 || (len(t.Type) == 1 && t.Type[0] == "object")
}

// flatten merges allOf branches into one object schema.
func (b *builder) flatten(t *schemas.Type) *schemas.Type {
	if len(t.AllOf) == 0 {
		return t
	}
	out := &schemas.Type{Type: schemas.TypeList{"object"}, Properties: map[string]*schemas.Type{}}
	add := func(s *schemas.Type) {
		for k, v := range s.Properties {
			out.Properties[k] = v
		}
		out.Required = append(out.Required, s.Required...)
	}
	var walk func(s *schemas.Type)
	walk = func(s *schemas.Type) {
		if s.Ref != "" {
			if d := b.rs.Defs[refName(s.Ref)]; d != nil {
				walk(d.Body)
			}
			return
		}
		for _, a := range s.AllOf {
			walk(a)
		}
		add(s)
	}
	walk(t)
	return out
}

// structDecl fills dc with the properties of an object schema.
func (b *builder) structDecl(dc *decl, t *schemas.Type, name string) {
	dc.open = t.AdditionalProperties != nil && t.AdditionalProperties.Not == nil
	t = b.flatten(t)
	dc.Kind = dStruct
	required := map[string]bool{}
	for _, r := range t.Required {
		required[r] = true
	}
	goNames := map[string]string{}
	for _, prop := range sortedKeys(t.Properties) {
		p := t.Properties[prop]
		f := &field{JSON: prop, Go: goName(prop), Required: required[prop]}
		if prev, clash := goNames[f.Go]; clash || f.Go == "Extra" {
			f.Go = goName(strings.ReplaceAll(prop, "/", "_"))
			if prev2, clash2 := goNames[f.Go]; clash2 || f.Go == "Extra" {
				b.fail("%s: properties %q and %q map to one Go name %s", name, prev, prev2, f.Go)
			}
		}
		goNames[f.Go] = prop
		if p.Default != nil {
			text, err := json.Marshal(p.Default)
			if err != nil {
				b.fail("%s.%s: default: %v", name, prop, err)
			}
			f.Default = string(text)
		}
		if c, ok := p.Const.(string); ok && p.Const != nil {
			f.Const = c
			f.Type = &goType{Kind: kString}
		} else {
			f.Type = b.typeOf(p, name+f.Go)
		}
		dc.Fields = append(dc.Fields, f)
	}
}

// inline declares an object schema that has no name of its own under ctx
// (parent type + property).
func (b *builder) inline(t *schemas.Type, ctx string) *goType {
	if prev, ok := b.decls[ctx]; ok {
		if b.origin[ctx] == t {
			return &goType{Kind: kNamed, Name: ctx}
		}
		if _, isDef := b.rs.Defs[ctx]; !isDef || prev.Named {
			// A second inline object under the same name, or one that
			// would shadow a definition: number it.
			for i := 2; ; i++ {
				n := fmt.Sprintf("%s%d", ctx, i)
				if _, taken := b.decls[n]; !taken {
					ctx = n
					break
				}
			}
		}
	}
	dc := &decl{Name: ctx}
	b.decls[ctx] = dc
	b.origin[ctx] = t
	b.structDecl(dc, t, ctx)
	return &goType{Kind: kNamed, Name: ctx}
}

// typeOf lowers a schema into a Go type expression; ctx names inline objects.
func (b *builder) typeOf(t *schemas.Type, ctx string) *goType {
	if t == nil {
		return anyType
	}
	if t.Ref != "" {
		return b.def(refName(t.Ref))
	}
	if len(t.AllOf) > 0 {
		return b.inline(t, ctx)
	}
	if len(t.AnyOf) > 0 {
		return b.anyOf(t.AnyOf, ctx)
	}
	types := []string(t.Type)
	nullable := false
	if len(types) == 2 && (types[0] == "null" || types[1] == "null") {
		nullable = true
		if types[0] == "null" {
			types = types[1:]
		} else {
			types = types[:1]
		}
	}
	if len(types) > 1 {
		if len(types) == 2 && has(types, "string") && has(types, "integer") {
			return &goType{Kind: kID}
		}
		return anyType
	}
	kind := ""
	if len(types) == 1 {
		kind = types[0]
	} else if len(t.Properties) > 0 {
		kind = "object"
	}
	var out *goType
	switch kind {
	case "object":
		switch {
		case len(t.Properties) > 0:
			out = b.inline(t, ctx)
		case t.AdditionalProperties != nil && !isEmptySchema(t.AdditionalProperties):
			out = &goType{Kind: kMap, Elem: b.typeOf(t.AdditionalProperties, ctx+"Value")}
		default:
			out = &goType{Kind: kMap, Elem: anyType}
		}
	case "array":
		out = &goType{Kind: kArray, Elem: b.typeOf(t.Items, ctx+"Item")}
	case "string":
		out = &goType{Kind: kString}
	case "integer":
		out = &goType{Kind: kInt}
	case "number":
		out = &goType{Kind: kFloat}
	case "boolean":
		out = &goType{Kind: kBool}
	default:
		return anyType
	}
	if nullable {
		c := *out
		c.Nullable = true
		out = &c
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func isEmptySchema(t *schemas.Type) bool {
	return t.Ref == "" && len(t.Type) == 0 && len(t.Properties) == 0 && len(t.AnyOf) == 0 &&
		len(t.AllOf) == 0 && t.Items == nil && t.AdditionalProperties == nil && t.Not == nil && t.Const == nil
}

// anyOf lowers an inline union.
func (b *builder) anyOf(branches []*schemas.Type, ctx string) *goType {
	if t := b.oneOrMany(branches); t != nil {
		return t
	}
	if u := b.union(branches, ctx); u != nil {
		if prev, ok := b.decls[ctx]; ok && prev.Kind == dUnion && sameMembers(prev, u) {
			return &goType{Kind: kNamed, Name: ctx}
		}
		b.decls[ctx] = u
		return &goType{Kind: kNamed, Name: ctx}
	}
	// string | integer written as branches
	kinds := map[string]bool{}
	for _, br := range branches {
		if br.Ref != "" || len(br.Type) != 1 {
			return anyType
		}
		kinds[br.Type[0]] = true
	}
	if len(kinds) == 2 && kinds["string"] && kinds["integer"] {
		return &goType{Kind: kID}
	}
	return anyType
}

func sameMembers(a, b *decl) bool {
	if len(a.Members) != len(b.Members) {
		return false
	}
	for i := range a.Members {
		if a.Members[i].Type != b.Members[i].Type {
			return false
		}
	}
	return true
}

// union builds a sealed-interface declaration when every branch references
// an object definition and the branches can be told apart: by a constant
// property with distinct values (a tagged union) or by which required
// properties are present. Otherwise it returns nil and the caller falls back.
func (b *builder) union(branches []*schemas.Type, name string) *decl {
	var members []*member
	var bodies []*schemas.Type
	for _, br := range branches {
		if br.Ref == "" {
			return nil
		}
		target := b.resolveAlias(refName(br.Ref))
		d := b.rs.Defs[target]
		if d == nil || messageUnions[target] || len(d.Body.AnyOf) > 0 || !isObject(d.Body) || len(d.Body.Properties) == 0 && len(d.Body.AllOf) == 0 {
			return nil
		}
		b.def(target)
		body := b.flatten(d.Body)
		members = append(members, &member{Type: target, Required: append([]string(nil), body.Required...)})
		bodies = append(bodies, body)
	}
	u := &decl{Name: name, Kind: dUnion, Members: members}
	if tag := discriminator(bodies); tag != "" {
		u.Tag = tag
		for i, m := range members {
			m.Tag = bodies[i].Properties[tag].Const.(string)
			m.Required = nil
		}
		return u
	}
	// Presence: no member's required set may contain another's, or a
	// value with both could not be placed.
	for i := range members {
		sort.Strings(members[i].Required)
		for j := range members {
			if i != j && subset(members[i].Required, members[j].Required) {
				return nil
			}
		}
	}
	return u
}

// resolveAlias follows definitions that are a bare $ref (EmptyResult -> Result).
func (b *builder) resolveAlias(name string) string {
	for i := 0; i < 8; i++ {
		d := b.rs.Defs[name]
		if d == nil || d.Body.Ref == "" || len(d.Body.Properties) > 0 {
			return name
		}
		name = refName(d.Body.Ref)
	}
	return name
}

// discriminator finds a property that is a string constant in every branch,
// with distinct values.
func discriminator(bodies []*schemas.Type) string {
	if len(bodies) == 0 {
		return ""
	}
	for _, prop := range sortedKeys(bodies[0].Properties) {
		seen := map[string]bool{}
		ok := true
		for _, body := range bodies {
			p := body.Properties[prop]
			c, isStr := "", false
			if p != nil {
				c, isStr = p.Const.(string)
			}
			if !isStr || seen[c] || !has(body.Required, prop) {
				ok = false
				break
			}
			seen[c] = true
		}
		if ok {
			return prop
		}
	}
	return ""
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !has(b, x) {
			return false
		}
	}
	return true
}

// oneOrMany recognises "one or several": anyOf(X, array of X), or the
// members of a union U spelled out beside an array of U (sampling content
// in 2025-11-25 and after).
func (b *builder) oneOrMany(branches []*schemas.Type) *goType {
	var singles []string
	elem := ""
	for _, br := range branches {
		switch {
		case br.Ref != "":
			singles = append(singles, refName(br.Ref))
		case len(br.Type) == 1 && br.Type[0] == "array" && br.Items != nil && br.Items.Ref != "" && elem == "":
			elem = refName(br.Items.Ref)
		default:
			return nil
		}
	}
	if elem == "" || len(singles) == 0 {
		return nil
	}
	same := len(singles) == 1 && singles[0] == elem
	if d := b.rs.Defs[elem]; !same && d != nil && len(d.Body.AnyOf) == len(singles) {
		members := map[string]bool{}
		for _, m := range d.Body.AnyOf {
			members[refName(m.Ref)] = true
		}
		same = true
		for _, n := range singles {
			same = same && members[n]
		}
	}
	if !same {
		return nil
	}
	return &goType{Kind: kOneOrMany, Elem: b.def(elem)}
}
