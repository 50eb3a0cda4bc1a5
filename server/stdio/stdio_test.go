package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// pipeClient drives Serve through pipes, as a client process would.
type pipeClient struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func start(t *testing.T, opts ...stdio.Option) *pipeClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
	c := &pipeClient{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	c.out.Buffer(make([]byte, 1<<20), 1<<20)
	go func() {
		c.done <- stdio.Serve(context.Background(), srv, inR, outW, opts...)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		srv.Close()
	})
	return c
}

func (c *pipeClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

func (c *pipeClient) recv() map[string]any {
	c.t.Helper()
	if !c.out.Scan() {
		c.t.Fatalf("no line from the server: %v", c.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(c.out.Bytes(), &m); err != nil {
		c.t.Fatalf("server wrote a non-JSON line %q: %v", c.out.Text(), err)
	}
	return m
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`

// TestSamplingRoundTrip: a tool asks the client's model through
// sampling/createMessage on stdout; the client's answer on stdin completes
// the call.
func TestSamplingRoundTrip(t *testing.T) {
	c := start(t)
	c.send(initLine)
	if r := c.recv(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"What is 2+2?"}}}`)
	req := c.recv()
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want a sampling request, got %v", req)
	}
	msgs := req["params"].(map[string]any)["messages"].([]any)
	if got := msgs[0].(map[string]any)["content"].(map[string]any)["text"]; got != "What is 2+2?" {
		t.Errorf("sampling prompt %v", got)
	}
	id, _ := json.Marshal(req["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}`)
	res := c.recv()
	text := res["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"].(string)
	if res["id"] != 2.0 || !strings.Contains(text, "Four.") {
		t.Errorf("tool result %v", res)
	}
}

// TestBadLinesKeepServing: bad input gets its error and the next line is
// served; EOF ends Serve cleanly.
func TestBadLinesKeepServing(t *testing.T) {
	c := start(t, stdio.WithMaxLine(256))
	c.send(`not json`)
	if r := c.recv(); r["error"].(map[string]any)["code"] != -32700.0 {
		t.Errorf("want -32700, got %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":"` + strings.Repeat("y", 400) + `"}}}`)
	if r := c.recv(); r["error"].(map[string]any)["code"] != -32700.0 {
		t.Errorf("over-long line: want -32700, got %v", r)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := c.recv(); r["id"] != 2.0 || r["result"] == nil {
		t.Errorf("ping after bad lines: %v", r)
	}
	c.in.Close()
	select {
	case err := <-c.done:
		if err != nil {
			t.Errorf("Serve after EOF: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after EOF")
	}
}

// TestEOFWaitsForCalls: a call in flight when stdin closes is still
// answered before Serve returns.
func TestEOFWaitsForCalls(t *testing.T) {
	inR, inW := io.Pipe()
	var out syncBuffer
	srv := server.New(conformance.New(conformance.WithStepDelay(20 * time.Millisecond)))
	defer srv.Close()
	go func() {
		io.WriteString(inW, initLine+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_progress"}}`+"\n")
		inW.Close()
	}()
	if err := stdio.Serve(context.Background(), srv, inR, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"id":2,"result"`) {
		t.Errorf("the call in flight was not answered:\n%s", out.String())
	}
}

type syncBuffer = syncbuf.Buffer

// A batch with an initialize in it runs as calls do, not on the reading
// path: a call in it that asks the client (sampling) gets the answer the
// client sends next, instead of waiting for it until the call's timeout.
func TestBatchWithInitializeReadsOn(t *testing.T) {
	c := start(t)
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if r := c.recv(); r["result"] == nil {
		t.Fatalf("initialize: %v", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`[{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"What is 2+2?"}}}]`)
	got := make(chan any)
	go func() {
		defer close(got)
		for c.out.Scan() {
			var m any
			if json.Unmarshal(c.out.Bytes(), &m) != nil {
				return
			}
			got <- m
		}
	}()
	var req map[string]any
	select {
	case m := <-got:
		req, _ = m.(map[string]any)
	case <-time.After(5 * time.Second):
		t.Fatal("no sampling request")
	}
	if req["method"] != "sampling/createMessage" {
		t.Fatalf("want a sampling request, got %v", req)
	}
	id, _ := json.Marshal(req["id"])
	c.send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}`)
	select {
	case m := <-got:
		if !strings.Contains(fmt.Sprint(m), "Four.") {
			t.Errorf("the batch's answer: %v, want the tool's result with the client's answer", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer to the sampling request was not read while the batch ran")
	}
}

// A stdio session lives as long as its client runs the server, however
// quiet: the idle timeout ended it, and Serve returned as if stdin had
// closed (mcpstack serve --stdio exited after half an hour without a call).
func TestQuietSessionIsNotIdledOut(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(conformance.New(), server.WithLimits(server.Limits{SessionIdle: 50 * time.Millisecond}))
	defer srv.Close()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(context.Background(), srv, inR, outW); outW.Close() }()
	defer inW.Close()
	c := &pipeClient{t: t, in: inW, out: bufio.NewScanner(outR), done: done}
	c.send(initLine)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	select {
	case err := <-done:
		t.Fatalf("Serve returned after a quiet spell: %v", err)
	case <-time.After(500 * time.Millisecond): // ten idle timeouts
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	if r := c.recv(); r["id"] != 2.0 || r["result"] == nil {
		t.Errorf("ping after a quiet spell: %v", r)
	}
}

// A request of the stateless revision (2026-07-28: no initialize) is in
// flight on the session as any other: its id is taken until it is
// answered, and notifications/cancelled reaches it (it went down a side
// path that neither tracked it nor let a cancellation through).
func TestStatelessRequestIsTrackedAndCancelled(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := server.New(conformance.New(conformance.WithStepDelay(300 * time.Millisecond)))
	defer srv.Close()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(context.Background(), srv, inR, outW); outW.Close() }()
	defer inW.Close()
	c := &pipeClient{t: t, in: inW, out: bufio.NewScanner(outR), done: done}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_tool_with_progress",` + meta + `}}`
	c.send(call)
	c.send(call) // the same id while the first runs
	if r := c.recv(); r["id"] != 7.0 || r["error"] == nil || !strings.Contains(fmt.Sprint(r["error"]), "already in use") {
		t.Fatalf("a second request with an id in flight: %v, want refused", r)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"no longer needed"}}`)
	c.send(`{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{` + meta + `}}`)
	for {
		r := c.recv()
		if r["id"] == 7.0 {
			t.Fatalf("the cancelled request was answered: %v", r)
		}
		if r["id"] == 8.0 {
			break
		}
	}
	time.Sleep(time.Second) // past the tool's own end
	c.send(`{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{` + meta + `}}`)
	if r := c.recv(); r["id"] != 9.0 {
		t.Errorf("after the cancellation: %v, want the answer to 9 (none to 7)", r)
	}
}

// A call's progress stops with the call: a goroutine its handler left
// running that reports progress after the answer is refused, and nothing
// reaches the client after the answer (the core sent it on the session's
// stream in place of the call's).
func TestNoProgressAfterTheAnswer(t *testing.T) {
	late := make(chan error, 1)
	a := app.New("late", "1")
	app.AddTool(a, app.Tool{Name: "leaves", Description: "Returns, leaving a goroutine that reports progress."},
		func(ctx context.Context, _ struct{}) (string, error) {
			go func() {
				time.Sleep(100 * time.Millisecond)
				late <- peer.Progress(ctx, 1, nil, "after the answer")
			}()
			return "done", nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv := app.NewServer(a)
	defer srv.Close()
	go func() { _ = stdio.Serve(context.Background(), srv, inR, outW); outW.Close() }()
	defer inW.Close()
	c := &pipeClient{t: t, in: inW, out: bufio.NewScanner(outR)}
	c.send(initLine)
	c.recv()
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"leaves","_meta":{"progressToken":"tok"}}}`)
	if r := c.recv(); r["id"] != 2.0 {
		t.Fatalf("the call: %v", r)
	}
	lines := make(chan string, 4)
	go func() {
		for c.out.Scan() {
			lines <- c.out.Text()
		}
	}()
	select {
	case err := <-late:
		if err == nil {
			t.Error("progress after the answer was accepted")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the goroutine's progress never returned")
	}
	c.send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	select {
	case line := <-lines:
		if !strings.Contains(line, `"id":3`) {
			t.Errorf("after the answer came %s, want the ping's answer", line)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no answer to the ping")
	}
}

// A cancelled Serve returns though a call is blocked writing to a client
// that reads nothing: it waited for every call, so that the process of
// mcpstack serve --stdio could not stop on a signal.
func TestCancelledServeReturnsPastABlockedWrite(t *testing.T) {
	defer stdio.SetDrainTimeout(200 * time.Millisecond)()
	inR, inW := io.Pipe()
	out := &stuckOut{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(out.release)
	srv := server.New(conformance.New())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(ctx, srv, inR, out) }()
	defer inW.Close()
	go func() { _, _ = io.WriteString(inW, initLine+"\n") }() // initialize's answer blocks
	select {
	case <-out.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("initialize was not answered")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Serve: %v, want context.Canceled", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("a cancelled Serve did not return")
	}
}

// failingOut takes its first write and fails the others, as a client that
// went away.
type failingOut struct {
	mu     sync.Mutex
	writes int
}

func (f *failingOut) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.writes++; f.writes > 1 {
		return 0, errors.New("broken pipe")
	}
	return len(p), nil
}

// An answer that cannot be written ends Serve with the error, not as a
// clean end (mcpstack serve --stdio exited 0).
func TestFailedWriteEndsServeWithIt(t *testing.T) {
	inR, inW := io.Pipe()
	srv := server.New(conformance.New())
	defer srv.Close()
	done := make(chan error, 1)
	go func() { done <- stdio.Serve(context.Background(), srv, inR, &failingOut{}) }()
	defer inW.Close()
	_, _ = io.WriteString(inW, initLine+"\n"+`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "broken pipe") {
			t.Errorf("Serve: %v, want the write's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not end after a failed write")
	}
}

// stuckOut is a client that reads nothing: a write blocks until release.
type stuckOut struct {
	once             sync.Once
	entered, release chan struct{}
}

func (s *stuckOut) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.entered) })
	<-s.release
	return 0, io.ErrClosedPipe
}
