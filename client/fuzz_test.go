package client_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
)

// FuzzReceive: whatever a server answers, the client neither panics nor
// hangs: the call ends with a result, an error or a violation, and the
// session closes.
func FuzzReceive(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":%ID%,"result":{}}`,
		`{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32601,"message":"no"}}`,
		`{"jsonrpc":"2.0","id":%ID%,"result":{},"error":{"code":1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":"other","result":{}}`,
		`[{"jsonrpc":"2.0","id":%ID%,"result":{}},{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}]`,
		`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`,
		`{"jsonrpc":"2.0","id":%ID%,"result":`,
		`not json`, `[]`, `{}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		conn := newHostile(func(method, id string) []string {
			if method != "ping" {
				return nil
			}
			return []string{strings.ReplaceAll(string(body), "%ID%", id)}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		s, err := client.New("fuzz", "1", client.WithViolationHandler(func(*client.Violation) {})).Connect(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		pctx, stop := context.WithTimeout(ctx, 5*time.Millisecond)
		_, _ = s.Ping(pctx, nil)
		stop()
		done := make(chan struct{})
		go func() { s.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
			t.Fatal("Close did not return")
		}
	})
}
