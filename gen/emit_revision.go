package main

import (
	"fmt"
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
	f.p("// Spec is the method table and the validators of revision %s.", rs.Name)
	f.p("var Spec = protocol.NewSpec(Revision, %d, SchemaHash, schema.FS, map[string]protocol.Method{", rs.Index)
	for _, me := range c.m.Methods {
		rm := me.Revs[rs.Index]
		if !rm.Present {
			continue
		}
		response := ""
		if _, ok := rs.Defs[rm.Result+"Response"]; ok && rm.Result != "" {
			response = rm.Result + "Response"
		}
		f.p("\t%q: {Name: %q, Request: %q, Result: %q, Response: %q, Notification: %v, ClientToServer: %v, ServerToClient: %v, ParamsRequired: %v, TaskResult: %q, TaskExtension: %q, Extension: %q, NameParam: %q},",
			me.Name, me.Name, rm.Request, rm.Result, response, me.Notification, rm.C2S, rm.S2C, rm.ParamsRequired, rm.TaskResult, rm.TaskExtension, rm.Extension, rm.NameParam)
	}
	f.p("}, protocol.Checks{Surely: surelyValid, Required: requiredMembers, Envelopes: envelopes}, %s%s)", c.transport.goTransport(rs.Name), extensionArgs(rs))
	return f
}

// extensionArgs are the protocol.Extension arguments of NewSpec for the
// extensions layered onto a revision.
func extensionArgs(rs *revisionSchema) string {
	var b strings.Builder
	for _, x := range rs.Layers {
		fmt.Fprintf(&b, ",\n\tprotocol.Extension{ID: %q, Dir: %q", x.ID, x.dir)
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
		f.p("\t%s.Spec,", revisionPackage(rs.Name))
	}
	f.p("}\n")
	f.p("// Lookup returns the spec of a revision, or nil when it is not supported.")
	f.p("func Lookup(revision string) *protocol.Spec {")
	f.p("\tfor _, s := range Specs {\n\t\tif s.Revision == revision {\n\t\t\treturn s\n\t\t}\n\t}\n\treturn nil\n}\n")
	f.p("// Assumed is the revision of a request that names none (Streamable HTTP")
	f.p("// without MCP-Protocol-Version): schema/transport.json.")
	f.p("var Assumed = %s.Spec\n", revisionPackage(c.transport.AssumedRevision.Revision))
	f.p("// NameParam is the params member whose value a request repeats in its")
	f.p("// Mcp-Name header (x-mcp-name in the request's schema, in the newest")
	f.p("// revision that has one), \"\" for a method without one.")
	f.p("func NameParam(method string) string {")
	f.p("\tfor i := len(Specs) - 1; i >= 0; i-- {\n\t\tif m, ok := Specs[i].Methods[method]; ok && m.NameParam != \"\" {\n\t\t\treturn m.NameParam\n\t\t}\n\t}\n\treturn \"\"\n}\n")
	f.p("// Latest is the newest supported revision.")
	f.p("func Latest() *protocol.Spec { return Specs[len(Specs)-1] }")
	return f
}

// provenance is the second header line of a revision's files.
func provenance(rs *revisionSchema) string {
	return fmt.Sprintf("Source: schema/%s (MCP revision %s, schema hash %s).", rs.Name, rs.Name, rs.Hash)
}
