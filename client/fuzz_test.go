package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
)

// scriptConn is a server in memory: it answers initialize, and answers a
// ping with the fuzzed body (%ID% is the ping's id).
type scriptConn struct {
	body   []byte
	mu     sync.Mutex
	queue  [][]byte
	wake   chan struct{}
	closed chan struct{}
	once   sync.Once
}

func (c *scriptConn) Connect(context.Context) (client.Conn, error) { return c, nil }

func (c *scriptConn) Send(_ context.Context, msg []byte) error {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &m)
	var out []byte
	switch m.Method {
	case "initialize":
		out = []byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`)
	case "ping":
		out = bytes.ReplaceAll(c.body, []byte("%ID%"), m.ID)
	default:
		return nil
	}
	c.mu.Lock()
	c.queue = append(c.queue, out)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

func (c *scriptConn) Read(ctx context.Context) ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return m, nil
		}
		c.mu.Unlock()
		select {
		case <-c.wake:
		case <-c.closed:
			return nil, client.ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (c *scriptConn) Negotiated(string) {}

func (c *scriptConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

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
		conn := &scriptConn{body: body, wake: make(chan struct{}, 1), closed: make(chan struct{})}
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
