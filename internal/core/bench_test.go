package core_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/bench"
	"github.com/mcpstack/mcpstack/server"
)

// BenchmarkSessionCall serves tools/call of the bench echo over a
// 2025-11-25 session, in process: the core's whole path from the body to
// the encoded answer, without a transport (make bench-core; its allocation
// profile is where the GC's work comes from).
func BenchmarkSessionCall(b *testing.B) {
	srv := server.New(bench.New().Handler())
	defer srv.Close()
	sess, err := core.Of(srv).NewSession("", nil)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`), nil)
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	bodies := make([][]byte, 64)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%064d"}}}`, i+1, i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if reply := sess.Handle(ctx, bodies[i%len(bodies)], nil); reply == nil {
			b.Fatal("no answer")
		}
		i++
	}
}
