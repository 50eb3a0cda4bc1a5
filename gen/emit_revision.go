package main

import (
	"fmt"
	"slices"
	"strings"
)

// revisionPackage is the Go package name of a revision: mcp20251125.
func revisionPackage(rev string) string {
	return "mcp" + strings.ReplaceAll(rev, "-", "")
}

// revision emits internal/generated/<pkg>/spec_gen.go: the revision's method table and
// its schemas, compiled once on first use.
func (c *canonical) revision(rs *revisionSchema) *file {
	f := newFile()
	f.use(schemaPkg)
	f.p("// Revision is the MCP protocol revision of this package.")
	f.p("const Revision = %q\n", rs.Name)
	f.p("// SchemaHash identifies the schema files this package was generated from.")
	f.p("const SchemaHash = %q\n", rs.Hash)
	f.p("// Spec is the method table and the validators of revision %s: constants", rs.Name)
	f.p("// and functions the compiler lays out, so that the revision costs nothing")
	f.p("// at startup.")
	f.p("var Spec = protocol.Spec{")
	f.p("\tRevision: Revision,\n\tIndex:    %d,\n\tHash:     SchemaHash,", rs.Index)
	f.p("\tMethods: []protocol.Method{ // sorted by name")
	methods := slices.SortedFunc(slices.Values(c.m.Methods), func(a, b *method) int { return strings.Compare(a.Name, b.Name) })
	for _, me := range methods {
		rm := me.Revs[rs.Index]
		if !rm.Present {
			continue
		}
		response := ""
		if _, ok := rs.Defs[rm.Result+"Response"]; ok && rm.Result != "" {
			response = rm.Result + "Response"
		}
		f.p("\t\t{Name: %q, Request: %q, Result: %q, Response: %q, Notification: %v, ClientToServer: %v, ServerToClient: %v, ParamsRequired: %v, TaskResult: %q, TaskExtension: %q, Extension: %q, NameParam: %q},",
			me.Name, rm.Request, rm.Result, response, me.Notification, rm.C2S, rm.S2C, rm.ParamsRequired, rm.TaskResult, rm.TaskExtension, rm.Extension, rm.NameParam)
	}
	f.p("\t},")
	f.p("\tTransport: %s,", c.transport.goTransport(rs.Name))
	if ext := extensions(rs); ext != "" {
		f.p("\tExtensions: []protocol.Extension{%s},", ext)
	}
	f.p("\tSchemas: &schema.FS,")
	f.p("\tChecks:  protocol.Checks{Surely: surely, Requires: requires, Envelope: envelope},")
	f.p("}")
	return f
}

// extensions are the protocol.Extension literals of the extensions
// layered onto a revision.
func extensions(rs *revisionSchema) string {
	var b strings.Builder
	for i, x := range rs.Layers {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "{ID: %q, Dir: %q", x.ID, x.dir)
		if r := x.TaskRules; r != nil {
			fmt.Fprintf(&b, ", Tasks: &protocol.TaskRules{ServerDirected: %v, ToolErrorCompletes: %v, CancelEndedAcknowledged: %v}", r.ServerDirected, r.ToolErrorCompletes, r.CancelEndedAcknowledged)
		}
		b.WriteString("}")
	}
	return b.String()
}

// registry emits internal/generated/revisions_gen.go: every revision in one list.
func (c *canonical) registry() *file {
	f := newFile()
	for _, rs := range c.m.Revisions {
		f.use("github.com/mcpstack/mcpstack/internal/generated/" + revisionPackage(rs.Name))
	}
	f.p("// Specs lists every supported revision, oldest first.")
	f.p("var Specs = []*protocol.Spec{")
	for _, rs := range c.m.Revisions {
		f.p("\t&%s.Spec,", revisionPackage(rs.Name))
	}
	f.p("}\n")
	f.p("// Lookup returns the spec of a revision, or nil when it is not supported.")
	f.p("func Lookup(revision string) *protocol.Spec {")
	f.p("\tfor _, s := range Specs {\n\t\tif s.Revision == revision {\n\t\t\treturn s\n\t\t}\n\t}\n\treturn nil\n}\n")
	f.p("// Assumed is the revision of a request that names none (Streamable HTTP")
	f.p("// without MCP-Protocol-Version): schema/transport.json.")
	f.p("var Assumed = &%s.Spec\n", revisionPackage(c.transport.AssumedRevision.Revision))
	f.p("// NameParam is the params member whose value a request repeats in its")
	f.p("// Mcp-Name header (x-mcp-name in the request's schema, in the newest")
	f.p("// revision that has one), \"\" for a method without one.")
	f.p("func NameParam(method string) string {")
	byParam := map[string][]string{} // a params member -> the methods whose Mcp-Name repeats it
	for _, me := range c.m.Methods {
		for i := len(me.Revs) - 1; i >= 0; i-- {
			if p := me.Revs[i].NameParam; p != "" {
				byParam[p] = append(byParam[p], me.Name)
				break
			}
		}
	}
	if len(byParam) > 0 {
		f.p("\tswitch method {")
		for _, p := range sortedKeys(byParam) {
			f.p("\tcase %s:\n\t\treturn %q", quoteAll(byParam[p]), p)
		}
		f.p("\t}")
	}
	f.p("\treturn \"\"\n}\n")
	f.p("// Latest is the newest supported revision.")
	f.p("func Latest() *protocol.Spec { return Specs[len(Specs)-1] }")
	return f
}

// provenance is the second header line of a revision's files.
func provenance(rs *revisionSchema) string {
	return fmt.Sprintf("Source: schema/%s (MCP revision %s, schema hash %s).", rs.Name, rs.Name, rs.Hash)
}
