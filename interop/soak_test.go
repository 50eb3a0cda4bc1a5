package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestSoak runs abusive clients of one user (never-reading SSE, Streamable
// HTTP and WebSocket clients with large answers, a ping flood, session and
// listen-stream hoarding, a request flood) beside a well-behaved client of
// another user, against `mcpstack serve` with its default limits. The
// well-behaved client must be served throughout, without one error, and
// the server's resident memory must stay bounded. MCPSTACK_SOAK sets the
// duration (default 15s).
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak test: skipped with -short")
	}
	if raceEnabled {
		// The abusive clients run in this process: under the race detector
		// they are too slow to abuse anything. `make test` runs the soak
		// test again without it.
		t.Skip("soak test: skipped under -race (make test runs it without)")
	}
	d := 15 * time.Second
	if v := os.Getenv("MCPSTACK_SOAK"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil {
			t.Fatalf("MCPSTACK_SOAK=%q: %v", v, err)
		}
	}
	data := t.TempDir()
	srv := startChat(t, data, "--profile", "bench", "--strict=false", "--log-level", "warn")
	base := strings.TrimSuffix(srv.url, "/mcp")
	secret := filepath.Join(data, "secret")
	mallory := mint(t, secret, "mallory", "mcp")
	alice := mint(t, secret, "alice", "mcp")
	pid := srv.cmd.Process.Pid
	rss0 := rssKiB(t, pid)

	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	var abuse abuseCounts
	big := strings.Repeat("x", 1<<20) // each abusive call asks for a 1 MiB answer
	bigCall := func(id int) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, big)
	}
	run := func(n int, f func(ctx context.Context)) {
		for range n {
			wg.Go(func() {
				for ctx.Err() == nil {
					f(ctx)
				}
			})
		}
	}
	// Never-reading HTTP+SSE clients: open /sse, post big calls, read nothing.
	run(4, func(ctx context.Context) {
		conn, endpoint, err := rawSSE(base, mallory)
		if err != nil {
			abuse.add("sse", 0, 1)
			sleepCtx(ctx, 100*time.Millisecond)
			return
		}
		defer conn.Close()
		for i := 0; ctx.Err() == nil; i++ {
			st := postRaw(base+endpoint, mallory, "", bigCall(i))
			abuse.add("sse", 1, 0)
			if st != http.StatusAccepted {
				abuse.add("sse", 0, 1)
				return // the stream (and the session) were dropped
			}
		}
	})
	// Never-reading Streamable HTTP clients: big calls on SSE answers that
	// are never read.
	run(4, func(ctx context.Context) {
		_, hdr, _ := postFull(srv.url, mallory, "", initializeBody("2025-11-25"))
		sid := hdr.Get("Mcp-Session-Id")
		if sid == "" {
			abuse.add("streamable", 0, 1)
			sleepCtx(ctx, 100*time.Millisecond)
			return
		}
		for i := 0; i < 8 && ctx.Err() == nil; i++ {
			if conn, err := rawPost(base, mallory, sid, bigCall(i)); err == nil {
				abuse.add("streamable", 1, 0)
				defer conn.Close()
			}
		}
		sleepCtx(ctx, time.Second)
	})
	// A WebSocket ping flood that never reads its answers.
	run(2, func(ctx context.Context) {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/mcp/ws", &websocket.DialOptions{
			Subprotocols: []string{"mcp"}, HTTPHeader: http.Header{"Authorization": {"Bearer " + mallory}}})
		if err != nil {
			abuse.add("websocket", 0, 1)
			sleepCtx(ctx, 100*time.Millisecond)
			return
		}
		defer c.CloseNow()
		_ = c.Write(ctx, websocket.MessageText, []byte(initializeBody("2025-11-25")))
		ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		for ctx.Err() == nil {
			wctx, wcancel := context.WithTimeout(ctx, time.Second)
			err := c.Write(wctx, websocket.MessageText, ping)
			wcancel()
			if err != nil {
				abuse.add("websocket", 0, 1)
				return
			}
			abuse.add("websocket", 1, 0)
		}
	})
	// Session hoarding and a request flood.
	run(2, func(ctx context.Context) {
		st := postRaw(srv.url, mallory, "", initializeBody("2025-11-25"))
		abuse.add("sessions", 1, 0)
		if st != http.StatusOK {
			abuse.add("sessions", 0, 1)
		}
	})
	// Listen-stream hoarding (2026-07-28).
	run(2, func(ctx context.Context) {
		conn, err := rawPost(base, mallory, "", `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version: 2026-07-28", "Mcp-Method: subscriptions/listen")
		if err != nil {
			abuse.add("listen", 0, 1)
			return
		}
		abuse.add("listen", 1, 0)
		defer conn.Close()
		sleepCtx(ctx, 2*time.Second)
	})

	// The well-behaved client: a call every 20ms, each answer checked.
	var calls, failures atomic.Int64
	var firstFailure atomic.Value
	var latencies []time.Duration // only the client's goroutine appends
	wg.Go(func() {
		_, hdr, _ := postFull(srv.url, alice, "", initializeBody("2025-11-25"))
		sid := hdr.Get("Mcp-Session-Id")
		postRaw(srv.url, alice, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		for i := 0; ctx.Err() == nil; i++ {
			want := "hello " + strconv.Itoa(i)
			start := time.Now()
			st, msg := postJSON(srv.url, alice, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, i, want))
			latencies = append(latencies, time.Since(start))
			calls.Add(1)
			if ctx.Err() != nil {
				return
			}
			if got := toolText(msg); st != http.StatusOK || got != want {
				failures.Add(1)
				firstFailure.CompareAndSwap(nil, fmt.Sprintf("call %d: HTTP %d, %v", i, st, msg))
			}
			sleepCtx(ctx, 20*time.Millisecond)
		}
	})

	peak := rss0
	for ctx.Err() == nil {
		peak = max(peak, rssKiB(t, pid))
		sleepCtx(ctx, 100*time.Millisecond)
	}
	wg.Wait()
	hwm := hwmKiB(t, pid)
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[int(p*float64(len(latencies)-1))].Round(100 * time.Microsecond)
	}
	t.Logf("soak %v: abusive requests %d (refused or dropped %d: %s); well-behaved calls %d, failures %d, latency p50 %v p99 %v max %v; server RSS %d MiB at start, peak %d MiB (VmHWM %d MiB)",
		d, abuse.sent.Load(), abuse.refused.Load(), &abuse, calls.Load(), failures.Load(), pct(0.5), pct(0.99), pct(1), rss0>>10, peak>>10, hwm>>10)
	if failures.Load() > 0 {
		t.Errorf("the well-behaved client failed %d of %d calls; first: %v", failures.Load(), calls.Load(), firstFailure.Load())
	}
	if calls.Load() < int64(d/(200*time.Millisecond)) {
		t.Errorf("the well-behaved client made only %d calls in %v", calls.Load(), d)
	}
	if hwm > 512<<10 {
		t.Errorf("server peak RSS %d MiB, over 512 MiB", hwm>>10)
	}
	if abuse.refused.Load() == 0 {
		t.Errorf("no abusive request was refused or dropped: the abuse did not reach a limit")
	}
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != 200 {
		t.Errorf("the server is not healthy after the soak: %v %v", resp, err)
	}
}

// abuseCounts counts, per kind of abuse, the requests sent and those
// refused or dropped.
type abuseCounts struct {
	sent, refused atomic.Int64
	mu            sync.Mutex
	kinds         map[string]*[2]int64
}

func (a *abuseCounts) add(kind string, sent, refused int64) {
	a.sent.Add(sent)
	a.refused.Add(refused)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kinds == nil {
		a.kinds = map[string]*[2]int64{}
	}
	if a.kinds[kind] == nil {
		a.kinds[kind] = &[2]int64{}
	}
	a.kinds[kind][0] += sent
	a.kinds[kind][1] += refused
}

func (a *abuseCounts) String() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var parts []string
	for k, v := range a.kinds {
		parts = append(parts, fmt.Sprintf("%s %d sent/%d refused", k, v[0], v[1]))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func initializeBody(rev string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + rev + `","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// rawSSE opens an HTTP+SSE stream on a connection with a tiny receive
// buffer, reads up to the endpoint event and returns the connection (never
// read again) and the endpoint.
func rawSSE(base, token string) (net.Conn, string, error) {
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		return nil, "", err
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /sse HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\nAuthorization: Bearer %s\r\n\r\n", host, token)
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 200 ") {
		conn.Close()
		return nil, "", fmt.Errorf("GET /sse: %q %v", status, err)
	}
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			conn.Close()
			return nil, "", err
		}
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok && strings.Contains(rest, "sessionId=") {
			return conn, "/" + strings.TrimPrefix(rest, "/"), nil
		}
	}
}

// rawPost sends a POST on a connection with a tiny receive buffer and
// never reads the answer.
func rawPost(base, token, sid, body string, headers ...string) (net.Conn, error) {
	host := strings.TrimPrefix(base, "http://")
	conn, err := net.DialTimeout("tcp", host, 2*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n", host, token, len(body))
	if sid != "" {
		fmt.Fprintf(&b, "Mcp-Session-Id: %s\r\n", sid)
	}
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n" + body)
	_ = conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, b.String()); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// postRaw POSTs a body and returns the status, reading the answer.
func postRaw(url, token, sid, body string) int {
	st, _ := postJSON(url, token, sid, body)
	return st
}

var soakClient = &http.Client{Timeout: 10 * time.Second}

// postJSON POSTs a body and returns the status and the JSON-RPC answer
// (from a JSON body or the last event of an SSE answer).
func postJSON(url, token, sid, body string) (int, map[string]any) {
	st, _, msg := postFull(url, token, sid, body)
	return st, msg
}

// postFull is postJSON with the response's headers.
func postFull(url, token, sid, body string) (int, http.Header, map[string]any) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := soakClient.Do(req)
	if err != nil {
		return 0, nil, map[string]any{"transport error": err.Error()}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	text := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		text = ""
		for _, line := range strings.Split(string(raw), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				text = d
			}
		}
	}
	var msg map[string]any
	_ = json.Unmarshal([]byte(text), &msg)
	return resp.StatusCode, resp.Header, msg
}

func toolText(msg map[string]any) string {
	res, _ := msg["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		return ""
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}

// rssKiB and hwmKiB read a process's resident memory now and at its peak.
func rssKiB(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmRSS:") }
func hwmKiB(t *testing.T, pid int) int64 { return procStatus(t, pid, "VmHWM:") }

func procStatus(t *testing.T, pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to read the server's memory from: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
