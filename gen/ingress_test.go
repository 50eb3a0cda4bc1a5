package main

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated/mcp20251125"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
)

// ingressMessage is a 2025-11-25 tools/call request of about 300 bytes.
var ingressMessage = []byte(`{"jsonrpc":"2.0","id":"req-8f14e45f","method":"tools/call","params":{"name":"chat","arguments":{"query":"Summarise the last three messages of this conversation in one line","conversation_id":"conv_123","max_tokens":256,"temperature":0.2},"_meta":{"progressToken":"tok-17","com.example/trace":"a1b2c3"}}}`)

// plainCall is what a hand-written server would decode into with
// encoding/json: the baseline.
type plainCall struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Method  string `json:"method"`
	Params  struct {
		Name      string         `json:"name"`
		Arguments map[string]any `json:"arguments"`
		Meta      map[string]any `json:"_meta"`
	} `json:"params"`
}

func ingressBaselineOnce() error {
	var c plainCall
	return json.Unmarshal(ingressMessage, &c)
}

// ingressValidatedOnce is the server's ingress path: one parse into a tree,
// validation of the whole message against its method's request definition,
// conversion of params into the canonical type without parsing again.
func ingressValidatedOnce() error {
	spec := &mcp20251125.Spec
	tree, err := jsontree.Parse(ingressMessage)
	if err != nil {
		return err
	}
	msg := tree.(map[string]any)
	m, ok := spec.Method(msg["method"].(string))
	if !ok {
		return errors.New("no method")
	}
	if err := spec.Validate(m.Request, msg); err != nil {
		return err
	}
	var p mcp.CallToolRequestParams
	return p.DecodeValue(msg["params"], spec.Index)
}

func BenchmarkIngressBaseline(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := ingressBaselineOnce(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkIngressValidated(b *testing.B) {
	if _, err := mcp20251125.Spec.Validator(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := ingressValidatedOnce(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngress interleaves the baseline and the validated path in one
// loop and reports their ratios (validated over baseline) for time and
// allocations: no absolute figure, so it means the same on any machine.
func BenchmarkIngress(b *testing.B) {
	if _, err := mcp20251125.Spec.Validator(); err != nil {
		b.Fatal(err)
	}
	var base, ours time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := ingressBaselineOnce(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := ingressValidatedOnce(); err != nil {
			b.Fatal(err)
		}
		base += t1.Sub(t0)
		ours += time.Since(t1)
	}
	b.ReportMetric(float64(ours)/float64(base), "time-ratio")
	allocBase := testing.AllocsPerRun(100, func() { _ = ingressBaselineOnce() })
	allocOurs := testing.AllocsPerRun(100, func() { _ = ingressValidatedOnce() })
	b.ReportMetric(allocOurs/allocBase, "alloc-ratio")
}
