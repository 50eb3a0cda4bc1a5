package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path"
	"sort"
	"strings"
)

// header starts every generated file; gopls and linters key on its first line.
func header(pkg, provenance string) string {
	return generatedHeader + "\n// " + provenance + "\n\npackage " + pkg + "\n\n"
}

// file is one generated Go file under construction.
type file struct {
	bytes.Buffer
	imports map[string]bool
}

func newFile() *file { return &file{imports: map[string]bool{}} }

func (f *file) p(format string, args ...any) {
	fmt.Fprintf(&f.Buffer, format, args...)
	f.WriteByte('\n')
}

func (f *file) use(pkg string) { f.imports[pkg] = true }

// render formats the file; a failure keeps the unformatted text in the
// error so the generator bug can be found.
func (f *file) render(head string) ([]byte, error) {
	var out bytes.Buffer
	out.WriteString(head)
	for _, pkg := range qualifiersIn(f.Bytes(), wirePkg, codecPkg, protocolPkg, jsontreePkg) {
		f.use(pkg) // wherever an emitter used it
	}
	if len(f.imports) > 0 {
		out.WriteString("import (\n")
		for _, imp := range sortedKeys(f.imports) {
			fmt.Fprintf(&out, "\t%q\n", imp)
		}
		out.WriteString(")\n\n")
	}
	out.Write(f.Bytes())
	src, err := format.Source(out.Bytes())
	if err != nil {
		return out.Bytes(), fmt.Errorf("format: %w", err)
	}
	return src, nil
}

// qualifiersIn returns the packages of pkgs whose name qualifies an
// identifier in the Go declarations src (a name in a comment or a string
// does not count). Unparsable src yields none: rendering reports it.
func qualifiersIn(src []byte, pkgs ...string) []string {
	file, err := parser.ParseFile(token.NewFileSet(), "", append([]byte("package p\n"), src...), parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	used := map[string]bool{}
	ast.Inspect(file, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	})
	var out []string
	for _, pkg := range pkgs {
		if used[path.Base(pkg)] {
			out = append(out, pkg)
		}
	}
	return out
}

const (
	wirePkg     = "github.com/mcpstack/mcpstack/wire"
	codecPkg    = "github.com/mcpstack/mcpstack/internal/codec"
	protocolPkg = "github.com/mcpstack/mcpstack/internal/protocol"
	jsontreePkg = "github.com/mcpstack/mcpstack/internal/jsontree"
	schemaPkg   = "github.com/mcpstack/mcpstack/schema"
	canonPkg    = "github.com/mcpstack/mcpstack/mcp"
)

// canonical emits the revision-neutral package mcp.
type canonical struct {
	m    *model
	tags map[string]bool // property + "\x00" + struct: the struct's union tag

	reqVars []string // per-revision required-member masks

	transport *transportFacts // schema/transport.json
}

func (c *canonical) decl(t *goType) *decl {
	if t == nil || t.Kind != kNamed {
		return nil
	}
	return c.m.Decls[t.Name]
}

// resolved follows aliases to the type they stand for.
func (c *canonical) resolved(t *goType) *goType {
	for i := 0; i < 8; i++ {
		d := c.decl(t)
		if d == nil || d.Kind != dAlias {
			return t
		}
		t = d.Alias
	}
	return t
}

func (c *canonical) isStruct(t *goType) bool {
	d := c.decl(c.resolved(t))
	return d != nil && d.Kind == dStruct
}

// goExpr is the Go spelling of a type; struct elements of slices and maps
// are pointers.
func (c *canonical) goExpr(t *goType) string {
	switch t.Kind {
	case kAny:
		return "any"
	case kString:
		return "string"
	case kInt:
		return "int64"
	case kFloat:
		return "float64"
	case kBool:
		return "bool"
	case kID:
		return "wire.ID"
	case kArray:
		return "[]" + c.elemExpr(t.Elem)
	case kMap:
		return "map[string]" + c.elemExpr(t.Elem)
	case kNamed:
		return t.Name
	case kOneOrMany:
		return "[]" + c.elemExpr(t.Elem)
	}
	panic("unknown kind")
}

func (c *canonical) elemExpr(t *goType) string {
	if c.isStruct(t) {
		return "*" + c.goExpr(t)
	}
	return c.goExpr(t)
}

// fieldExpr is the Go type of a struct field. Optional structs and optional
// or nullable numbers and booleans are pointers, so that absent differs from
// zero; optional strings, slices and maps use their zero value for absent.
func (c *canonical) fieldExpr(f *field) string {
	r := c.resolved(f.Type)
	if r.Kind == kAny || r.Kind == kArray || r.Kind == kMap || r.Kind == kID || r.Kind == kOneOrMany {
		return c.goExpr(f.Type)
	}
	if d := c.decl(r); d != nil && d.Kind == dUnion {
		return c.goExpr(f.Type)
	}
	isPtr := false
	switch {
	case c.isStruct(r):
		isPtr = !f.Required || r.Nullable
	case r.Kind == kString || (c.decl(r) != nil && c.decl(r).Kind == dEnum):
		isPtr = r.Nullable
	default: // numbers, booleans
		isPtr = !f.Required || r.Nullable
	}
	if isPtr {
		return "*" + c.goExpr(f.Type)
	}
	return c.goExpr(f.Type)
}

func (c *canonical) revList(revs []bool) string {
	var names []string
	for i, ok := range revs {
		if ok {
			names = append(names, c.m.Revisions[i].Name)
		}
	}
	return strings.Join(names, ", ")
}

func (c *canonical) declNames(kind declKind) []string {
	var out []string
	for _, n := range sortedKeys(c.m.Decls) {
		if c.m.Decls[n].Kind == kind {
			out = append(out, n)
		}
	}
	return out
}

func doc(f *file, name, text string) {
	if text == "" {
		text = "is an object of the MCP schemas."
		f.p("// %s %s", name, text)
		return
	}
	f.p("// %s: %s", name, text)
}

// types emits the declarations: structs, enums and aliases.
func (c *canonical) types() *file {
	f := newFile()
	for _, n := range sortedKeys(c.m.Decls) {
		d := c.m.Decls[n]
		switch d.Kind {
		case dStruct:
			doc(f, n, d.Doc)
			c.refComment(f, d)
			f.p("type %s struct {", n)
			for _, fl := range d.Fields {
				if fl.Const != "" {
					continue
				}
				req := ""
				if fl.Required {
					req = ", required"
				}
				f.p("\t%s %s // %q%s", fl.Go, c.fieldExpr(fl), fl.JSON, req)
			}
			f.p("\t// Extra keeps members this model does not know, so that a decode")
			f.p("\t// and re-encode loses nothing.")
			f.p("\tExtra map[string]any")
			if c.hasEmptyStrings(d) {
				f.p("\n\t// present remembers optional constants, empty strings and arrays of")
				f.p("\t// one that a decoded message held, so that encoding writes them again.")
				f.p("\tpresent uint64")
			}
			f.p("}\n")
		case dEnum:
			doc(f, n, d.Doc)
			c.refComment(f, d)
			f.p("type %s string\n", n)
			f.p("const (")
			for _, v := range d.Values {
				f.p("\t%s%s %s = %q", n, goName(v), n, v)
			}
			f.p(")\n")
		case dAlias:
			doc(f, n, d.Doc)
			c.refComment(f, d)
			f.p("type %s = %s\n", n, c.goExpr(d.Alias))
		}
	}
	return f
}

func (c *canonical) refComment(f *file, d *decl) {
	if d.Ref != "" {
		f.p("//\n// Ref: schema/%s", d.Ref)
	}
	f.p("// Revisions: %s.", c.revList(d.Revs))
}

// unions emits the sealed interfaces and their decoders.
func (c *canonical) unions() *file {
	f := newFile()
	names := c.declNames(dUnion)
	markers := map[string][]string{}
	for _, n := range names {
		d := c.m.Decls[n]
		doc(f, n, d.Doc)
		var mem []string
		for _, mb := range d.Members {
			mem = append(mem, "*"+mb.Type)
			markers[mb.Type] = append(markers[mb.Type], n)
		}
		f.p("//\n// Members: %s.", strings.Join(mem, ", "))
		if d.Tag != "" {
			f.p("// Decided by the constant %q.", d.Tag)
		} else {
			f.p("// Decided by which required members are present.")
		}
		if d.Ref != "" {
			f.p("// Ref: schema/%s", d.Ref)
		}
		f.p("type %s interface {", n)
		f.p("\twire.Encoder")
		f.p("\tAppendJSON(b []byte, rev int) ([]byte, bool)")
		f.p("\tis%s()", n)
		f.p("}\n")
		f.p("// Decode%s decodes a tree into the member it holds.", n)
		f.p("func Decode%s(v any, rev int) (%s, error) {", n, n)
		f.p("\tobj, err := codec.Object(v)")
		f.p("\tif err != nil {\n\t\treturn nil, err\n\t}")
		if d.Tag != "" {
			f.p("\ttag, _ := obj[%q].(string)", d.Tag)
			f.p("\tswitch tag {")
			for _, mb := range d.Members {
				f.p("\tcase %q:", mb.Tag)
				f.p("\t\tx := new(%s)", mb.Type)
				f.p("\t\treturn x, x.DecodeValue(obj, rev)")
			}
			f.p("\t}")
			f.use("fmt")
			f.p("\treturn nil, jsontree.At(&jsontree.DecodeError{Reason: fmt.Sprintf(\"unknown %s %%q\", tag)}, %q)", d.Tag, d.Tag)
		} else {
			f.p("\tbest, most := -1, -1")
			for i, mb := range d.Members {
				var conds []string
				for _, r := range mb.Required {
					conds = append(conds, fmt.Sprintf("has(obj, %q)", r))
				}
				if len(conds) == 0 {
					conds = []string{"true"}
				}
				f.p("\tif %s && %d > most {\n\t\tbest, most = %d, %d\n\t}", strings.Join(conds, " && "), len(mb.Required), i, len(mb.Required))
			}
			f.p("\tswitch best {")
			for i, mb := range d.Members {
				f.p("\tcase %d:", i)
				f.p("\t\tx := new(%s)", mb.Type)
				f.p("\t\treturn x, x.DecodeValue(obj, rev)")
			}
			f.p("\t}")
			f.p("\treturn nil, &jsontree.DecodeError{Reason: %q}", "matches no member of "+n)
		}
		f.p("}\n")
	}
	for _, t := range sortedKeys(markers) {
		for _, u := range markers[t] {
			f.p("func (*%s) is%s() {}", t, u)
		}
	}
	f.p("\nfunc has(obj map[string]any, key string) bool {\n\t_, ok := obj[key]\n\treturn ok\n}")
	return f
}

// decode emits DecodeValue and UnmarshalJSON for every struct.
func (c *canonical) decode() *file {
	f := newFile()
	for _, n := range c.declNames(dStruct) {
		d := c.m.Decls[n]
		masks, anyDrop := c.masks(d)
		partial := c.partial(d)
		if anyDrop {
			var parts []string
			for _, m := range masks {
				parts = append(parts, fmt.Sprintf("%#x", m))
			}
			f.p("// drop%s marks, per revision, the members it does not define.", n)
			f.p("var drop%s = [%d]uint64{%s}\n", n, len(masks), strings.Join(parts, ", "))
		}
		if partial {
			var in []string
			for _, ok := range d.Revs {
				in = append(in, fmt.Sprint(ok))
			}
			f.p("// revs%s marks the revisions that define %s.", n, n)
			f.p("var revs%s = [%d]bool{%s}\n", n, len(d.Revs), strings.Join(in, ", "))
		}
		f.p("// DecodeValue fills x from a decoded tree of revision rev (wire.AllRevisions")
		f.p("// for any). Members x does not know, or that rev does not define, go to Extra.")
		f.p("func (x *%s) DecodeValue(v any, rev int) error {", n)
		f.p("\tobj, err := codec.Object(v)")
		f.p("\tif err != nil {\n\t\treturn err\n\t}")
		if anyDrop {
			f.p("\tdrop := dropMask(&drop%s, rev)", n)
		}
		if partial {
			f.p("\t// Where rev lacks %s it sits in an open object: a member of", n)
			f.p("\t// another shape is kept in Extra rather than refused.")
			f.p("\tdefined := rev < 0 || rev >= len(revs%s) || revs%s[rev]", n, n)
		}
		f.p("\tfor k, fv := range obj {")
		f.p("\t\tswitch k {")
		for i, fl := range d.Fields {
			f.p("\t\tcase %q:", fl.JSON)
			if anyDrop && fieldMayDrop(masks, i) {
				f.p("\t\t\tif drop&(1<<%d) != 0 {\n\t\t\t\tcodec.Extra(&x.Extra, k, fv)\n\t\t\t\tcontinue\n\t\t\t}", i)
			}
			if fl.Const != "" {
				if c.constRemembered(fl) {
					f.p("\t\t\tx.present |= 1 << %d", i)
				}
				continue // a constant: validation checked it, encoding writes it
			}
			if c.emptyStringKept(fl) {
				f.p("\t\t\tif fv == \"\" {\n\t\t\t\tx.present |= 1 << %d\n\t\t\t}", i)
			}
			if partial {
				f.p("\t\t\tif err := func() error {")
				c.decodeField(f, fl, i)
				f.p("\t\t\t\treturn nil")
				f.p("\t\t\t}(); err != nil {")
				f.p("\t\t\t\tif defined {\n\t\t\t\t\treturn err\n\t\t\t\t}")
				f.p("\t\t\t\tcodec.Extra(&x.Extra, k, fv)")
				f.p("\t\t\t}")
				continue
			}
			c.decodeField(f, fl, i)
		}
		f.p("\t\tdefault:\n\t\t\tcodec.Extra(&x.Extra, k, fv)")
		f.p("\t\t}")
		f.p("\t}")
		f.p("\treturn nil")
		f.p("}\n")
		f.p("// UnmarshalJSON decodes JSON through DecodeValue.")
		f.p("func (x *%s) UnmarshalJSON(b []byte) error {", n)
		f.p("\tv, err := jsontree.Parse(b)")
		f.p("\tif err != nil {\n\t\treturn err\n\t}")
		f.p("\t*x = %s{}", n)
		f.p("\treturn x.DecodeValue(v, wire.AllRevisions)")
		f.p("}\n")
	}
	return f
}

func (c *canonical) decodeField(f *file, fl *field, bit int) {
	wrap := fmt.Sprintf("jsontree.At(%%s, %q)", fl.JSON)
	if r := c.resolved(fl.Type); r.Kind == kOneOrMany {
		// an array is remembered as such; one value decodes to a slice of one
		f.p("\t\t\tif _, many := fv.([]any); many {")
		f.p("\t\t\t\tx.present |= 1 << %d", bit)
		c.decodeInto(f, &goType{Kind: kArray, Elem: r.Elem}, "fv", "x."+fl.Go, wrap, 0)
		f.p("\t\t\t} else {")
		f.p("\t\t\t\tvar one %s", c.elemExpr(r.Elem))
		c.decodeElem(f, r.Elem, "fv", "one", wrap, 0)
		f.p("\t\t\t\tx.%s = %s{one}", fl.Go, c.goExpr(r))
		f.p("\t\t\t}")
		return
	}
	expr := c.fieldExpr(fl)
	target := "x." + fl.Go
	if strings.HasPrefix(expr, "*") {
		f.p("\t\t\tif fv == nil {\n\t\t\t\tx.%s = nil\n\t\t\t} else {", fl.Go)
		f.p("\t\t\tvar val %s", expr[1:])
		c.decodeInto(f, fl.Type, "fv", "val", wrap, 0)
		f.p("\t\t\t%s = &val", target)
		f.p("\t\t\t}")
		return
	}
	c.decodeInto(f, fl.Type, "fv", target, wrap, 0)
}

// decodeInto writes statements that decode tree value src into dst, a
// variable of t's Go type; errors are wrapped by wrap (a format with one %s).
func (c *canonical) decodeInto(f *file, t *goType, src, dst, wrap string, depth int) {
	errRet := func() string { return "return " + fmt.Sprintf(wrap, "err") }
	r := c.resolved(t)
	d := c.decl(r)
	switch {
	case r.Kind == kAny:
		f.p("%s = codec.Plain(%s)", dst, src)
	case r.Kind == kString && d == nil, d != nil && d.Kind == dEnum:
		f.p("if err := codec.SetString(%s, &%s); err != nil {\n%s\n}", src, dst, errRet())
	case r.Kind == kInt:
		f.p("if err := codec.SetInt(%s, &%s); err != nil {\n%s\n}", src, dst, errRet())
	case r.Kind == kFloat:
		f.p("if err := codec.SetFloat(%s, &%s); err != nil {\n%s\n}", src, dst, errRet())
	case r.Kind == kBool:
		f.p("if err := codec.SetBool(%s, &%s); err != nil {\n%s\n}", src, dst, errRet())
	case r.Kind == kID:
		f.p("if err := codec.SetID(%s, &%s); err != nil {\n%s\n}", src, dst, errRet())
	case r.Kind == kArray || r.Kind == kMap:
		fn := "codec.DecodeSlice"
		if r.Kind == kMap {
			fn = "codec.DecodeMap"
		}
		f.p("if a, err := %s(%s, rev, %s); err != nil {\n%s\n} else {\n%s = a\n}", fn, src, c.decodeFn(r.Elem), errRet(), dst)
	case d != nil && d.Kind == dStruct:
		f.p("if err := %s.DecodeValue(%s, rev); err != nil {\n%s\n}", dst, src, errRet())
	case d != nil && d.Kind == dUnion:
		f.p("if u, err := Decode%s(%s, rev); err != nil {\n%s\n} else {\n%s = u\n}", d.Name, src, errRet(), dst)
	default:
		panic(fmt.Sprintf("decode: unhandled type %s", t.key()))
	}
}

// decodeElem decodes a slice or map element; struct elements are pointers.
func (c *canonical) decodeElem(f *file, t *goType, src, dst, wrap string, depth int) {
	if c.isStruct(t) {
		f.p("%s = new(%s)", dst, c.goExpr(t))
	}
	c.decodeInto(f, t, src, dst, wrap, depth)
}

// encode emits EncodeValue and MarshalJSON for every struct and the
// projection masks: for each revision, the members of the type that the
// revision does not define.
func (c *canonical) encode() *file {
	f := newFile()
	nrev := len(c.m.Revisions)
	f.p("// dropMask returns the members of a type that revision rev lacks.")
	f.p("func dropMask(masks *[%d]uint64, rev int) uint64 {", nrev)
	f.p("\tif rev < 0 || rev >= len(masks) {\n\t\treturn 0\n\t}\n\treturn masks[rev]\n}\n")
	for _, n := range c.declNames(dStruct) {
		d := c.m.Decls[n]
		if len(d.Fields) > 64 {
			panic(n + " has more than 64 members")
		}
		_, anyDrop := c.masks(d)
		f.p("// EncodeValue renders x as a tree in the shape of revision rev.")
		f.p("func (x *%s) EncodeValue(rev int) any {", n)
		if anyDrop {
			f.p("\tdrop := dropMask(&drop%s, rev)", n)
		}
		if c.needsRequired(d) {
			var parts []string
			for r := range c.m.Revisions {
				var m uint64
				for i, fl := range d.Fields {
					if fl.required[r] {
						m |= 1 << uint(i)
					}
				}
				parts = append(parts, fmt.Sprintf("%#x", m))
			}
			// emitted before the function body by a second pass below
			c.reqVars = append(c.reqVars, fmt.Sprintf("var req%s = [%d]uint64{%s}\n", n, len(parts), strings.Join(parts, ", ")))
		}
		if !anyDrop {
			f.p("\t_ = rev")
		}
		f.p("\tobj := make(map[string]any, %d+len(x.Extra))", len(d.Fields))
		for i, fl := range d.Fields {
			cond := ""
			if anyDrop {
				cond = fmt.Sprintf("drop&(1<<%d) == 0", i)
			}
			c.encodeField(f, fl, cond, i)
		}
		f.p("\tcodec.MergeExtra(obj, x.Extra)")
		f.p("\treturn obj")
		f.p("}\n")
		f.p("// MarshalJSON encodes x with every member it holds.")
		f.p("func (x %s) MarshalJSON() ([]byte, error) {", n)
		f.p("\tif b, ok := x.AppendJSON(make([]byte, 0, 128), wire.AllRevisions); ok {\n\t\treturn b, nil\n\t}")
		f.p("\treturn jsontree.Marshal(x.EncodeValue(wire.AllRevisions))")
		f.p("}\n")
	}
	f.p("// req* mark, per revision, the members each type requires there.")
	for _, v := range c.reqVars {
		f.p("%s", v)
	}
	f.p("// requiredIn returns the members a type requires in revision rev.")
	f.p("func requiredIn(masks *[%d]uint64, rev int) uint64 {", len(c.m.Revisions))
	f.p("\tif rev < 0 || rev >= len(masks) {\n\t\treturn 0\n\t}\n\treturn masks[rev]\n}")
	return f
}

// allOf joins the non-empty Go conditions with &&.
func allOf(conds ...string) string {
	var out []string
	for _, s := range conds {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, " && ")
}

func (c *canonical) encodeField(f *file, fl *field, dropCond string, bit int) {
	if fl.Const != "" {
		cond := dropCond
		if c.constRemembered(fl) {
			// written when the message had it, or the revision requires it
			cond = allOf(dropCond, fmt.Sprintf("(x.present&(1<<%d) != 0 || requiredIn(&req%s, rev)&(1<<%d) != 0)", bit, fl.owner, bit))
		}
		if cond != "" {
			f.p("\tif %s {\n\t\tobj[%q] = %q\n\t}", cond, fl.JSON, fl.Const)
		} else {
			f.p("\tobj[%q] = %q", fl.JSON, fl.Const)
		}
		return
	}
	if dm, ok := c.defaultedMember(fl, bit); ok {
		emitDefaulted(f, dropCond, dm.has, fmt.Sprintf("\t\tobj[%q] = %s", fl.JSON, c.encodeExpr(dm.t, dm.value)),
			defaultWhen(fl, bit), fmt.Sprintf("\t\tobj[%q] = %s", fl.JSON, defaultTree(fl, dm.t)))
		return
	}
	expr := c.fieldExpr(fl)
	x := "x." + fl.Go
	r := c.resolved(fl.Type)
	d := c.decl(r)
	if r.Kind == kOneOrMany {
		// one value alone, unless it came as an array or there are several
		arr := &goType{Kind: kArray, Elem: r.Elem}
		body := fmt.Sprintf("if len(%s) == 1 && x.present&(1<<%d) == 0 {\n\t\tobj[%q] = %s\n\t} else {\n\t\tobj[%q] = codec.NonNilArray(%s)\n\t}",
			x, bit, fl.JSON, c.encodeExpr(r.Elem, x+"[0]"), fl.JSON, c.encodeExpr(arr, x))
		cond := dropCond
		if !fl.Required {
			cond = allOf(dropCond, x+" != nil")
		}
		if cond != "" {
			body = fmt.Sprintf("if %s {\n%s\n}", cond, body)
		}
		f.p("\t%s", body)
		return
	}
	present := ""
	val := ""
	switch {
	case strings.HasPrefix(expr, "*"):
		present = x + " != nil"
		if c.isStruct(r) {
			val = c.encodeExpr(r, x)
		} else {
			val = c.encodeExpr(r, "*"+x)
		}
		if fl.Required { // nullable and required: null when nil
			body := fmt.Sprintf("if %s {\n\t\tobj[%q] = %s\n\t} else {\n\t\tobj[%q] = nil\n\t}", present, fl.JSON, val, fl.JSON)
			if dropCond != "" {
				body = fmt.Sprintf("if %s {\n%s\n}", dropCond, body)
			}
			f.p("\t%s", body)
			return
		}
	case r.Kind == kString || (d != nil && d.Kind == dEnum):
		present = x + ` != ""`
		if c.emptyStringKept(fl) {
			present = fmt.Sprintf("(%s || x.present&(1<<%d) != 0)", present, bit)
		}
		val = c.encodeExpr(r, x)
	case r.Kind == kID:
		present = "!" + x + ".IsZero()"
		val = x + ".Value()"
	case r.Kind == kArray || r.Kind == kMap || r.Kind == kAny || (d != nil && d.Kind == dUnion):
		present = x + " != nil"
		val = c.encodeExpr(r, x)
	default: // required structs and scalars
		val = c.encodeExpr(r, x)
	}
	if fl.Required {
		present = ""
		if r.Kind == kArray && val != "" {
			val = fmt.Sprintf("codec.NonNilArray(%s)", val)
		}
		if r.Kind == kMap {
			val = fmt.Sprintf("codec.NonNilObject(%s)", val)
		}
	}
	cond := allOf(dropCond, present)
	if cond == "" {
		f.p("\tobj[%q] = %s", fl.JSON, val)
		return
	}
	f.p("\tif %s {\n\t\tobj[%q] = %s\n\t}", cond, fl.JSON, val)
}

// encodeExpr is an expression rendering a value of type t as a tree value.
func (c *canonical) encodeExpr(t *goType, x string) string {
	r := c.resolved(t)
	d := c.decl(r)
	switch {
	case d != nil && d.Kind == dEnum:
		return "string(" + x + ")"
	case d != nil && (d.Kind == dStruct || d.Kind == dUnion):
		return x + ".EncodeValue(rev)"
	case r.Kind == kID:
		return x + ".Value()"
	case r.Kind == kArray, r.Kind == kMap:
		if !c.needsEncoding(r.Elem) {
			if r.Kind == kArray {
				return fmt.Sprintf("codec.AnyArray(%s)", x)
			}
			return fmt.Sprintf("codec.AnyObject(%s)", x)
		}
		fn := "codec.EncodeSlice"
		if r.Kind == kMap {
			fn = "codec.EncodeMap"
		}
		return fmt.Sprintf("%s(%s, rev, %s)", fn, x, c.encodeFn(r.Elem))
	}
	return x
}

// encodeFn is a Go expression for a func(T, int) any that encodes a value
// of t (a slice or map element; struct elements are pointers).
func (c *canonical) encodeFn(t *goType) string {
	r := c.resolved(t)
	d := c.decl(r)
	switch {
	case d != nil && d.Kind == dStruct:
		return "(*" + c.goExpr(t) + ").EncodeValue"
	case d != nil && d.Kind == dUnion:
		return d.Name + ".EncodeValue"
	case d != nil && d.Kind == dEnum:
		return "codec.EncodeString[" + d.Name + "]"
	case r.Kind == kID:
		return "codec.EncodeID"
	case r.Kind == kArray:
		if !c.needsEncoding(r.Elem) {
			return "codec.AnyArrayOf[" + c.elemExpr(r.Elem) + "]"
		}
		return "codec.SliceEncoder(" + c.encodeFn(r.Elem) + ")"
	case r.Kind == kMap:
		if !c.needsEncoding(r.Elem) {
			return "codec.AnyObjectOf[" + c.elemExpr(r.Elem) + "]"
		}
		return "codec.MapEncoder(" + c.encodeFn(r.Elem) + ")"
	}
	return "codec.EncodePlain[" + c.elemExpr(t) + "]"
}

// needsEncoding reports whether values of t must be converted for a tree.
func (c *canonical) needsEncoding(t *goType) bool {
	r := c.resolved(t)
	if d := c.decl(r); d != nil && d.Kind != dAlias {
		return true
	}
	return r.Kind == kID || r.Kind == kArray || r.Kind == kMap
}

// methodsWhere lists the methods pick selects, by Go name.
func (c *canonical) methodsWhere(pick func(*method) bool) []*method {
	var ms []*method
	for _, me := range c.m.Methods {
		if pick(me) {
			ms = append(ms, me)
		}
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].GoName < ms[j].GoName })
	return ms
}

// handler emits the Handler and ClientHandler interfaces, their
// Unimplemented stand-ins and the dispatch functions.
func (c *canonical) handler() *file {
	f := newFile()
	f.use("context")
	for _, side := range []struct {
		name, doc string
		pick      func(*method) bool
	}{
		{"Handler", "is implemented by a server: one method for every client-to-server request and notification of any revision. Write it once against the canonical types; the generated code validates, decodes and projects for each revision.", func(me *method) bool { return me.C2S }},
		{"ClientHandler", "is implemented by a client: one method for every server-to-client request and notification of any revision.", func(me *method) bool { return me.S2C }},
	} {
		ms := c.methodsWhere(side.pick)
		f.p("// %s %s", side.name, side.doc)
		f.p("type %s interface {", side.name)
		for _, me := range ms {
			f.p("\t// %s handles %q (%s).", me.GoName, me.Name, c.revList(c.methodRevs(me)))
			f.p("\t%s(ctx context.Context%s) %s", me.GoName, c.paramsDecl(me), c.resultDecl(me))
		}
		f.p("}\n")
		f.p("// Unimplemented%s answers every method with -32601. Embed it in tests and", side.name)
		f.p("// examples only: in real code it hides the compile error that a new method")
		f.p("// of a new revision should cause.")
		f.p("type Unimplemented%s struct{}\n", side.name)
		f.p("var _ %s = Unimplemented%s{}\n", side.name, side.name)
		for _, me := range ms {
			ret := "nil, wire.ErrMethodNotFound"
			if me.Notification {
				ret = "nil"
			}
			f.p("// %s implements %s.", me.GoName, side.name)
			f.p("func (Unimplemented%s) %s(context.Context%s) %s {\n\treturn %s\n}\n", side.name, me.GoName, c.paramsTypeOnly(me), c.resultDecl(me), ret)
		}
		f.p("// Dispatch%s decodes the params tree of method (nil when absent), sent in", side.name)
		f.p("// revision rev, and")
		f.p("// calls h. It returns the result to encode, nil for a notification, or")
		f.p("// wire.ErrMethodNotFound for a method %s does not have.", side.name)
		f.p("func Dispatch%s(ctx context.Context, h %s, method string, params any, rev int) (wire.Encoder, error) {", side.name, side.name)
		f.p("\tswitch method {")
		for _, me := range ms {
			f.p("\tcase %q:", me.Name)
			arg := ""
			if me.Params != nil {
				arg = ", p"
				c.decodeParams(f, me)
			}
			if me.Notification {
				f.p("\t\treturn nil, h.%s(ctx%s)", me.GoName, arg)
				continue
			}
			f.p("\t\tr, err := h.%s(ctx%s)", me.GoName, arg)
			f.p("\t\tif r == nil {\n\t\t\treturn nil, err\n\t\t}\n\t\treturn r, err")
		}
		f.p("\t}")
		f.p("\treturn nil, wire.ErrMethodNotFound")
		f.p("}\n")
	}
	f.p("// DecodeParams decodes the params tree of a request or notification by its")
	f.p("// method, in either direction.")
	f.p("func DecodeParams(method string, v any, rev int) (wire.Encoder, error) {")
	f.p("\tswitch method {")
	for _, me := range c.m.Methods {
		if me.Params == nil {
			continue
		}
		r := c.resolved(me.Params)
		if d := c.decl(r); d == nil || (d.Kind != dStruct && d.Kind != dUnion) {
			continue
		}
		f.p("\tcase %q:", me.Name)
		if c.isStruct(me.Params) {
			f.p("\t\tp := new(%s)", c.goExpr(me.Params))
			f.p("\t\treturn p, p.DecodeValue(v, rev)")
		} else {
			f.p("\t\treturn Decode%s(v, rev)", c.decl(r).Name)
		}
	}
	f.p("\t}")
	f.p("\treturn nil, wire.ErrMethodNotFound")
	f.p("}\n")
	// Result decoding through the method table.
	f.p("// DecodeResult decodes the result of a request by the method it answered:")
	f.p("// results cannot be told apart by their shape.")
	f.p("func DecodeResult(method string, v any, rev int) (wire.Encoder, error) {")
	f.p("\tswitch method {")
	for _, me := range c.m.Methods {
		if me.Notification || me.Result == nil {
			continue
		}
		f.p("\tcase %q:", me.Name)
		f.p("\t\tr := new(%s)", me.Result.Name)
		f.p("\t\treturn r, r.DecodeValue(v, rev)")
	}
	f.p("\t}")
	f.p("\treturn nil, wire.ErrMethodNotFound")
	f.p("}")
	return f
}

func (c *canonical) methodRevs(me *method) []bool {
	out := make([]bool, len(me.Revs))
	for i, r := range me.Revs {
		out[i] = r.Present
	}
	return out
}

func (c *canonical) paramsGo(me *method) string {
	if c.isStruct(me.Params) {
		return "*" + c.goExpr(me.Params)
	}
	return c.goExpr(me.Params)
}

func (c *canonical) paramsDecl(me *method) string {
	if me.Params == nil {
		return ""
	}
	return ", params " + c.paramsGo(me)
}

func (c *canonical) paramsTypeOnly(me *method) string {
	if me.Params == nil {
		return ""
	}
	return ", " + c.paramsGo(me)
}

func (c *canonical) resultDecl(me *method) string {
	if me.Notification {
		return "error"
	}
	return "(*" + me.Result.Name + ", error)"
}

func (c *canonical) decodeParams(f *file, me *method) {
	wrap := `jsontree.At(%s, "params")`
	if c.isStruct(me.Params) {
		f.p("\t\tp := new(%s)", c.goExpr(me.Params))
		f.p("\t\tif params != nil {")
		f.p("\t\t\tif err := p.DecodeValue(params, rev); err != nil {\n\t\t\t\treturn nil, wire.InvalidParams(%s)\n\t\t\t}", fmt.Sprintf(wrap, "err"))
		f.p("\t\t}")
		return
	}
	f.p("\t\tvar p %s", c.goExpr(me.Params))
	f.p("\t\tif params != nil {")
	f.p("\t\t\tif err := func() error {")
	c.decodeInto(f, me.Params, "params", "p", "%s", 0)
	f.p("\t\t\t\treturn nil\n\t\t\t}(); err != nil {\n\t\t\t\treturn nil, wire.InvalidParams(%s)\n\t\t\t}", fmt.Sprintf(wrap, "err"))
	f.p("\t\t}")
}

// extensions lists the extensions layered onto any revision, by folder.
func (c *canonical) extensions() []*extension {
	seen := map[*extension]bool{}
	var out []*extension
	for _, rs := range c.m.Revisions {
		for _, x := range rs.Layers {
			if !seen[x] {
				seen[x] = true
				out = append(out, x)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out
}

// methods emits the canonical method table and method name constants.
func (c *canonical) methods() *file {
	f := newFile()
	f.p("// Method names of every revision.")
	f.p("const (")
	for _, me := range c.m.Methods {
		f.p("\tMethod%s = %q", strings.TrimPrefix(me.GoName, "On"), me.Name)
	}
	f.p(")\n")
	if exts := c.extensions(); len(exts) > 0 {
		f.p("// Identifiers of the protocol extensions layered onto revisions")
		f.p("// (schema/extensions), as clients and servers declare them under")
		f.p("// capabilities.extensions.")
		f.p("const (")
		for _, x := range exts {
			f.p("\tExtension%s = %q // since %s", goName(path.Base(x.dir)), x.ID, x.Since)
		}
		f.p(")\n")
	}
	f.p("// MethodInfo describes a method across revisions.")
	f.p("type MethodInfo struct {")
	f.p("\tName           string")
	f.p("\tHandler        string   // Go method of Handler or ClientHandler")
	f.p("\tNotification   bool")
	f.p("\tClientToServer bool")
	f.p("\tServerToClient bool")
	f.p("\tParams         string   // canonical Go type of params (\"\" when none)")
	f.p("\tResult         string   // canonical Go type of the result (\"\" for notifications)")
	f.p("\tRevisions      []string // revisions that have the method")
	f.p("}\n")
	f.p("// Methods lists every method of every revision, by name.")
	f.p("var Methods = []MethodInfo{")
	for _, me := range c.m.Methods {
		params, result := "", ""
		if me.Params != nil {
			params = c.paramsGo(me)
		}
		if me.Result != nil {
			result = "*" + me.Result.Name
		}
		var revs []string
		for i, r := range me.Revs {
			if r.Present {
				revs = append(revs, fmt.Sprintf("%q", c.m.Revisions[i].Name))
			}
		}
		f.p("\t{Name: %q, Handler: %q, Notification: %v, ClientToServer: %v, ServerToClient: %v, Params: %q, Result: %q, Revisions: []string{%s}},",
			me.Name, me.GoName, me.Notification, me.C2S, me.S2C, params, result, strings.Join(revs, ", "))
	}
	f.p("}\n")
	f.p("// Revisions lists the supported revisions, oldest first; an index into it")
	f.p("// is what EncodeValue takes.")
	f.p("var Revisions = []string{")
	for _, rs := range c.m.Revisions {
		f.p("\t%q,", rs.Name)
	}
	f.p("}")
	return f
}

// masks computes, per revision, the bit set of members the revision's own
// version of d lacks (bit i is d.Fields[i]).
func (c *canonical) masks(d *decl) ([]uint64, bool) {
	masks := make([]uint64, len(c.m.Revisions))
	anyDrop := false
	for r := range masks {
		if !d.Revs[r] || d.revFields[r] == nil {
			continue
		}
		for i, fl := range d.Fields {
			if !d.revFields[r][fl.JSON] {
				masks[r] |= 1 << uint(i)
				anyDrop = true
			}
		}
	}
	return masks, anyDrop
}

// partial reports whether some revision lacks d.
func (c *canonical) partial(d *decl) bool {
	for _, ok := range d.Revs {
		if !ok {
			return true
		}
	}
	return false
}

func fieldMayDrop(masks []uint64, i int) bool {
	for _, m := range masks {
		if m&(1<<uint(i)) != 0 {
			return true
		}
	}
	return false
}

// emptyStringKept: an optional string member, whose explicit "" is
// remembered on decode so that a re-encode writes it again.
func (c *canonical) emptyStringKept(fl *field) bool {
	if fl.Const != "" || fl.Required {
		return false
	}
	r := c.resolved(fl.Type)
	d := c.decl(r)
	return !r.Nullable && (r.Kind == kString && d == nil || d != nil && d.Kind == dEnum)
}

func (c *canonical) hasEmptyStrings(d *decl) bool {
	for _, fl := range d.Fields {
		if c.emptyStringKept(fl) || c.constRemembered(fl) || c.resolved(fl.Type).Kind == kOneOrMany {
			return true
		}
	}
	return false
}

// constRemembered: an optional constant that is not the tag of a union is
// written only when the decoded message had it. Tags are always written:
// the union decoder needs them.
func (c *canonical) constRemembered(fl *field) bool {
	return fl.Const != "" && !fl.Required && !c.tags[fl.JSON+"\x00"+fl.owner]
}

// decodeFn is a Go expression for a func(any, int) (T, error) that decodes
// a value of t (a slice or map element; struct elements are pointers).
func (c *canonical) decodeFn(t *goType) string {
	r := c.resolved(t)
	d := c.decl(r)
	switch {
	case d != nil && d.Kind == dStruct:
		return "codec.DecodeInto[" + c.goExpr(t) + "]"
	case d != nil && d.Kind == dUnion:
		return "Decode" + d.Name
	case d != nil && d.Kind == dEnum:
		return "codec.DecodeString[" + d.Name + "]"
	case r.Kind == kString:
		return "codec.DecodeString[string]"
	case r.Kind == kInt:
		return "codec.DecodeInt"
	case r.Kind == kFloat:
		return "codec.DecodeFloat"
	case r.Kind == kBool:
		return "codec.DecodeBool"
	case r.Kind == kID:
		return "codec.DecodeID"
	case r.Kind == kArray:
		return "codec.SliceOf(" + c.decodeFn(r.Elem) + ")"
	case r.Kind == kMap:
		return "codec.MapOf(" + c.decodeFn(r.Elem) + ")"
	}
	return "codec.DecodePlain"
}
