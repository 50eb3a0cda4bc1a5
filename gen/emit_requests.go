package main

import "strings"

// requests emits mcp/requests_gen.go: for each side, one typed
// method per request it can send, over the one untyped call a client (or
// a server, for its requests to the client) implements.
func (c *canonical) requests() *file {
	f := newFile()
	f.use("context")
	f.use("fmt")
	f.p("// Requester sends a request and returns its result, decoded by the method")
	f.p("// it answers (DecodeResult): what ServerRequests and ClientRequests need of")
	f.p("// a connection. params is nil for a method without params.")
	f.p("type Requester interface {")
	f.p("\tRequest(ctx context.Context, method string, params wire.Encoder) (wire.Encoder, error)")
	f.p("}\n")
	for _, side := range []struct {
		name, doc string
		pick      func(*method) bool
	}{
		{"ServerRequests", "is every request a client can send a server, typed, in any revision (the method table says which revision has which): embed it in a client over its Requester.", func(me *method) bool { return me.C2S && !me.Notification }},
		{"ClientRequests", "is every request a server can send a client, typed, in any revision.", func(me *method) bool { return me.S2C && !me.Notification }},
	} {
		ms := c.methodsWhere(side.pick)
		f.p("// %s %s", side.name, side.doc)
		f.p("type %s struct{ Requester }\n", side.name)
		for _, me := range ms {
			f.p("// %s sends %q (%s).", me.GoName, me.Name, c.revList(c.methodRevs(me)))
			f.p("func (r %s) %s(ctx context.Context%s) %s {", side.name, me.GoName, c.paramsDecl(me), c.resultDecl(me))
			f.p("\tvar p wire.Encoder")
			if me.Params != nil {
				f.p("\tif params != nil { // a typed nil is no params\n\t\tp = params\n\t}")
			}
			f.p("\tres, err := r.Request(ctx, %q, p)", me.Name)
			f.p("\tif err != nil {\n\t\treturn nil, err\n\t}")
			f.p("\tout, ok := res.(*%s)", me.Result.Name)
			f.p("\tif !ok {\n\t\treturn nil, fmt.Errorf(\"mcp: %s answered %%T, not *%s\", res)\n\t}", me.Name, me.Result.Name)
			f.p("\treturn out, nil")
			f.p("}\n")
		}
	}
	return f
}

// sessionMethods emits client/requests_gen.go: the client Session's typed
// methods, one per request a client can send, so that they are the
// Session's own (go doc lists them) rather than promoted from an embedded
// mcp.ServerRequests.
func (c *canonical) sessionMethods() *file {
	f := newFile()
	f.use("context")
	f.use(canonPkg)
	for _, me := range c.methodsWhere(func(me *method) bool { return me.C2S && !me.Notification && !negotiation[me.Name] }) {
		params, args := "", ""
		if me.Params != nil {
			params, args = ", params "+c.qualified(c.paramsGo(me)), ", params"
		}
		f.p("// %s sends %q (%s).", me.GoName, me.Name, c.revList(c.methodRevs(me)))
		f.p("func (s *Session) %s(ctx context.Context%s) (*mcp.%s, error) {", me.GoName, params, me.Result.Name)
		f.p("\treturn mcp.ServerRequests{Requester: s}.%s(ctx%s)", me.GoName, args)
		f.p("}\n")
	}
	return f
}

// negotiation are the requests client.Connect sends to open a session (or
// learn a stateless server); a Session's own methods refuse to send them
// again, by hand.
var negotiation = map[string]bool{"initialize": true, "server/discover": true}

// qualified is a Go type of package mcp spelt from outside it: *T is
// *mcp.T; the predeclared types and wire's stay as they are.
func (c *canonical) qualified(expr string) string {
	star := strings.HasPrefix(expr, "*")
	name := strings.TrimPrefix(expr, "*")
	switch {
	case name == "any", name == "string", name == "bool", name == "int64", name == "float64", strings.Contains(name, "."), strings.ContainsAny(name, "[]"):
		return expr
	}
	if star {
		return "*mcp." + name
	}
	return "mcp." + name
}
