package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// appendJSON emits AppendJSON for every struct: the bytes
// jsontree.Marshal(x.EncodeValue(rev)) gives, written straight from the
// struct, members in name order, with the same projection onto the
// revision and the same rules for absent members as encode. A struct with
// unknown members (Extra), or a value encoding/json refuses, reports false:
// the caller takes the tree's path.
func (c *canonical) appendJSON() *file {
	f := newFile()
	f.use("strconv")
	for _, n := range c.declNames(dStruct) {
		d := c.m.Decls[n]
		_, anyDrop := c.masks(d)
		f.p("// AppendJSON appends x in the shape of revision rev, byte for byte as")
		f.p("// jsontree.Marshal(x.EncodeValue(rev)), without the tree; false (b to be")
		f.p("// dropped) where it cannot: unknown members, a value encoding/json refuses.")
		f.p("func (x *%s) AppendJSON(b []byte, rev int) ([]byte, bool) {", n)
		f.p("\tif len(x.Extra) > 0 {\n\t\treturn b, false\n\t}")
		if anyDrop {
			f.p("\tdrop := dropMask(&drop%s, rev)", n)
		}
		f.p("\tb = append(b, '{')")
		f.p("\tstart := len(b)")
		f.p("\tok := true")
		order := make([]int, len(d.Fields))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return d.Fields[order[a]].JSON < d.Fields[order[b]].JSON })
		for _, i := range order {
			cond := ""
			if anyDrop {
				cond = fmt.Sprintf("drop&(1<<%d) == 0", i)
			}
			c.appendField(f, d.Fields[i], cond, i)
		}
		f.p("\treturn append(b, '}'), ok")
		f.p("}\n")
	}
	return f
}

// appendField mirrors encodeField: the same conditions, bytes instead of a
// tree member.
func (c *canonical) appendField(f *file, fl *field, dropCond string, bit int) {
	member := fmt.Sprintf("b = codec.Member(b, start, %q)", jsonText(fl.JSON)+":")
	guard := func(cond, body string) {
		if cond == "" {
			f.p("\t%s", body)
			return
		}
		f.p("\tif %s {\n%s\n\t}", cond, body)
	}
	if fl.Const != "" {
		cond := dropCond
		if c.constRemembered(fl) {
			cond = allOf(dropCond, fmt.Sprintf("(x.present&(1<<%d) != 0 || requiredIn(&req%s, rev)&(1<<%d) != 0)", bit, fl.owner, bit))
		}
		guard(cond, fmt.Sprintf("%s\n\tb = append(b, %q...)", member, jsonText(fl.Const)))
		return
	}
	if dm, ok := c.defaultedMember(fl, bit); ok {
		emitDefaulted(f, dropCond, dm.has, member+"\n"+c.appendValue(dm.t, dm.value, false),
			defaultWhen(fl, bit), fmt.Sprintf("%s\n\tb = append(b, %q...)", member, defaultText(fl)))
		return
	}
	expr := c.fieldExpr(fl)
	x := "x." + fl.Go
	r := c.resolved(fl.Type)
	d := c.decl(r)
	if r.Kind == kOneOrMany {
		arr := &goType{Kind: kArray, Elem: r.Elem}
		body := fmt.Sprintf("%s\n\tif len(%s) == 1 && x.present&(1<<%d) == 0 {\n%s\n\t} else {\n%s\n\t}",
			member, x, bit, c.appendValue(r.Elem, x+"[0]", false), c.appendValue(arr, x, true))
		cond := dropCond
		if !fl.Required {
			cond = allOf(dropCond, x+" != nil")
		}
		guard(cond, body)
		return
	}
	present := ""
	val := ""
	switch {
	case strings.HasPrefix(expr, "*"):
		present = x + " != nil"
		if c.isStruct(r) {
			val = c.appendValue(r, x, false)
		} else {
			val = c.appendValue(r, "*"+x, false)
		}
		if fl.Required { // nullable and required: null when nil
			guard(dropCond, fmt.Sprintf("%s\n\tif %s {\n%s\n\t} else {\n\tb = append(b, \"null\"...)\n\t}", member, present, val))
			return
		}
	case r.Kind == kString || (d != nil && d.Kind == dEnum):
		present = x + ` != ""`
		if c.emptyStringKept(fl) {
			present = fmt.Sprintf("(%s || x.present&(1<<%d) != 0)", present, bit)
		}
		val = c.appendValue(r, x, false)
	case r.Kind == kID:
		present = "!" + x + ".IsZero()"
		val = c.appendValue(r, x, false)
	case r.Kind == kArray || r.Kind == kMap || r.Kind == kAny || (d != nil && d.Kind == dUnion):
		present = x + " != nil"
		val = c.appendValue(r, x, fl.Required)
	default: // required structs and scalars
		val = c.appendValue(r, x, false)
	}
	if fl.Required {
		present = ""
	}
	guard(allOf(dropCond, present), member+"\n"+val)
}

// appendValue is the statements that append x, a value of type t; nonNil
// writes a nil slice as [] and a nil map as {} (required members).
func (c *canonical) appendValue(t *goType, x string, nonNil bool) string {
	r := c.resolved(t)
	d := c.decl(r)
	check := func(call string) string {
		return fmt.Sprintf("\tif b, ok = %s; !ok {\n\t\treturn b, false\n\t}", call)
	}
	switch {
	case d != nil && d.Kind == dEnum:
		return fmt.Sprintf("\tb = jsontree.AppendString(b, string(%s))", x)
	case d != nil && (d.Kind == dStruct || d.Kind == dUnion):
		return check(x + ".AppendJSON(b, rev)")
	case r.Kind == kString:
		return fmt.Sprintf("\tb = jsontree.AppendString(b, %s)", x)
	case r.Kind == kInt:
		return fmt.Sprintf("\tb = strconv.AppendInt(b, %s, 10)", x)
	case r.Kind == kBool:
		return fmt.Sprintf("\tb = strconv.AppendBool(b, %s)", x)
	case r.Kind == kID:
		return check(fmt.Sprintf("codec.AppendID(%s, b, rev)", x))
	case r.Kind == kArray:
		return check(fmt.Sprintf("codec.AppendSlice(b, %s, rev, %s, %v)", x, c.appendFn(r.Elem), nonNil))
	case r.Kind == kMap:
		return check(fmt.Sprintf("codec.AppendMap(b, %s, rev, %s, %v)", x, c.appendFn(r.Elem), nonNil))
	}
	return check(fmt.Sprintf("codec.AppendPlain(%s, b, rev)", x)) // floats, free-form values
}

// appendFn mirrors encodeFn: a codec.Appender for a slice or map element
// of type t (struct elements are pointers).
func (c *canonical) appendFn(t *goType) string {
	r := c.resolved(t)
	d := c.decl(r)
	switch {
	case d != nil && d.Kind == dStruct:
		return "(*" + c.goExpr(t) + ").AppendJSON"
	case d != nil && d.Kind == dUnion:
		return d.Name + ".AppendJSON"
	case d != nil && d.Kind == dEnum:
		return "codec.AppendEnum[" + d.Name + "]"
	case r.Kind == kID:
		return "codec.AppendID"
	case r.Kind == kString:
		return "codec.AppendString"
	case r.Kind == kInt:
		return "codec.AppendInt"
	case r.Kind == kArray:
		return "codec.SliceAppender(" + c.appendFn(r.Elem) + ")"
	case r.Kind == kMap:
		return "codec.MapAppender(" + c.appendFn(r.Elem) + ")"
	}
	return "codec.AppendPlain[" + c.elemExpr(t) + "]"
}

// jsonText is s as a JSON string, as jsontree writes it (no HTML escaping).
func jsonText(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}
