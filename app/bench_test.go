package app_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/mcpstack/mcpstack/internal/core"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/server"
)

// BenchmarkTypedToolCall is one tools/call of a typed tool (arguments
// validated and decoded, structured output encoded and checked against its
// outputSchema) through a session, as a transport hands it over. Compare
// two trees with the same command; the figure alone says little.
func BenchmarkTypedToolCall(b *testing.B) {
	srv := app.NewServer(calculator(), server.WithStrict(true))
	b.Cleanup(srv.Close)
	sess, err := core.Of(srv).NewSession("", &outbox{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`), nil)
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	call := []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`)
	if reply := sess.Handle(ctx, call, nil); !bytes.Contains(reply, []byte(`"structuredContent":{"sum":3}`)) {
		b.Fatalf("tools/call: %s", reply)
	}
	b.ReportAllocs()
	for b.Loop() {
		sess.Handle(ctx, call, nil)
	}
}
