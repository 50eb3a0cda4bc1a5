package main

import (
	"fmt"
	"sort"
	"strings"
)

// buildModel lowers every revision and merges the declarations by name into
// one canonical model. Where revisions disagree on a type the canonical type
// is the one that can hold every revision's values: integer and number merge
// to number, a free-form object and a struct to the struct (it keeps unknown
// members), two declared types to the newest; anything else becomes a
// free-form value.
func buildModel(revs []*revisionSchema) (*model, error) {
	m := &model{Revisions: revs, Decls: map[string]*decl{}}
	mg := &merger{widened: map[string]bool{}}
	n := len(revs)
	perRev := make([]map[string]*decl, n)
	for i, rs := range revs {
		decls, err := buildRevision(rs, n)
		if err != nil {
			return nil, err
		}
		perRev[i] = decls
	}
	for _, decls := range perRev { // oldest first: newer revisions win conflicts
		for _, name := range sortedKeys(decls) {
			d := decls[name]
			cur, ok := m.Decls[name]
			if !ok {
				m.Decls[name] = d
				continue
			}
			m.Decls[name] = mg.mergeDecl(cur, d)
		}
	}
	for _, d := range m.Decls {
		// A member is required in the canonical model when every revision
		// requires it. A type that stands where some revision has another
		// shape (an open object, an older struct) can arrive from that
		// revision with any member missing: its members are all optional.
		partial := mg.isWidened(d.Name)
		for _, f := range d.Fields {
			f.Required = !partial
			for i := range f.revs {
				if d.Revs[i] && (!f.revs[i] || !f.required[i]) {
					f.Required = false
				}
			}
		}
	}
	if err := m.buildMethods(); err != nil {
		return nil, err
	}
	m.prune()
	return m, nil
}

// merger merges declarations and remembers which declared types were
// chosen for places where some revision has another type.
type merger struct {
	widened map[string]bool
}

// isWidened reports whether name stands where some revision has another type.
func (mg *merger) isWidened(name string) bool { return mg.widened[name] }

func (mg *merger) mergeDecl(old, cur *decl) *decl {
	for i := range old.Revs {
		cur.Revs[i] = cur.Revs[i] || old.Revs[i]
		if cur.revFields[i] == nil {
			cur.revFields[i] = old.revFields[i]
		}
	}
	cur.Named = cur.Named || old.Named
	if cur.Doc == "" {
		cur.Doc, cur.Ref = old.Doc, old.Ref
	}
	if old.Kind != cur.Kind {
		mg.widened[cur.Name] = true
		return cur // the newest revision's shape wins
	}
	switch cur.Kind {
	case dStruct:
		byJSON := map[string]*field{}
		for _, f := range cur.Fields {
			byJSON[f.JSON] = f
		}
		for _, of := range old.Fields {
			f, ok := byJSON[of.JSON]
			if !ok {
				cur.Fields = append(cur.Fields, of)
				continue
			}
			for i := range of.revs {
				f.revs[i] = f.revs[i] || of.revs[i]
				f.required[i] = f.required[i] || of.required[i]
			}
			if f.Const != of.Const {
				f.Const = ""
			}
			switch {
			case f.Default == "":
				f.Default = of.Default
			case of.Default != "" && of.Default != f.Default:
				panic(fmt.Sprintf("%s.%s: the revisions give it different defaults (%s, %s): the encoders write one", cur.Name, f.JSON, of.Default, f.Default))
			}
			f.Type = mg.mergeType(of.Type, f.Type)
		}
		sort.Slice(cur.Fields, func(i, j int) bool { return cur.Fields[i].JSON < cur.Fields[j].JSON })
	case dUnion:
		if old.Tag != cur.Tag {
			cur.Tag = ""
		}
		// A member is known by its tag in tagged unions (a renamed member
		// keeps its tag: ResourceReference became ResourceTemplateReference),
		// by its type otherwise.
		key := func(mb *member) string {
			if cur.Tag != "" {
				return mb.Tag
			}
			return mb.Type
		}
		seen := map[string]bool{}
		for _, mb := range cur.Members {
			seen[key(mb)] = true
		}
		for _, mb := range old.Members {
			if !seen[key(mb)] {
				cur.Members = append(cur.Members, mb)
			}
		}
	case dEnum:
		seen := map[string]bool{}
		for _, v := range cur.Values {
			seen[v] = true
		}
		for _, v := range old.Values {
			if !seen[v] {
				cur.Values = append(cur.Values, v)
			}
		}
	case dAlias:
		cur.Alias = mg.mergeType(old.Alias, cur.Alias)
	}
	return cur
}

// mergeType picks a type for a member whose revisions disagree (older a,
// newer b).
func (mg *merger) mergeType(a, b *goType) *goType {
	if a.key() == b.key() {
		return b
	}
	t := mg.pick(a, b)
	for x := t; x != nil; x = x.Elem {
		if x.Kind == kNamed {
			mg.widened[x.Name] = true
		}
	}
	return t
}

func (mg *merger) pick(a, b *goType) *goType {
	nullable := a.Nullable || b.Nullable
	with := func(t *goType) *goType {
		if t.Nullable == nullable {
			return t
		}
		c := *t
		c.Nullable = nullable
		return &c
	}
	switch {
	case a.Kind == b.Kind && a.Kind != kArray && a.Kind != kMap && a.Kind != kNamed:
		return with(b)
	case (a.Kind == kInt || a.Kind == kFloat) && (b.Kind == kInt || b.Kind == kFloat):
		return with(&goType{Kind: kFloat})
	case a.Kind == kArray && b.Kind == kArray:
		return with(&goType{Kind: kArray, Elem: mg.mergeType(a.Elem, b.Elem)})
	case a.Kind == kMap && b.Kind == kMap:
		return with(&goType{Kind: kMap, Elem: mg.mergeType(a.Elem, b.Elem)})
	case a.Kind == kNamed && b.Kind == kNamed:
		return with(b)
	case b.Kind == kOneOrMany && (a.Kind == kNamed || a.Kind == kOneOrMany):
		// one block (an older union) became one or several
		return with(b)
	case a.Kind == kMap && a.Elem.Kind == kAny && b.Kind == kNamed:
		return with(b)
	case b.Kind == kMap && b.Elem.Kind == kAny && a.Kind == kNamed:
		return with(a)
	}
	return anyType
}

// unionSides are the message unions that say which way a method goes.
var unionSides = map[string]struct{ c2s, notify bool }{
	"ClientRequest": {true, false}, "ServerRequest": {false, false},
	"ClientNotification": {true, true}, "ServerNotification": {false, true},
}

// buildMethods reads the method table out of each revision's message
// unions and the methods its extensions add.
func (m *model) buildMethods() error {
	byName := map[string]*method{}
	var errs []string
	for _, rs := range m.Revisions {
		for _, union := range []string{"ClientRequest", "ServerRequest", "ClientNotification", "ServerNotification"} {
			side := unionSides[union]
			members, from := rs.members(union)
			for i, reqName := range members {
				def := rs.Defs[reqName]
				mp := def.Body.Properties["method"]
				name, _ := mp.Const.(string)
				if name == "" {
					errs = append(errs, fmt.Sprintf("%s: %s has no constant method", rs.Name, reqName))
					continue
				}
				me := byName[name]
				if me == nil {
					me = &method{Name: name, Notification: side.notify, Revs: make([]revMethod, len(m.Revisions))}
					byName[name] = me
				}
				rm := &me.Revs[rs.Index]
				rm.Present = true
				rm.Request = reqName
				rm.Extension = from[i]
				if side.c2s {
					rm.C2S, me.C2S = true, true
				} else {
					rm.S2C, me.S2C = true, true
				}
				rm.ParamsRequired = has(def.Body.Required, "params")
				rm.NameParam = def.NameParam
				me.Request = reqName
				if !side.notify {
					if def.Result == "" {
						errs = append(errs, fmt.Sprintf("%s: request %s has no x-mcp-result", rs.Name, reqName))
						continue
					}
					rm.Result = refName(def.Result)
					if def.TaskResult != "" {
						rm.TaskResult = refName(def.TaskResult)
					}
					if r, ext := rs.taskResult(reqName); r != "" {
						rm.TaskResult, rm.TaskExtension = r, ext
					}
				}
				// The canonical params type: the type of the request's params member.
				if d := m.Decls[reqName]; d != nil {
					for _, f := range d.Fields {
						if f.JSON == "params" {
							me.Params = f.Type
						}
					}
				}
				if rm.Result != "" {
					me.Result = &goType{Kind: kNamed, Name: rm.Result}
				}
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	for _, name := range sortedKeys(byName) {
		me := byName[name]
		me.GoName = handlerName(me.Request, me.Notification)
		m.Methods = append(m.Methods, me)
	}
	return nil
}

// handlerName derives the Handler method: CallToolRequest -> CallTool,
// CancelledNotification -> OnCancelled.
func handlerName(def string, notification bool) string {
	if notification {
		return "On" + strings.TrimSuffix(def, "Notification")
	}
	return strings.TrimSuffix(def, "Request")
}

// prune drops inline declarations that no longer appear anywhere after the
// merge (an older revision's inline union replaced by a named one).
func (m *model) prune() {
	reach := map[string]bool{}
	var visitType func(t *goType)
	var visit func(name string)
	visitType = func(t *goType) {
		for t != nil {
			if t.Kind == kNamed {
				visit(t.Name)
			}
			t = t.Elem
		}
	}
	visit = func(name string) {
		if reach[name] {
			return
		}
		reach[name] = true
		d := m.Decls[name]
		if d == nil {
			return
		}
		for _, f := range d.Fields {
			visitType(f.Type)
		}
		for _, mb := range d.Members {
			visit(mb.Type)
		}
		visitType(d.Alias)
	}
	for name, d := range m.Decls {
		if d.Named {
			visit(name)
		}
	}
	for _, me := range m.Methods {
		visitType(me.Params)
		visitType(me.Result)
	}
	for name := range m.Decls {
		if !reach[name] {
			delete(m.Decls, name)
		}
	}
}
