package redisstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/sse"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/redisstore"
	"github.com/mcpstack/mcpstack/server/taskstore"
)

// replica is one server of a service whose state is in Redis.
type replica struct {
	srv *server.Server
	h   http.Handler
}

func newReplica(t *testing.T, rdb redis.UniversalClient, opts ...redisstore.Option) *replica {
	return newSlowReplica(t, rdb, 0, opts...)
}

// newSlowReplica's tools take step between their steps.
func newSlowReplica(t *testing.T, rdb redis.UniversalClient, step time.Duration, opts ...redisstore.Option) *replica {
	return newReplicaWith(t, rdb, step, server.Limits{}, opts...)
}

func newReplicaWith(t *testing.T, rdb redis.UniversalClient, step time.Duration, limits server.Limits, opts ...redisstore.Option) *replica {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(step)), server.WithStrict(true), server.WithLimits(limits),
		server.WithStateKey([]byte("the replicas' shared requestState secret")),
		server.WithSessionStore(redisstore.NewSessions(rdb, opts...)))
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0),
		mcphttp.WithResponseMode(mcphttp.ResponseSSE), mcphttp.WithEventStore(redisstore.NewEvents(rdb, opts...)))
	t.Cleanup(func() {
		shutdown(context.Background())
		srv.Close()
	})
	return &replica{srv: srv, h: h}
}

// roundRobin sends each request to the next replica: no two requests in
// a row reach the same one.
func roundRobin(t *testing.T, replicas ...*replica) *httptest.Server {
	var next atomic.Int64
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		replicas[int(next.Add(1)-1)%len(replicas)].h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		lb.CloseClientConnections()
		lb.Close()
	})
	return lb
}

// Behind a round-robin balancer every request of a session reaches
// another replica than the one before, and each finds the session.
func TestReplicasServeEachOthersSessions(t *testing.T) {
	rdb, prefix := testRedis(t)
	a, b := newReplica(t, rdb, prefix), newReplica(t, rdb, prefix)
	lb := roundRobin(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess := connectThrough(t, ctx, lb.URL)
	for i := range 6 {
		if _, err := sess.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list %d: %v", i, err)
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolRequestParams{Name: "test_simple_text"})
		if err != nil || len(res.Content) == 0 {
			t.Fatalf("tools/call %d: %v %v", i, res, err)
		}
	}
	if a.srv.SessionCount() != 1 || b.srv.SessionCount() != 1 {
		t.Errorf("sessions live: a %d, b %d; want the one session on both", a.srv.SessionCount(), b.srv.SessionCount())
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if keys := rdb.Keys(ctx, "mcpstack-test:*session:*").Val(); len(keys) != 0 {
		t.Errorf("the client ended its session; Redis keeps %v", keys)
	}
}

// A client whose stream broke resumes it at another replica, which
// replays from Redis what the first one sent: the same events, same ids.
func TestStreamResumesAtAnotherReplica(t *testing.T) {
	_, _, srvA, srvB := twoReplicas(t)

	id := initialize(t, srvA.URL)
	initialized(t, srvB.URL, id)
	post(t, srvA.URL, id, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`).Body.Close()

	// The whole stream, as replica a sent it.
	resp := post(t, srvA.URL, id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}`)
	sent := events(t, resp.Body)
	resp.Body.Close()
	if len(sent) < 2 {
		t.Fatalf("replica a sent %d events; want log messages, then the answer", len(sent))
	}

	t.Logf("replica a sent %d events", len(sent))
	// The client saw only the first; it resumes at replica b, again from
	// the last event it got while the stream has not ended (a writes its
	// events to Redis behind them: they may be a round trip late).
	var replayed []sse.Event
	last := sent[0].ID
	for deadline := time.Now().Add(5 * time.Second); len(replayed) < len(sent)-1 && time.Now().Before(deadline); {
		more := resume(t, srvB.URL, id, last)
		replayed = append(replayed, more...)
		if len(more) > 0 {
			last = more[len(more)-1].ID
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if len(replayed) != len(sent)-1 {
		t.Fatalf("b replayed %d events, want the %d after the first", len(replayed), len(sent)-1)
	}
	for i, e := range replayed {
		if want := sent[i+1]; e.ID != want.ID || !bytes.Equal(e.Data, want.Data) {
			t.Errorf("event %d: %s %s, want %s %s", i, e.ID, e.Data, want.ID, want.Data)
		}
	}
	if !strings.Contains(string(replayed[len(replayed)-1].Data), `"id":3`) {
		t.Errorf("the last event replayed is not the answer: %s", replayed[len(replayed)-1].Data)
	}
}

func post(t *testing.T, url, session, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
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
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST %s: %s %s", body, resp.Status, b)
	}
	return resp
}

// resume GETs the session's stream at url after event last and reads
// what it carries to its end.
func resume(t *testing.T, url, session, last string) []sse.Event {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Last-Event-ID", last)
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Body.Close()
	if got.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(got.Body)
		t.Fatalf("resume at %s: %s %s", url, got.Status, body)
	}
	return events(t, got.Body)
}

// events reads every event of a stream (with its id) to its end.
func events(t *testing.T, body io.Reader) []sse.Event {
	t.Helper()
	r := sse.NewReader(body, 1<<20)
	var out []sse.Event
	for {
		e, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, sse.Event{ID: e.ID, Data: bytes.Clone(e.Data)})
	}
}

// Without Redis a request for a session this replica does not hold is
// answered 503 with Retry-After: the session may exist, so the client
// must not start over.
func TestUnreachableRedisIsUnavailable(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer rdb.Close()
	r := newReplica(t, rdb)
	ts := httptest.NewServer(r.h)
	defer ts.Close()
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", "a-session-of-another-replica")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "session store") {
		t.Errorf("got %s (Retry-After %q) %s; want 503 with Retry-After", resp.Status, resp.Header.Get("Retry-After"), body)
	}
}

// Sampling across replicas: the call runs at one replica, which asks the
// client on the call's stream; the client's answer, POSTed through the
// balancer, reaches the other replica, which relays it to the first.
func TestSamplingAnsweredThroughAnotherReplica(t *testing.T) {
	rdb, prefix := testRedis(t)
	a, b := newReplica(t, rdb, prefix), newReplica(t, rdb, prefix)
	lb := roundRobin(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var asked atomic.Int64
	c := client.New("lb-test", "1.0.0", client.WithProtocolVersion("2025-11-25"),
		client.WithSampling(func(context.Context, *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			asked.Add(1)
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: "Four."}}}, nil
		}))
	sess, err := c.Connect(ctx, &client.StreamableHTTP{URL: lb.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	for i := range 4 { // the call lands on a and on b in turn; each answer on the other
		res, err := sess.CallTool(ctx, &mcp.CallToolRequestParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "2+2?"}})
		if err != nil || res.IsError != nil && *res.IsError {
			t.Fatalf("call %d: %v %+v", i, err, res)
		}
		if text, _ := res.Content[0].(*mcp.TextContent); text == nil || !strings.Contains(text.Text, "Four.") {
			t.Errorf("call %d: %+v, want the sampled answer", i, res.Content[0])
		}
	}
	if asked.Load() != 4 {
		t.Errorf("the client was asked %d times, want 4", asked.Load())
	}
}

// A cancellation sent to another replica than the one running the call
// reaches it: the call ends at once, not after its steps.
func TestCancelThroughAnotherReplica(t *testing.T) {
	rdb, prefix := testRedis(t)
	const step = 2 * time.Second // the logging tool takes two steps: 4s
	a, b := newSlowReplica(t, rdb, step, prefix), newSlowReplica(t, rdb, step, prefix)
	srvA, srvB := httptest.NewServer(a.h), httptest.NewServer(b.h)
	defer srvA.Close()
	defer srvB.Close()
	id := initialize(t, srvA.URL)
	initialized(t, srvA.URL, id)

	started := time.Now()
	ended := make(chan time.Duration, 1)
	go func() {
		resp := post(t, srvA.URL, id, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}`)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ended <- time.Since(started)
	}()
	time.Sleep(300 * time.Millisecond) // the call runs at a
	post(t, srvB.URL, id, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"changed my mind"}}`).Body.Close()
	select {
	case d := <-ended:
		if d > step {
			t.Errorf("the call ended %v after it started; cancelled at 300ms, it would have taken %v", d, 2*step)
		}
	case <-time.After(3 * step):
		t.Fatal("the cancelled call did not end")
	}
}

// A subscription made through one replica, a resource updated at another,
// and the client's GET stream at a third place (the first replica): the
// notification reaches the stream.
func TestResourceUpdatedReachesTheStreamAnotherReplicaHolds(t *testing.T) {
	_, b, srvA, srvB := twoReplicas(t)
	id := initialize(t, srvA.URL)
	initialized(t, srvB.URL, id)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := listen(t, ctx, srvA.URL, id)
	defer stream.Body.Close()
	const uri = "test://static-text"
	post(t, srvB.URL, id, `{"jsonrpc":"2.0","id":2,"method":"resources/subscribe","params":{"uri":"`+uri+`"}}`).Body.Close()

	got := make(chan string, 1)
	go func() {
		r := sse.NewReader(stream.Body, 1<<20)
		for {
			e, err := r.Next()
			if err != nil {
				return
			}
			if strings.Contains(string(e.Data), "notifications/resources/updated") {
				got <- string(e.Data)
				return
			}
		}
	}()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		b.srv.ResourceUpdated(ctx, uri) // at b, which holds no stream of the session
		select {
		case data := <-got:
			if !strings.Contains(data, uri) {
				t.Errorf("the notification: %s", data)
			}
			return
		case <-tick.C:
		case <-ctx.Done():
			t.Fatal("the update at b never reached the stream at a")
		}
	}
}

// A 2025-11-25 task runs at one replica; another reads and lists it from
// the shared store, and its tasks/cancel cancels it there (the relay
// carries it) and answers once the task's record says so; the task's own
// context ends.
func TestTaskCancelledThroughAnotherReplica(t *testing.T) {
	rdb, prefix := testRedis(t)
	tasks := taskstore.NewRedis(rdb, fmt.Sprintf("mcpstack-test:tasks-%d-%d:", os.Getpid(), time.Now().UnixNano())) // the replicas' shared task store
	stopped := make(chan struct{})
	replica := func() func(method, params string) map[string]any {
		a := app.New("replica", "1")
		app.AddTool(a, app.Tool{Name: "slow", TaskSupport: "optional"}, func(ctx context.Context, _ struct{}) (string, error) {
			<-ctx.Done()
			close(stopped)
			return "", ctx.Err()
		})
		srv := app.NewServer(a, server.WithStrict(true), server.WithTaskStore(tasks), server.WithSessionStore(redisstore.NewSessions(rdb, prefix)))
		t.Cleanup(srv.Close)
		sess, err := core.Of(srv).NewSession("", nil, core.OpenedBy(core.Caller{Owner: "alice", Key: "principal:alice"}))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		call := func(method, params string) map[string]any {
			n++
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var m map[string]any
			_ = json.Unmarshal(sess.Handle(ctx, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, n, method, params)), nil), &m)
			return m
		}
		call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`)
		sess.Handle(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
		return call
	}
	runner, other := replica(), replica()
	started := runner("tools/call", `{"name":"slow","task":{"ttl":60000}}`)
	task, _ := started["result"].(map[string]any)["task"].(map[string]any)
	id, _ := task["taskId"].(string)
	if id == "" {
		t.Fatalf("no task: %v", started)
	}
	// Read and listed at the other replica, from the shared store.
	if res, _ := other("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))["result"].(map[string]any); res == nil || res["status"] != "working" {
		t.Errorf("tasks/get at the other replica: %v", res)
	}
	if res, _ := other("tasks/list", `{}`)["result"].(map[string]any); !strings.Contains(fmt.Sprint(res["tasks"]), id) {
		t.Errorf("tasks/list at the other replica: %v", res)
	}
	got := other("tasks/cancel", fmt.Sprintf(`{"taskId":%q}`, id))
	if res, _ := got["result"].(map[string]any); res == nil || res["status"] != "cancelled" {
		t.Fatalf("tasks/cancel at the other replica: %v", got)
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the task still runs at its replica")
	}
	if res, _ := runner("tasks/get", fmt.Sprintf(`{"taskId":%q}`, id))["result"].(map[string]any); res == nil || res["status"] != "cancelled" {
		t.Errorf("tasks/get at the runner: %v", res)
	}
}

// A task runs at one replica while the client's GET stream is at the
// other: its status notifications reach the stream.
func TestTaskStatusReachesTheStreamAnotherReplicaHolds(t *testing.T) {
	_, _, srvA, srvB := twoReplicas(t)
	id := initialize(t, srvA.URL)
	initialized(t, srvA.URL, id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := listen(t, ctx, srvB.URL, id)
	defer stream.Body.Close()
	time.Sleep(100 * time.Millisecond) // the stream is attached at b
	resp := post(t, srvA.URL, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow_compute","arguments":{"seconds":0.2,"label":"x"},"task":{"ttl":60000}}}`)
	resp.Body.Close()
	r := sse.NewReader(stream.Body, 1<<20)
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("the stream at b ended without the task's completion: %v", err)
		}
		if s := string(e.Data); strings.Contains(s, "notifications/tasks/status") && strings.Contains(s, `"completed"`) {
			return
		}
	}
}

// A client's share of sessions holds for the service: opened through two
// replicas in turn, its third session is refused (429) though each
// replica holds fewer; once it ends one, it may open another.
func TestClientShareAcrossReplicas(t *testing.T) {
	rdb, prefix := testRedis(t)
	limits := server.Limits{Sessions: 100, SessionsPerClient: 2}
	a, b := newReplicaWith(t, rdb, 0, limits, prefix), newReplicaWith(t, rdb, 0, limits, prefix)
	srvA, srvB := httptest.NewServer(a.h), httptest.NewServer(b.h)
	defer srvA.Close()
	defer srvB.Close()
	open := func(url string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp, resp.Header.Get("Mcp-Session-Id")
	}
	first, id := open(srvA.URL)
	second, _ := open(srvB.URL)
	if first.StatusCode != http.StatusOK || second.StatusCode != http.StatusOK {
		t.Fatalf("the first two sessions: %s, %s", first.Status, second.Status)
	}
	if third, _ := open(srvA.URL); third.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a third session through a: %s, want 429 (the client holds 2 across the service)", third.Status)
	}
	req, _ := http.NewRequest(http.MethodDelete, srvB.URL+"/mcp", nil) // ended through the other replica
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	if again, _ := open(srvA.URL); again.StatusCode != http.StatusOK {
		t.Errorf("after ending one: %s, want a new session", again.Status)
	}
}

// A client's request rate holds for the service: requests spread over two
// replicas count together (within the counters' 100 ms sync). The window
// is an hour, so that the sliding window's weighting of the previous one
// does not make the count depend on when the test runs.
func TestRateLimitAcrossReplicas(t *testing.T) {
	rdb, prefix := testRedis(t)
	replica := func() *httptest.Server {
		srv := server.New(conformance.New(conformance.WithStepDelay(0)))
		h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(4, time.Hour), mcphttp.WithByteRateLimit(0, 0),
			mcphttp.WithEventStore(redisstore.NewEvents(rdb, prefix)))
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			ts.Close()
			shutdown(context.Background())
			srv.Close()
		})
		return ts
	}
	a, b := replica(), replica()
	status := func(ts *httptest.Server) int {
		resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for i, ts := range []*httptest.Server{a, a, b, b} {
		if got := status(ts); got == http.StatusTooManyRequests {
			t.Fatalf("request %d refused: the limit is 4", i+1)
		}
		time.Sleep(250 * time.Millisecond) // the counters sync every 100 ms: two syncs, one at each replica
	}
	if got := status(a); got != http.StatusTooManyRequests {
		t.Errorf("a fifth request (2 at a, 2 at b before it): %d, want 429", got)
	}
}

// A 2026-07-28 input-required round trip: the first round at one replica
// issues a requestState, the second, with the client's answer, is served
// by another, which opens it (the replicas share its secret).
func TestInputRequiredAcrossReplicas(t *testing.T) {
	_, _, srvA, srvB := twoReplicas(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`
	call := func(url, extra string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"},` + extra + meta + `}}`
		req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "test_sampling")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if i := bytes.Index(raw, []byte("data: ")); i >= 0 { // an event stream: its last event
			raw = raw[bytes.LastIndex(raw, []byte("data: "))+len("data: "):]
		}
		var m map[string]any
		if err := json.Unmarshal(bytes.TrimSpace(raw), &m); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		return m
	}
	first, _ := call(srvA.URL, "")["result"].(map[string]any)
	state, _ := first["requestState"].(string)
	if first["resultType"] != "input_required" || state == "" {
		t.Fatalf("round 1 at a: %v", first)
	}
	answer := `"requestState":"` + state + `","inputResponses":{"sampling/createMessage#1":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}},`
	second := call(srvB.URL, answer)
	res, _ := second["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" || !strings.Contains(fmt.Sprint(res["content"]), "Four.") {
		t.Errorf("round 2 at b: %v", second)
	}
}

// With JSON answers, what a call sends before its answer goes to the
// session's GET stream: held by another replica, it gets there (the
// progress of a call at b reaches the stream at a).
func TestProgressReachesTheStreamAnotherReplicaHolds(t *testing.T) {
	rdb, prefix := testRedis(t)
	replica := func() *httptest.Server {
		srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithSessionStore(redisstore.NewSessions(rdb, prefix)))
		h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0),
			mcphttp.WithResponseMode(mcphttp.ResponseJSON), mcphttp.WithEventStore(redisstore.NewEvents(rdb, prefix)))
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			ts.Close()
			shutdown(context.Background())
			srv.Close()
		})
		return ts
	}
	srvA, srvB := replica(), replica()
	id := initialize(t, srvA.URL)
	initialized(t, srvA.URL, id)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := listen(t, ctx, srvA.URL, id)
	defer stream.Body.Close()
	time.Sleep(100 * time.Millisecond) // the stream is attached at a
	resp := post(t, srvB.URL, id, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_progress","arguments":{},"_meta":{"progressToken":"p"}}}`)
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(answer), `"id":2`) {
		t.Fatalf("the call at b: %s", answer)
	}
	r := sse.NewReader(stream.Body, 1<<20)
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatalf("the stream at a ended without the call's progress: %v", err)
		}
		if s := string(e.Data); strings.Contains(s, "notifications/progress") && strings.Contains(s, `"progressToken":"p"`) {
			return
		}
	}
}

// initialize opens a 2025-11-25 session at url and returns its id.
func initialize(t *testing.T, url string) string {
	t.Helper()
	resp := post(t, url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	if id == "" {
		t.Fatal("no session id")
	}
	return id
}

// initialized sends notifications/initialized for session id at url.
func initialized(t *testing.T, url, id string) {
	t.Helper()
	post(t, url, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).Body.Close()
}

// listen opens session id's GET stream at url, until ctx ends.
func listen(t *testing.T, ctx context.Context, url, id string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET at %s: %v %v", url, resp, err)
	}
	return resp
}

// twoReplicas starts two replicas on one Redis, each behind a server of
// its own that the test's end closes.
func twoReplicas(t *testing.T) (a, b *replica, srvA, srvB *httptest.Server) {
	t.Helper()
	rdb, prefix := testRedis(t)
	a, b = newReplica(t, rdb, prefix), newReplica(t, rdb, prefix)
	srvA, srvB = httptest.NewServer(a.h), httptest.NewServer(b.h)
	t.Cleanup(srvA.Close)
	t.Cleanup(srvB.Close)
	return a, b, srvA, srvB
}

// A call whose response the client dropped is answered once: its answer,
// stored when the call ends, settles the stream, so that a client
// resuming at another replica gets the answer and no error in its name
// beside it (the error kept for a replica that dies mid-call).
func TestDroppedResponseIsAnsweredOnce(t *testing.T) {
	rdb, prefix := testRedis(t)
	a, b := newSlowReplica(t, rdb, 50*time.Millisecond, prefix), newReplica(t, rdb, prefix)
	srvA, srvB := httptest.NewServer(a.h), httptest.NewServer(b.h)
	t.Cleanup(srvA.Close)
	t.Cleanup(srvB.Close)

	id := initialize(t, srvA.URL)
	initialized(t, srvA.URL, id)
	resp := post(t, srvA.URL, id, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"test_tool_with_logging","arguments":{}}}`)
	first, err := sse.NewReader(resp.Body, 1<<20).Next()
	if err != nil {
		t.Fatal(err)
	}
	primed := first.ID
	resp.Body.Close() // the client goes; the call runs on

	resumeAtB := func() []sse.Event { return resume(t, srvB.URL, id, primed) }
	answers := func(evs []sse.Event) (n int, all string) {
		for _, e := range evs {
			if bytes.Contains(e.Data, []byte(`"id":3`)) {
				n++
				all += string(e.Data) + "\n"
			}
		}
		return n, all
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n, _ := answers(resumeAtB()); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no answer to the dropped call stored in 10s")
		}
	}
	if n, all := answers(resumeAtB()); n != 1 || !strings.Contains(all, `"result"`) {
		t.Errorf("resuming after the call ended gives %d answers to it:\n%swant its result, once", n, all)
	}
}

// A session busy with a request longer than its idle timeout is in use:
// its stored state's expiry moves on while the request runs, so that the
// store does not forget it mid-call and end it everywhere once the call
// is over (nothing saved it while it ran).
func TestBusySessionOutlivesItsIdleTimeout(t *testing.T) {
	rdb, prefix := testRedis(t)
	const idle = 400 * time.Millisecond
	a := app.New("slow", "1")
	app.AddTool(a, app.Tool{Name: "slow", Description: "Answers after three idle timeouts."},
		func(ctx context.Context, _ struct{}) (string, error) {
			select {
			case <-time.After(3 * idle):
				return "done", nil
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		})
	srv := app.NewServer(a, server.WithLimits(server.Limits{SessionIdle: idle}), server.WithSessionStore(redisstore.NewSessions(rdb, prefix)))
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	hs := httptest.NewServer(h)
	t.Cleanup(func() { shutdown(context.Background()); hs.Close(); srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp", NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "slow"}); err != nil {
		t.Fatalf("the long call: %v", err)
	}
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Errorf("the session after its long call: %v", err)
	}
}

// Subscriptions taken at once through two replicas are all kept: each
// replica's write is refused when the other wrote first, and made again
// on the state Redis keeps.
func TestSubscriptionsAtOnceThroughTwoReplicas(t *testing.T) {
	rdb, prefix := testRedisPrefix(t)
	a, b := newReplica(t, rdb, redisstore.WithPrefix(prefix)), newReplica(t, rdb, redisstore.WithPrefix(prefix))
	lb := roundRobin(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess := connectThrough(t, ctx, lb.URL)
	defer sess.Close()
	const n = 24
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if _, err := sess.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: fmt.Sprintf("test://template/%d/data", i)}); err != nil {
				t.Errorf("subscribe %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	keys := rdb.Keys(ctx, prefix+"session:*").Val()
	if len(keys) != 1 {
		t.Fatalf("session keys: %v", keys)
	}
	// A replica whose save gave up to the other's leaves its changes to
	// its next request, a second later: the client pings meanwhile.
	var st server.SessionState
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if err := json.Unmarshal([]byte(rdb.Get(ctx, keys[0]).Val()), &st); err != nil {
			t.Fatal(err)
		}
		if len(st.Subscriptions) == n || time.Now().After(deadline) {
			break
		}
		pctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := sess.Ping(pctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("ping while the replicas save: %v", err)
		}
	}
	if len(st.Subscriptions) != n {
		t.Errorf("%d subscriptions kept of %d taken at once: %q", len(st.Subscriptions), n, st.Subscriptions)
	}
}

// connectThrough opens a 2025-11-25 session at url's /mcp.
func connectThrough(t *testing.T, ctx context.Context, url string) *client.Session {
	t.Helper()
	sess, err := client.New("lb-test", "1.0.0", client.WithProtocolVersion("2025-11-25")).
		Connect(ctx, &client.StreamableHTTP{URL: url + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	return sess
}

// sharedStore is what redisstore.NewSessions is: a session store that
// relays and counts a client's sessions.
type sharedStore interface {
	server.SessionStore
	Publish(ctx context.Context, session string, msg []byte) error
	Subscribe(deliver func(session string, msg []byte)) (stop func())
	ClientSessions(ctx context.Context, client string) (int, error)
}

// failingUpdates is a sharedStore whose updates fail while down.
type failingUpdates struct {
	sharedStore
	down atomic.Bool
}

func (f *failingUpdates) Update(ctx context.Context, st server.SessionState) error {
	if f.down.Load() {
		return errors.New("store down")
	}
	return f.sharedStore.Update(ctx, st)
}

// A replica that restored a session before the replica that negotiated
// it could save the revision (the store failed then) takes the revision
// up once it is saved and announced, instead of refusing the session's
// requests as not initialized until its copy idles out.
func TestCopyRestoredBeforeTheRevisionTakesItUp(t *testing.T) {
	rdb, prefix := testRedis(t)
	store := &failingUpdates{sharedStore: redisstore.NewSessions(rdb, prefix).(sharedStore)}
	srvA := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithSessionStore(store))
	hA, shutdownA := mcphttp.Handler(srvA, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	t.Cleanup(func() { shutdownA(context.Background()); srvA.Close() })
	a := httptest.NewServer(hA)
	t.Cleanup(a.Close)
	b := httptest.NewServer(newReplica(t, rdb, prefix).h)
	t.Cleanup(b.Close)

	store.down.Store(true) // the revision's save fails; the session's creation does not
	id := initialize(t, a.URL)
	initialized(t, a.URL, id)
	store.down.Store(false)
	listed := func() bool { // tools/list at b
		req, _ := http.NewRequest(http.MethodPost, b.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"tools"`))
	}
	if listed() {
		t.Fatal("b served a session whose revision no store held")
	}
	time.Sleep(1100 * time.Millisecond) // a's failed save is tried again a second later, at a request
	post(t, a.URL, id, `{"jsonrpc":"2.0","id":3,"method":"ping"}`).Body.Close()
	for deadline := time.Now().Add(5 * time.Second); !listed(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("b still refuses the session once a saved its revision")
		}
	}
}
