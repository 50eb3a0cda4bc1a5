package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// hostileConn is a server in memory that answers initialize and, for
// every other message the client sends, whatever reply gives (in order).
// A Send of a message that block matches waits until release closes.
type hostileConn struct {
	reply   func(method, id string) []string
	block   func(msg []byte) bool
	release chan struct{}

	mu     sync.Mutex
	queue  []string
	wake   chan struct{}
	closed chan struct{}
	once   sync.Once
}

func newHostile(reply func(method, id string) []string) *hostileConn {
	return &hostileConn{reply: reply, block: func([]byte) bool { return false }, release: make(chan struct{}), wake: make(chan struct{}, 1), closed: make(chan struct{})}
}

func (c *hostileConn) Connect(context.Context) (client.Conn, error) { return c, nil }

func (c *hostileConn) push(msgs ...string) {
	c.mu.Lock()
	c.queue = append(c.queue, msgs...)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *hostileConn) Send(ctx context.Context, msg []byte) error {
	if c.block(msg) {
		select {
		case <-c.release:
		case <-c.closed:
			return client.ErrClosed
		}
	}
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(msg, &m)
	if m.Method == "initialize" {
		c.push(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"logging":{}},"serverInfo":{"name":"s","version":"1"}}}`)
		return nil
	}
	c.push(c.reply(m.Method, string(m.ID))...)
	return nil
}

func (c *hostileConn) Read(ctx context.Context) ([]byte, error) {
	for {
		c.mu.Lock()
		if len(c.queue) > 0 {
			m := c.queue[0]
			c.queue = c.queue[1:]
			c.mu.Unlock()
			return []byte(m), nil
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

func (c *hostileConn) Negotiated(string) {}

func (c *hostileConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

const listChanged = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`

// A notification handler that calls the session, as
// WithNotificationHandler allows, gets its answer even when the server
// sends more notifications than the queue holds before answering: the
// read loop drops what does not fit (and logs it) rather than wait for a
// handler that waits for the read loop.
func TestNotificationFloodDoesNotStallTheSession(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := newHostile(func(method, id string) []string {
		switch method {
		case "notifications/initialized":
			return []string{listChanged}
		case "tools/list": // a flood first, the answer after it
			return append(slices.Repeat([]string{listChanged}, 1000), `{"jsonrpc":"2.0","id":`+id+`,"result":{"tools":[]}}`)
		case "ping":
			return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
		}
		return nil
	})
	var s *client.Session
	connected := make(chan struct{}) // s is set
	var log syncbuf.Buffer
	listed := make(chan error, 2000)
	c := client.New("t", "1", client.WithLogger(slog.New(slog.NewTextHandler(&log, nil))), client.WithNotificationHandler(func(ctx context.Context, method string, _ wire.Encoder) {
		<-connected
		for _, err := range s.Tools(ctx) {
			if err != nil {
				listed <- err
				return
			}
		}
		listed <- nil
	}))
	var err error
	s, err = c.Connect(ctx, conn)
	close(connected)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	select {
	case err := <-listed:
		if err != nil {
			t.Fatalf("the handler's tools/list: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the handler's tools/list never got its answer: the read loop waits for the handler")
	}
	if _, err := s.Ping(ctx, &mcp.RequestParams{}); err != nil {
		t.Fatalf("ping after the flood: %v", err)
	}
	if !strings.Contains(log.String(), "notification dropped") {
		t.Errorf("nothing logged of the notifications dropped:\n%.500s", log.String())
	}
}

// The refusal of a request the client has no room for is sent off the
// read loop: a server that does not take it at once (an HTTP server that
// holds the POST) cannot stop the client from reading other answers.
func TestRefusalDoesNotStallTheReadLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn := floodBeforePong(0, 40) // more sampling requests than the client serves at once
	defer close(conn.release)
	held := make(chan struct{})
	defer close(held)
	c := client.New("t", "1", holdSampling(held))
	s, err := c.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ping(ctx, &mcp.RequestParams{}); err != nil {
		t.Fatalf("ping behind a refusal the server does not take: %v", err)
	}
}

// floodBeforePong is a server that sends notes list_changed notifications
// and requests sampling requests before it answers a ping, and does not
// take the client's refusals (-32000) until release closes.
func floodBeforePong(notes, requests int) *hostileConn {
	const sampling = `{"jsonrpc":"2.0","id":"s%d","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}`
	conn := newHostile(func(method, id string) []string {
		if method != "ping" {
			return nil
		}
		out := slices.Repeat([]string{listChanged}, notes)
		for i := range requests {
			out = append(out, fmt.Sprintf(sampling, i))
		}
		return append(out, `{"jsonrpc":"2.0","id":`+id+`,"result":{}}`)
	})
	conn.block = func(msg []byte) bool { return strings.Contains(string(msg), `"code":-32000`) }
	return conn
}

// holdSampling serves each sampling request by holding its slot until
// held closes.
func holdSampling(held <-chan struct{}) client.Option {
	return client.WithSampling(func(ctx context.Context, _ *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
		select {
		case <-held:
		case <-ctx.Done():
		}
		return nil, ctx.Err()
	})
}

// Each kind of drop is logged on its own: a request left unanswered right
// after a flood of dropped notifications gets its line, not a share of the
// notifications' count.
func TestDropsLoggedByKind(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// More notifications than the queue holds, then more requests than
	// the client serves and refuses at once.
	conn := floodBeforePong(1000, 200)
	defer close(conn.release)
	held := make(chan struct{})
	defer close(held)
	var log syncbuf.Buffer
	c := client.New("t", "1",
		client.WithLogger(slog.New(slog.NewTextHandler(&log, nil))),
		client.WithNotificationHandler(func(ctx context.Context, _ string, _ wire.Encoder) {
			select { // each notification holds the queue
			case <-held:
			case <-ctx.Done():
			}
		}),
		holdSampling(held))
	s, err := c.Connect(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ping(ctx, &mcp.RequestParams{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"notification dropped", "left unanswered"} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("no %q line:\n%.1000s", want, log.String())
		}
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "left unanswered") { // the first: later ones, a second on, count their own kind
			if !strings.Contains(line, "dropped_unlogged_before=0") {
				t.Errorf("the first unanswered request's line counts other drops: %s", line)
			}
			break
		}
	}
}

// A list the server never ends stops with an error: cursors in a cycle at
// once, and fresh cursors every time after the bound on pages, whether
// its pages are empty (the loop's body never runs to break it) or not.
func TestEndlessListsEnd(t *testing.T) {
	defer client.SetListBounds(100, 1000)()
	tests := []struct {
		name  string
		next  func(page int) string
		tools int // per page
		want  string
	}{
		{"a cycle", func(page int) string { return []string{"a", "b"}[page%2] }, 1, "twice"},
		{"the same cursor again", func(int) string { return "a" }, 0, "twice"},
		{"fresh cursors, empty pages", func(page int) string { return fmt.Sprint("c", page) }, 0, "pages"},
		{"fresh cursors, full pages", func(page int) string { return fmt.Sprint("c", page) }, 20, "items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var mu sync.Mutex
			page := 0
			tools := strings.TrimSuffix(strings.Repeat(`{"name":"t","inputSchema":{"type":"object"}},`, tt.tools), ",")
			conn := newHostile(func(method, id string) []string {
				if method != "tools/list" {
					return nil
				}
				mu.Lock()
				defer mu.Unlock()
				page++
				return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[` + tools + `],"nextCursor":"` + tt.next(page) + `"}}`}
			})
			s, err := client.New("t", "1").Connect(ctx, conn)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var last error
			for _, err := range s.Tools(ctx) {
				last = err
			}
			if last == nil || !strings.Contains(last.Error(), tt.want) {
				t.Fatalf("the loop ended with %v, want an error naming %q", last, tt.want)
			}
			if ctx.Err() != nil {
				t.Fatal("it ended with the context, not by itself")
			}
		})
	}
}
