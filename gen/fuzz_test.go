package main

import (
	"encoding/json"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/instance"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
)

// FuzzDecodeMessage feeds arbitrary bytes through the ingress path of every
// revision. Whatever the input, nothing panics; and whatever a revision's
// schema accepts, the generated decoder accepts too, and its projection is
// again valid: validation and decoding never disagree.
func FuzzDecodeMessage(f *testing.F) {
	f.Add(ingressMessage)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,{"b":null}]}}}`))
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`))
	f.Add([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}`))
	for _, spec := range generated.Specs {
		for _, m := range spec.Methods { // sorted by name
			msg := synth(f, spec.Revision, m.Request, instance.Full)
			b, _ := json.Marshal(msg)
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := jsontree.Parse(data)
		if err != nil {
			return
		}
		msg, ok := tree.(map[string]any)
		if !ok {
			return
		}
		name, _ := msg["method"].(string)
		for _, spec := range generated.Specs {
			m, ok := spec.Method(name)
			if !ok {
				continue
			}
			if spec.Validate(m.Request, msg) != nil {
				continue
			}
			params, has := msg["params"]
			if !has {
				continue
			}
			p, err := mcp.DecodeParams(name, params, spec.Index)
			if err != nil {
				t.Fatalf("%s %s: schema accepts %s but decode fails: %v", spec.Revision, name, data, err)
			}
			back := map[string]any{}
			for k, v := range msg {
				back[k] = v
			}
			back["params"] = spec.Project(p)
			if err := spec.Validate(m.Request, back); err != nil {
				t.Fatalf("%s %s: projection of %s is invalid: %v", spec.Revision, name, data, err)
			}
			sameBytes(t, p) // the direct encoding, in every revision's shape, is the tree's
		}
	})
}
