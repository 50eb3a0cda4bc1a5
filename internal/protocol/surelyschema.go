package protocol

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// surelyCheck says whether a value surely satisfies a schema (false: the
// reference validator decides).
type surelyCheck func(any) bool

// compileSurely compiles a schema document, as jsonschema.UnmarshalJSON
// reads it, into a surelyCheck: what the generator does for the
// protocol's schemas, done at run time for a tool's. It returns nil, and
// the reference validator does all the work, when the document uses a
// keyword it was not taught (pattern, oneOf, not, if, a $ref outside the
// document, ...).
func compileSurely(doc any) surelyCheck {
	root, _ := doc.(map[string]any)
	c := &surelyCompiler{root: root, refs: map[string]*surelyCheck{}, bare: map[string]bool{}}
	if root != nil {
		c.draft07 = strings.Contains(fmt.Sprint(root["$schema"]), "draft-07")
	}
	check := c.schema(doc)
	if c.failed {
		return nil
	}
	return check
}

type surelyCompiler struct {
	root    map[string]any
	draft07 bool
	refs    map[string]*surelyCheck // compiled local references, for recursion
	bare    map[string]bool         // references followed since the last step into a member or item
	failed  bool
}

func always(any) bool { return true }
func never(any) bool  { return false }

// surelyAnnotations say nothing about validity.
var surelyAnnotations = map[string]bool{"$schema": true, "title": true, "description": true, "default": true,
	"examples": true, "$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true, "$defs": true, "definitions": true}

func (c *surelyCompiler) schema(s any) surelyCheck {
	switch s := s.(type) {
	case bool:
		if s {
			return always
		}
		return never
	case map[string]any:
		return c.object(s)
	}
	c.failed = true
	return never
}

func (c *surelyCompiler) object(s map[string]any) surelyCheck {
	var checks []surelyCheck
	if ref, ok := s["$ref"].(string); ok {
		checks = append(checks, c.ref(ref))
		if c.draft07 { // draft-07 ignores the siblings of $ref
			return checks[0]
		}
	}
	for k, val := range s {
		switch k {
		case "$ref":
		case "type":
			checks = append(checks, c.typed(val))
		case "const":
			checks = append(checks, c.constant(val))
		case "enum":
			list, _ := val.([]any)
			alts := make([]surelyCheck, len(list))
			for i, e := range list {
				alts[i] = c.constant(e)
			}
			checks = append(checks, anyOf(alts))
		case "anyOf", "allOf":
			list, _ := val.([]any)
			subs := make([]surelyCheck, len(list))
			for i, br := range list {
				subs[i] = c.schema(br)
			}
			if k == "anyOf" {
				checks = append(checks, anyOf(subs))
			} else {
				checks = append(checks, subs...)
			}
		case "properties", "required", "additionalProperties":
			// together, once
		case "items":
			if _, tuple := val.([]any); tuple {
				c.failed = true
				continue
			}
			item := c.step(val)
			checks = append(checks, func(v any) bool {
				a, ok := v.([]any)
				if !ok {
					return true
				}
				for _, x := range a {
					if !item(x) {
						return false
					}
				}
				return true
			})
		case "minItems", "maxItems", "minLength", "maxLength":
			n, ok := count(val)
			if !ok {
				c.failed = true
				continue
			}
			checks = append(checks, sizeCheck(k, n))
		case "minimum", "maximum":
			bound := fmt.Sprint(val)
			if k == "minimum" {
				checks = append(checks, func(v any) bool { return AtLeast(v, bound) })
			} else {
				checks = append(checks, func(v any) bool { return AtMost(v, bound) })
			}
		case "format":
			checks = append(checks, formatCheck(fmt.Sprint(val)))
		default:
			if !surelyAnnotations[k] {
				c.failed = true
			}
		}
	}
	if _, ok := s["properties"]; ok || s["required"] != nil || s["additionalProperties"] != nil {
		checks = append(checks, c.members(s))
	}
	switch len(checks) {
	case 0:
		return always
	case 1:
		return checks[0]
	}
	return func(v any) bool {
		for _, check := range checks {
			if !check(v) {
				return false
			}
		}
		return true
	}
}

// step compiles the schema of a member or an item: a value one level
// down, where a reference may come back to where it started.
func (c *surelyCompiler) step(s any) surelyCheck {
	saved := c.bare
	c.bare = map[string]bool{}
	defer func() { c.bare = saved }()
	return c.schema(s)
}

// members checks properties, required and additionalProperties.
func (c *surelyCompiler) members(s map[string]any) surelyCheck {
	props, _ := s["properties"].(map[string]any)
	checks := make(map[string]surelyCheck, len(props))
	for name, p := range props {
		checks[name] = c.step(p)
	}
	required, _ := s["required"].([]any)
	var extra surelyCheck // nil: any other member is fine
	switch ap := s["additionalProperties"].(type) {
	case nil:
	case bool:
		if !ap {
			extra = never
		}
	default:
		extra = c.step(ap)
	}
	return func(v any) bool {
		o, ok := v.(map[string]any)
		if !ok {
			return true
		}
		for _, r := range required {
			name, _ := r.(string)
			if _, ok := o[name]; !ok {
				return false
			}
		}
		for k, x := range o {
			if check, ok := checks[k]; ok {
				if !check(x) {
					return false
				}
			} else if extra != nil && !extra(x) {
				return false
			}
		}
		return true
	}
}

// ref compiles a reference inside the document (#/$defs/X,
// #/definitions/X, #): one check per target, so that a recursive schema
// is a recursive check. A reference that comes back to itself without
// a step into a member or an item would be a check that calls itself
// forever: the document gets no compiled check (the reference reports
// the cycle).
func (c *surelyCompiler) ref(ref string) surelyCheck {
	if c.bare[ref] {
		c.failed = true
		return never
	}
	c.bare[ref] = true
	defer delete(c.bare, ref)
	if check, ok := c.refs[ref]; ok {
		return func(v any) bool { return (*check)(v) }
	}
	target, ok := c.resolve(ref)
	if !ok {
		c.failed = true
		return never
	}
	slot := new(surelyCheck)
	c.refs[ref] = slot
	*slot = c.schema(target)
	return *slot
}

func (c *surelyCompiler) resolve(ref string) (any, bool) {
	if ref == "#" {
		return c.root, c.root != nil
	}
	for _, container := range []string{"#/$defs/", "#/definitions/"} {
		if name, ok := strings.CutPrefix(ref, container); ok && !strings.ContainsAny(name, "/~%") {
			defs, _ := c.root[strings.Trim(container[2:], "/")].(map[string]any)
			target, ok := defs[name]
			return target, ok
		}
	}
	return nil, false
}

func (c *surelyCompiler) typed(t any) surelyCheck {
	var names []string
	switch t := t.(type) {
	case string:
		names = []string{t}
	case []any:
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
	}
	alts := make([]surelyCheck, 0, len(names))
	for _, n := range names {
		switch n {
		case "object":
			alts = append(alts, IsObject)
		case "array":
			alts = append(alts, IsArray)
		case "string":
			alts = append(alts, IsString)
		case "boolean":
			alts = append(alts, IsBool)
		case "null":
			alts = append(alts, func(v any) bool { return v == nil })
		case "number":
			alts = append(alts, IsNumber)
		case "integer":
			alts = append(alts, SurelyInteger)
		default:
			c.failed = true
		}
	}
	return anyOf(alts)
}

func (c *surelyCompiler) constant(want any) surelyCheck {
	switch w := want.(type) {
	case string:
		return func(v any) bool { return IsConst(v, w) }
	case bool:
		return func(v any) bool { b, ok := v.(bool); return ok && b == w }
	case nil:
		return func(v any) bool { return v == nil }
	case json.Number:
		return func(v any) bool { return IsNumberText(v, string(w)) }
	}
	c.failed = true // an object or array constant: the reference compares them
	return never
}

func anyOf(alts []surelyCheck) surelyCheck {
	if len(alts) == 1 {
		return alts[0]
	}
	return func(v any) bool {
		for _, alt := range alts {
			if alt(v) {
				return true
			}
		}
		return false
	}
}

func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return int(i), err == nil && i >= 0
}

func sizeCheck(keyword string, n int) surelyCheck {
	switch keyword {
	case "minItems":
		return func(v any) bool { a, ok := v.([]any); return !ok || len(a) >= n }
	case "maxItems":
		return func(v any) bool { a, ok := v.([]any); return !ok || len(a) <= n }
	case "minLength":
		return func(v any) bool { s, ok := v.(string); return !ok || utf8.RuneCountInString(s) >= n }
	}
	return func(v any) bool { s, ok := v.(string); return !ok || utf8.RuneCountInString(s) <= n }
}

// formatCheck: a URI and a URI template are checked here; a string of any
// other format is left to the reference, which knows them all.
func formatCheck(format string) surelyCheck {
	switch format {
	case "uri":
		return func(v any) bool { s, ok := v.(string); return !ok || SurelyURI(s) }
	case "uri-template":
		return func(v any) bool { s, ok := v.(string); return !ok || SurelyURITemplate(s) }
	}
	return func(v any) bool { _, isString := v.(string); return !isString }
}
