package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/internal/sse"
)

// redisEnv names the Redis server of the tests (.ci/run sets it); without
// it the cluster tests skip.
const redisEnv = "MCPSTACK_TEST_REDIS_URL"

// replicaProc is one `mcpstack serve --redis-url` process.
type replicaProc struct {
	cmd    *exec.Cmd
	url    *url.URL
	stderr *lockedBuffer
}

// startReplica starts a replica of the conformance profile on Redis; the
// URL comes from the environment (MCPSTACK_REDIS_URL), as an operator
// would give a password.
func startReplica(t *testing.T, redisURL string, extra ...string) *replicaProc {
	t.Helper()
	addrFile := filepath.Join(t.TempDir(), "addr")
	r := &replicaProc{stderr: &lockedBuffer{}}
	r.cmd = exec.Command(mcpstackBin, append([]string{"serve", "--profile", "conformance", "--strict", "--http", "127.0.0.1:0",
		"--addr-file", addrFile, "--shutdown-delay", "0", "--rate-limit", "0", "--rate-limit-bytes", "0"}, extra...)...)
	r.cmd.Env = append(os.Environ(), "MCPSTACK_REDIS_URL="+redisURL)
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			t.Errorf("a replica did not stop on SIGTERM:\n%s", r.stderr)
		}
	})
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			r.url, _ = url.Parse("http://" + strings.TrimSpace(string(b)))
			return r
		}
		if r.cmd.ProcessState != nil {
			break
		}
	}
	t.Fatalf("a replica did not start:\n%s", r.stderr)
	return nil
}

// roundRobin is a load balancer that sends each request to the next
// replica, and to the one after it when a replica refuses the connection
// (it died), as HAProxy's redispatch does. It reports how many requests
// it passed on; replace puts a new replica in a slot (a restart), or
// with nil takes the slot out of rotation.
func roundRobin(t *testing.T, replicas []*replicaProc) (endpoint string, served *atomic.Int64, replace func(i int, r *replicaProc)) {
	var next atomic.Int64
	served = new(atomic.Int64)
	targets := make([]atomic.Pointer[url.URL], len(replicas))
	proxies := make([]*httputil.ReverseProxy, len(replicas))
	for i, r := range replicas {
		targets[i].Store(r.url)
		proxies[i] = &httputil.ReverseProxy{
			Rewrite:       func(pr *httputil.ProxyRequest) { pr.SetURL(targets[i].Load()) },
			FlushInterval: -1,
			ErrorLog:      log.New(io.Discard, "", 0), // a killed replica's streams break: that is the test
			ErrorHandler: func(w http.ResponseWriter, req *http.Request, err error) {
				var op *net.OpError
				if errors.As(err, &op) && op.Op == "dial" {
					req.Context().Value(attemptKey{}).(*attempt).refused = true // nothing written: the next replica answers
					return
				}
				w.WriteHeader(http.StatusBadGateway)
			},
		}
	}
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
			return
		}
		for range replicas {
			a := &attempt{}
			r2 := r.Clone(context.WithValue(r.Context(), attemptKey{}, a))
			r2.Body = io.NopCloser(bytes.NewReader(body))
			i := int(next.Add(1)-1) % len(replicas)
			if targets[i].Load() == nil { // out of rotation
				continue
			}
			proxies[i].ServeHTTP(w, r2)
			if !a.refused {
				served.Add(1)
				return
			}
		}
		http.Error(w, "no replica answers", http.StatusBadGateway)
	}))
	t.Cleanup(func() {
		lb.CloseClientConnections()
		lb.Close()
	})
	return lb.URL + "/mcp", served, func(i int, r *replicaProc) {
		if r == nil {
			targets[i].Store(nil)
			return
		}
		targets[i].Store(r.url)
	}
}

// attempt is one try of the balancer at one replica.
type attempt struct{ refused bool }

type attemptKey struct{}

// The official go-sdk client, behind a round-robin balancer over three
// replicas on Redis: every request reaches another replica than the one
// before, and all succeed; a replica killed with SIGKILL loses nothing
// the others cannot serve.
func TestClusterOnRedis(t *testing.T) {
	redisURL := os.Getenv(redisEnv)
	if redisURL == "" {
		t.Skipf("%s is unset: no Redis for the replicas (redis://127.0.0.1:6379/0 where one runs)", redisEnv)
	}
	replicas := []*replicaProc{startReplica(t, redisURL), startReplica(t, redisURL), startReplica(t, redisURL)}
	endpoint, served, _ := roundRobin(t, replicas)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	rec := newRecorder()
	cs, err := newClient(rec).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	calls := func(round string) {
		t.Helper()
		for i := range 3 {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
			if err != nil || res.IsError || len(res.Content) == 0 {
				t.Fatalf("%s: tools/call %d: %v %+v", round, i, err, res)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatalf("%s: tools/list %d: %v", round, i, err)
			}
			if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"}); err != nil {
				t.Fatalf("%s: resources/read %d: %v", round, i, err)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "test_simple_prompt"}); err != nil {
				t.Fatalf("%s: prompts/get %d: %v", round, i, err)
			}
		}
	}
	calls("three replicas")
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}

	// SIGKILL: no drain, no goodbye. The others serve the session from
	// its state in Redis.
	if err := replicas[0].cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = replicas[0].cmd.Wait()
	calls("after a SIGKILL")
	if n := served.Load(); n < 24 {
		t.Errorf("the balancer passed %d requests on", n)
	}
	for i, r := range replicas[1:] {
		if s := r.stderr.String(); strings.Contains(s, "level=ERROR") {
			t.Errorf("replica %d logged an error:\n%s", i+1, s)
		}
	}
}

// A replica dies (SIGKILL) in the middle of a streamed call; the client
// resumes the stream at another replica: it gets what it missed, nothing
// twice, and, once the dead replica's lease on the stream has run out, an
// explicit error for its request as the stream's last event, never a
// stream that resumes forever.
func TestClusterKilledMidStream(t *testing.T) {
	redisURL := os.Getenv(redisEnv)
	if redisURL == "" {
		t.Skipf("%s is unset: no Redis for the replicas (redis://127.0.0.1:6379/0 where one runs)", redisEnv)
	}
	a, b := startReplica(t, redisURL, "--response-mode", "sse"), startReplica(t, redisURL, "--response-mode", "sse")
	post := func(r *replicaProc, session, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, r.url.String()+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	init := post(a, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := init.Header.Get("Mcp-Session-Id")
	init.Body.Close()
	post(a, session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()

	call := post(a, session, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":60,"label":"lost"}}}`)
	defer call.Body.Close()
	lastID := readPriming(t, call.Body)
	if err := a.cmd.Process.Kill(); err != nil { // SIGKILL: no drain, no goodbye
		t.Fatal(err)
	}
	_ = a.cmd.Wait()

	// The client resumes at b until the stream ends with an answer.
	deadline := time.Now().Add(30 * time.Second)
	var answer string
	for answer == "" && time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, b.url.String()+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("resume at b: %s %s", resp.Status, body)
		}
		events := readEvents(t, resp.Body)
		resp.Body.Close()
		for _, e := range events {
			lastID = e.id
			if answer != "" {
				t.Errorf("an event after the answer: %s", e.data)
			}
			answer = e.data
		}
		if answer == "" {
			time.Sleep(time.Second) // the client's retry interval
		}
	}
	if !strings.Contains(answer, `"id":7`) || !strings.Contains(answer, `"error"`) || !strings.Contains(answer, "stopped") {
		t.Fatalf("the stream of the killed call ended with %q, want an error for request 7", answer)
	}
	// Resumed once more, from the answer: nothing is sent twice.
	req, _ := http.NewRequest(http.MethodGet, b.url.String()+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", lastID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if again := readEvents(t, resp.Body); len(again) > 0 {
		t.Errorf("resumed after the answer: %d more events (%s)", len(again), again[0].data)
	}
}

type sseEvent struct{ id, data string }

// readPriming reads a stream until its first event id (the priming event).
func readPriming(t *testing.T, body io.Reader) string {
	t.Helper()
	r := bufio.NewReader(body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no priming event: %v", err)
		}
		if id, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "id: "); ok {
			return id
		}
	}
}

// readEvents reads a stream to its end: the events with data.
func readEvents(t *testing.T, body io.Reader) []sseEvent {
	t.Helper()
	r := sse.NewReader(body, 1<<20)
	var out []sseEvent
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sseEvent{id: e.ID, data: string(e.Data)})
	}
}

// Redis goes away for 10 s under load and comes back: while it is away
// the replicas answer with errors at once (no hangs), after it they serve
// fully again by themselves, and their memory has not grown.
func TestClusterRedisOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test takes half a minute")
	}
	if os.Getenv(redisEnv) == "" {
		t.Skipf("%s is unset: the cluster tests need Redis", redisEnv)
	}
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server to start and stop: the outage test needs one of its own")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	startRedis := func() *exec.Cmd {
		cmd := exec.Command(server, "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c, err := net.Dial("tcp", "127.0.0.1:"+port); err == nil {
				c.Close()
				return cmd
			}
		}
		t.Fatal("redis-server did not start")
		return nil
	}
	redis := startRedis()
	t.Cleanup(func() { _ = redis.Process.Kill(); _ = redis.Wait() })
	url := "redis://127.0.0.1:" + port + "/0"
	replicas := []*replicaProc{startReplica(t, url), startReplica(t, url)}
	endpoint, _, _ := roundRobin(t, replicas)

	// One session after another, each through both replicas.
	type outcome struct {
		ok   bool
		took time.Duration
	}
	attempt := func() outcome {
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		cs, err := newClient(newRecorder()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err == nil {
			var res *mcp.CallToolResult
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
			if err == nil && res.IsError {
				err = errors.New("tool error")
			}
			cs.Close()
		}
		return outcome{ok: err == nil, took: time.Since(start)}
	}
	phase := func(d time.Duration) (ok, failed int, slowest time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			o := attempt()
			if o.ok {
				ok++
			} else {
				failed++
			}
			slowest = max(slowest, o.took)
		}
		return
	}
	rss := func() (sum int64) {
		for _, r := range replicas {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", r.cmd.Process.Pid))
			for line := range strings.Lines(string(b)) {
				if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
					sum += kb
				}
			}
		}
		return sum
	}
	if ok, failed, _ := phase(2 * time.Second); failed > 0 || ok == 0 {
		t.Fatalf("before the outage: %d sessions ok, %d failed", ok, failed)
	}
	before := rss()

	_ = redis.Process.Kill()
	_ = redis.Wait()
	ok, failed, slowest := phase(10 * time.Second)
	t.Logf("Redis away for 10s: %d sessions ok, %d failed; the slowest answer took %v", ok, failed, slowest)
	if failed == 0 {
		t.Error("no session failed while Redis was away: the test did not test an outage")
	}
	if slowest > 7*time.Second {
		t.Errorf("an answer took %v while Redis was away: a client must hear an error, not wait", slowest)
	}

	redis = startRedis()
	recovered := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !recovered; time.Sleep(200 * time.Millisecond) {
		recovered = attempt().ok
	}
	if !recovered {
		t.Fatal("no session succeeded within 15s of Redis coming back")
	}
	if ok, failed, _ := phase(2 * time.Second); failed > 0 {
		t.Errorf("after the outage: %d sessions ok, %d failed; want full service", ok, failed)
	}
	if after := rss(); after-before > 20<<10 {
		t.Errorf("the replicas' RSS grew from %d to %d KiB through the outage", before, after)
	}
}

// A rolling restart of three replicas under steady load loses no call
// (each replica drains on SIGTERM; the balancer sends around the one
// that is gone), and after a restart of all three at once the client's
// session goes on where it was: its state is in Redis.
func TestClusterRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test restarts six processes")
	}
	redisURL := os.Getenv(redisEnv)
	if redisURL == "" {
		t.Skipf("%s is unset: no Redis for the replicas (redis://127.0.0.1:6379/0 where one runs)", redisEnv)
	}
	replicas := []*replicaProc{startReplica(t, redisURL, "--task-store", "redis"), startReplica(t, redisURL, "--task-store", "redis"), startReplica(t, redisURL, "--task-store", "redis")}
	endpoint, _, replace := roundRobin(t, replicas)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := newClient(newRecorder()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	call := func(cs *mcp.ClientSession) error {
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
		if err == nil && res.IsError {
			err = errors.New("the tool reported an error")
		}
		return err
	}
	stop := func(r *replicaProc) {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = r.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Fatalf("a replica did not stop on SIGTERM:\n%s", r.stderr)
		}
	}

	// Steady load: the long session calls, and a new session comes and
	// goes every fifth call.
	var calls, failures atomic.Int64
	var firstFailure atomic.Value
	loadDone := make(chan struct{})
	stopLoad := make(chan struct{})
	go func() {
		defer close(loadDone)
		for i := 0; ; i++ {
			select {
			case <-stopLoad:
				return
			default:
			}
			err := call(cs)
			if i%5 == 0 && err == nil {
				var fresh *mcp.ClientSession
				if fresh, err = newClient(newRecorder()).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1},
					&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}); err == nil {
					err = call(fresh)
					fresh.Close()
				}
			}
			calls.Add(1)
			if err != nil {
				failures.Add(1)
				firstFailure.CompareAndSwap(nil, err.Error())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	for i := range replicas {
		// As Kubernetes does: out of the Service first (preStop), then
		// SIGTERM, which drains the calls in flight.
		replace(i, nil)
		time.Sleep(200 * time.Millisecond)
		stop(replicas[i])
		replicas[i] = startReplica(t, redisURL, "--task-store", "redis")
		replace(i, replicas[i])
		time.Sleep(time.Second)
	}
	close(stopLoad)
	<-loadDone
	t.Logf("rolling restart: %d calls, %d failed", calls.Load(), failures.Load())
	if failures.Load() > 0 {
		t.Errorf("%d of %d calls failed during the rolling restart; the first: %v", failures.Load(), calls.Load(), firstFailure.Load())
	}

	// Before restarting all three at once: a streamed call, and a task.
	raw := func(method, last, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if last != "" {
			req.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := raw(http.MethodPost, "", `{"jsonrpc":"2.0","id":"progressed","method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p"}}}`)
	streamed := readEvents(t, resp.Body)
	resp.Body.Close()
	resp = raw(http.MethodPost, "", `{"jsonrpc":"2.0","id":"tasked","method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.1,"label":"kept"},"task":{"ttl":600000}}}`)
	created, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var createdMsg struct {
		Result struct {
			Task struct {
				TaskID string `json:"taskId"`
			} `json:"task"`
		} `json:"result"`
	}
	_ = json.Unmarshal(created, &createdMsg)
	taskID := createdMsg.Result.Task.TaskID
	if len(streamed) < 2 || taskID == "" {
		t.Fatalf("before the restart: %d events streamed, task %q (%s)", len(streamed), taskID, created)
	}
	time.Sleep(300 * time.Millisecond) // the task ends, its events reach Redis

	// All three at once: the session, its streams and its task outlive
	// every process.
	for _, r := range replicas {
		stop(r)
	}
	for i := range replicas {
		replicas[i] = startReplica(t, redisURL, "--task-store", "redis")
		replace(i, replicas[i])
	}
	if err := call(cs); err != nil {
		t.Fatalf("the session after a restart of every replica: %v", err)
	}
	resp = raw(http.MethodGet, streamed[0].id, "")
	replayed := readEvents(t, resp.Body)
	resp.Body.Close()
	if len(replayed) != len(streamed)-1 || replayed[len(replayed)-1].data != streamed[len(streamed)-1].data {
		t.Errorf("the stream after the restart: %d events replayed, want the %d after the first", len(replayed), len(streamed)-1)
	}
	resp = raw(http.MethodPost, "", `{"jsonrpc":"2.0","id":"get","method":"tasks/result","params":{"taskId":"`+taskID+`"}}`)
	result, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(result), "Computed kept") {
		t.Errorf("the task after the restart: %s", result)
	}
}

// The official TypeScript SDK client behind the round-robin balancer:
// every request at another replica than the last, sampling and
// elicitation answered through whichever replica the balancer picks.
func TestClusterWithTypeScriptSDK(t *testing.T) {
	redisURL := os.Getenv(redisEnv)
	if redisURL == "" {
		t.Skipf("%s is unset: no Redis for the replicas (redis://127.0.0.1:6379/0 where one runs)", redisEnv)
	}
	node, dir := tsNode(t)
	replicas := []*replicaProc{startReplica(t, redisURL), startReplica(t, redisURL), startReplica(t, redisURL)}
	endpoint, _, _ := roundRobin(t, replicas)
	out := runTSScript(t, node, dir, "ts-cluster.mjs", endpoint)
	calls, _ := out["calls"].([]any)
	if len(calls) != 12 || out["sampled"] != 3.0 || out["elicited"] != 3.0 {
		t.Fatalf("calls %d, sampled %v, elicited %v: %v", len(calls), out["sampled"], out["elicited"], out)
	}
	for i, c := range calls {
		s, _ := c.(string)
		if s == "" || i%4 == 1 && !strings.Contains(s, "Four.") || i%4 == 2 && !strings.Contains(s, "action=decline") {
			t.Errorf("call %d: %q", i, s)
		}
	}
}

// The chat app on two replicas, sessions in Redis and conversations in
// PostgreSQL: after a restart of both, the client's session goes on at
// either replica and its conversation is there.
func TestClusterChatFullRestart(t *testing.T) {
	redisURL, dsn := os.Getenv(redisEnv), os.Getenv("MCPSTACK_TEST_POSTGRES_DSN")
	if redisURL == "" || dsn == "" {
		t.Skipf("%s or MCPSTACK_TEST_POSTGRES_DSN is unset: the chat cluster needs Redis and PostgreSQL", redisEnv)
	}
	t.Setenv("MCPSTACK_REDIS_URL", redisURL)
	t.Setenv("MCPSTACK_POSTGRES_DSN", dsn)
	schemaName := fmt.Sprintf("mcpstack_cluster_test_%d", os.Getpid())
	schema := "--postgres-schema=" + schemaName
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+schemaName+" CASCADE")
			conn.Close(ctx)
		}
	})
	data := t.TempDir()
	a, b := startChat(t, data, schema, "--task-store", "redis"), startChat(t, data, schema, "--task-store", "redis")
	_, hdr, _ := a.post(t, a.token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1.0"}}}`)
	sid := hdr.Get("Mcp-Session-Id")
	b.post(t, b.token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, _, chat := b.post(t, b.token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":{"query":"Remember me"}}}`)
	convID, _ := chat["result"].(map[string]any)["_meta"].(map[string]any)["conversation_id"].(string)
	if !strings.HasPrefix(convID, "conv_") {
		t.Fatalf("no conversation: %v", chat)
	}

	a.stop(t)
	b.stop(t)
	a2, b2 := startChat(t, data, schema, "--task-store", "redis"), startChat(t, data, schema, "--task-store", "redis")
	for _, srv := range []*chatServer{a2, b2} {
		code, _, got := srv.post(t, srv.token, sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"conversation_get","arguments":{"conversation_id":"`+convID+`"}}}`)
		if code != http.StatusOK || !strings.Contains(resultText(t, got), "Remember me") {
			t.Errorf("after a restart of both replicas, the session at %s: %d %v", srv.url, code, got)
		}
	}
}
