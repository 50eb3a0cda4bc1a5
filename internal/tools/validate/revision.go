package validate

import (
	"encoding/json"
	"io/fs"
	"path"
	"sort"
	"sync"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/schema"
)

// Method names the lifecycle rules need. Whether a revision has them at
// all is read from its method table.
const (
	methodInitialize  = "initialize"
	methodInitialized = "notifications/initialized"
	methodPing        = "ping"
	methodCancelled   = "notifications/cancelled"
	methodProgress    = "notifications/progress"
	methodLog         = "notifications/message"
	methodDiscover    = "server/discover"
	methodListen      = "subscriptions/listen"
)

// revision is what the checks need of one protocol revision, all of it read
// from the revision's method table and schemas.
type revision struct {
	spec *protocol.Spec
	v    *protocol.Validator
	err  error // the schemas did not compile

	// lifecycle: the method table has initialize. Without it (2026-07-28)
	// every request carries its revision in params._meta.
	lifecycle bool
	// batchRequest, batchResponse: the schema has JSONRPCBatchRequest,
	// JSONRPCBatchResponse (2025-03-26).
	batchRequest, batchResponse bool
	// errorDef is the definition of an error response (JSONRPCError up to
	// 2025-06-18, JSONRPCErrorResponse after).
	errorDef string
	// caps are the capability paths ("resources.subscribe") the
	// revision's ClientCapabilities and ServerCapabilities define.
	caps [2]map[string]bool
}

func (r *revision) name() string { return r.spec.Revision }

// has reports whether the revision's schema folder defines name.
func (r *revision) has(name string) bool { return r.v != nil && r.v.Has(name) }

var (
	revOnce sync.Once
	revs    map[string]*revision
	// newestLifecycle is the newest revision with initialize: what a
	// session is read as before its initialize is answered.
	newestLifecycle *revision
)

// revisions returns the supported revisions by name. Their schemas are
// compiled on first use.
func revisions() map[string]*revision {
	revOnce.Do(func() {
		revs = map[string]*revision{}
		for _, sp := range generated.Specs {
			r := &revision{spec: sp}
			r.v, r.err = sp.Validator()
			_, r.lifecycle = sp.Method(methodInitialize)
			r.batchRequest = r.has("JSONRPCBatchRequest")
			r.batchResponse = r.has("JSONRPCBatchResponse")
			r.errorDef = sp.ErrorResponse()
			r.caps[fromClient] = capabilityPaths(sp.Revision, "ClientCapabilities")
			r.caps[fromServer] = capabilityPaths(sp.Revision, "ServerCapabilities")
			revs[sp.Revision] = r
			if r.lifecycle {
				newestLifecycle = r
			}
		}
	})
	return revs
}

// lookupRevision returns a supported revision, or nil.
func lookupRevision(name string) *revision { return revisions()[name] }

// revisionNames lists the supported revisions, oldest first.
func revisionNames() []string {
	out := make([]string, len(generated.Specs))
	for i, sp := range generated.Specs {
		out[i] = sp.Revision
	}
	return out
}

// capabilityPaths lists the dotted paths of the properties a capabilities
// definition declares, nested ones included.
func capabilityPaths(rev, def string) map[string]bool {
	out := map[string]bool{}
	files, err := schema.Files(rev)
	if err != nil {
		return out
	}
	p, ok := files[def]
	if !ok {
		return out
	}
	walkProperties(p, "", out, 0)
	return out
}

func walkProperties(file, prefix string, out map[string]bool, depth int) {
	if depth > 8 {
		return
	}
	b, err := fs.ReadFile(schema.FS, file)
	if err != nil {
		return
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil {
		return
	}
	walkSchema(file, doc, prefix, out, depth)
}

func walkSchema(file string, s map[string]any, prefix string, out map[string]bool, depth int) {
	if ref, ok := s["$ref"].(string); ok && path.Ext(ref) == ".json" {
		walkProperties(path.Join(path.Dir(file), ref), prefix, out, depth+1)
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		out[p] = true
		if sub, ok := props[k].(map[string]any); ok {
			walkSchema(file, sub, p, out, depth+1)
		}
	}
}

// methodDirections is the union of the method tables of every revision:
// which sides may send a method in some revision. Plain JSON Lines logs
// infer directions from it before their revision is known.
var methodDirections = sync.OnceValue(func() map[string][2]bool {
	out := map[string][2]bool{}
	for _, sp := range generated.Specs {
		for _, m := range sp.Methods {
			d := out[m.Name]
			d[fromClient] = d[fromClient] || m.ClientToServer
			d[fromServer] = d[fromServer] || m.ServerToClient
			out[m.Name] = d
		}
	}
	return out
})
