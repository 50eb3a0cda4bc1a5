package generated_test

import (
	"sort"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// FuzzSurelyValid holds the generated validators to the reference: a
// message they call valid against a definition of a revision is valid by
// santhosh-tekuri v6 over the same schemas. Each input is judged against
// every request, notification and result definition of every revision,
// as a tree (SurelyValid) and, when it is one JSON-RPC message, as the
// server reads it (SurelyValidMessage: the envelope checks).
func FuzzSurelyValid(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":1.5,"total":3}}`,
		`{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1},"isError":false}`,
		`{"contents":[{"uri":"file:///a","mimeType":"text/plain","text":"x"}]}`,
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"conversation://{id}"}}`,
		`{"resourceTemplates":[{"uriTemplate":"x://{a}","name":"n"}]}`,
		`{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":10000000000000000000001}}`,
	} {
		f.Add([]byte(seed))
	}
	type target struct {
		rev, def string
	}
	var targets []target
	for _, spec := range generated.Specs {
		defs := map[string]bool{}
		for _, m := range spec.Methods {
			for _, d := range []string{m.Request, m.Result, m.Response} {
				if d != "" {
					defs[d] = true
				}
			}
		}
		for d := range defs {
			targets = append(targets, target{spec.Revision, d})
		}
	}
	sort.Slice(targets, func(i, j int) bool {
		return targets[i].rev+targets[i].def < targets[j].rev+targets[j].def
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := jsontree.Parse(data)
		if err != nil {
			return
		}
		var msg *jsonrpc.Message
		if items, batch, perr := jsonrpc.Parse(data, jsonrpc.Limits{MaxDepth: 10000}); perr == nil && !batch {
			msg = items[0].Msg
		}
		for _, tg := range targets {
			spec := generated.Lookup(tg.rev)
			if !spec.SurelyValid(tg.def, tree) && (msg == nil || !spec.SurelyValidMessage(tg.def, msg)) {
				continue
			}
			ref, err := spec.Validator()
			if err != nil {
				t.Fatal(err)
			}
			if err := ref.Validate(tg.def, tree); err != nil {
				t.Errorf("%s %s: the generated validator calls %s valid, the reference says %v", tg.rev, tg.def, data, err)
			}
		}
	})
}
