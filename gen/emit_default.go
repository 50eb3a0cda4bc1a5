package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// A property's "default" in the schemas is what the encoders write where
// a revision requires the member and the value is absent: a 2026-07-28
// result's resultType "complete", ttlMs 0 and cacheScope "private". Both
// encoders (EncodeValue and AppendJSON) write it, so that an answer the
// handler left them out of is valid without a handwritten table in the
// server, and takes the direct encoding like any other.

// defaulted is how a member with a default is written: has is the Go
// condition under which the member holds a value of its own, value the
// expression of that value (dereferenced), t its type.
type defaulted struct {
	has, value string
	t          *goType
}

// defaultedMember reports how fl's default stands in; ok is false when it
// never does (a member of a scalar type that is required in every revision
// is never absent, and a default that is its zero value changes nothing).
// Any other default the encoders cannot honour stops the generator.
func (c *canonical) defaultedMember(fl *field, bit int) (d defaulted, ok bool) {
	if fl.Default == "" || fl.Const != "" {
		return d, false
	}
	x := "x." + fl.Go
	r := c.resolved(fl.Type)
	dc := c.decl(r)
	isString := r.Kind == kString && dc == nil || dc != nil && dc.Kind == dEnum
	switch {
	case strings.HasPrefix(c.fieldExpr(fl), "*") && !fl.Required && (r.Kind == kString || r.Kind == kInt || r.Kind == kBool || r.Kind == kFloat):
		return defaulted{has: x + " != nil", value: "*" + x, t: r}, true
	case isString && !r.Nullable:
		has := x + ` != ""`
		if c.emptyStringKept(fl) {
			has = fmt.Sprintf("(%s || x.present&(1<<%d) != 0)", has, bit)
		}
		return defaulted{has: has, value: x, t: r}, true
	case fl.Required && (fl.Default == "0" || fl.Default == "false"):
		return d, false
	}
	panic(fmt.Sprintf("%s.%s: a default (%s) on a member the encoders cannot tell absent", fl.owner, fl.JSON, fl.Default))
}

// defaultWhen is the condition under which the default stands in for an
// absent value: the revision requires the member.
func defaultWhen(fl *field, bit int) string {
	if fl.Required {
		return ""
	}
	return fmt.Sprintf("requiredIn(&req%s, rev)&(1<<%d) != 0", fl.owner, bit)
}

// emitDefaulted writes "if has { own } else if when { dflt }" under the
// revision's drop condition.
func emitDefaulted(f *file, dropCond, has, own, when, dflt string) {
	body := fmt.Sprintf("if %s {\n%s\n\t} else", has, own)
	if when == "" {
		body += fmt.Sprintf(" {\n%s\n\t}", dflt)
	} else {
		body += fmt.Sprintf(" if %s {\n%s\n\t}", when, dflt)
	}
	if dropCond != "" {
		body = fmt.Sprintf("if %s {\n%s\n}", dropCond, body)
	}
	f.p("\t%s", body)
}

// defaultTree is the default as a tree value of type t, a Go expression.
func defaultTree(fl *field, t *goType) string {
	v := decodeDefault(fl)
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Number:
		if t.Kind == kInt {
			return "int64(" + v.String() + ")"
		}
		return "float64(" + v.String() + ")"
	}
	panic(fmt.Sprintf("%s.%s: default %s is not a string, number or boolean", fl.owner, fl.JSON, fl.Default))
}

// defaultText is the default as jsontree writes it.
func defaultText(fl *field) string {
	if s, ok := decodeDefault(fl).(string); ok {
		return jsonText(s)
	}
	return fl.Default
}

func decodeDefault(fl *field) any {
	dec := json.NewDecoder(strings.NewReader(fl.Default))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		panic(fmt.Sprintf("%s.%s: default %s: %v", fl.owner, fl.JSON, fl.Default, err))
	}
	return v
}

// needsRequired reports whether d's encoders consult the members each
// revision requires: remembered constants and defaults.
func (c *canonical) needsRequired(d *decl) bool {
	for i, fl := range d.Fields {
		if c.constRemembered(fl) {
			return true
		}
		if _, ok := c.defaultedMember(fl, i); ok && !fl.Required {
			return true
		}
	}
	return false
}
