package streamable_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
)

type sseEvent struct{ id, data string }

// readEvents reads SSE events until n message events (non-empty data) have
// arrived or the stream ends.
func readEvents(t *testing.T, sc *bufio.Scanner, n int) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
				if len(out) == n {
					return out
				}
			}
			cur = sseEvent{}
		}
	}
	return out
}

// callCutAfterOneEvent calls test_tool_with_progress (id 7) in session
// sid and cuts its stream after its first event, which it returns.
func callCutAfterOneEvent(t *testing.T, url, sid string) []sseEvent {
	t.Helper()
	ctx, cut := context.WithCancel(context.Background())
	defer cut()
	hr, _ := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":"p"}}}`))
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json, text/event-stream")
	hr.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return readEvents(t, bufio.NewScanner(resp.Body), 1)
}

// slowCallCut serves the fixtures with 150 ms between a tool's steps,
// opens a session at url and cuts its call's stream after one event.
func slowCallCut(t *testing.T) (h *streamable.Handler, url, sid string, first []sseEvent) {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(150*time.Millisecond)), server.WithStrict(true))
	h = streamable.New(srv)
	ts := httptest.NewServer(h)
	t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
	sid = (&env{t: t, url: ts.URL, srv: srv}).initialize()
	return h, ts.URL, sid, callCutAfterOneEvent(t, ts.URL, sid)
}

// resumeWithGET resumes session sid's stream after last ("": opens the
// session's GET stream): a 200 response.
func resumeWithGET(t *testing.T, url, sid, last string) *http.Response {
	t.Helper()
	get, _ := http.NewRequest("GET", url, nil)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	if last != "" {
		get.Header.Set("Last-Event-ID", last)
	}
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		resp.Body.Close()
		t.Fatalf("resume: %d", resp.StatusCode)
	}
	return resp
}

// TestResumeAfterCut cuts the stream of a call after its first progress
// notification and resumes it with Last-Event-ID: every event arrives
// exactly once, the response included.
func TestResumeAfterCut(t *testing.T) {
	_, url, sid, first := slowCallCut(t)
	if len(first) != 1 || !strings.Contains(first[0].data, `"progress":0`) {
		t.Fatalf("first event %v", first)
	}

	resp2 := resumeWithGET(t, url, sid, first[0].id)
	defer resp2.Body.Close()
	rest := readEvents(t, bufio.NewScanner(resp2.Body), 10)
	all := append(first, rest...)
	var kinds []string
	seen := map[string]bool{}
	for _, ev := range all {
		if seen[ev.id] {
			t.Errorf("event %s repeated", ev.id)
		}
		seen[ev.id] = true
		switch {
		case strings.Contains(ev.data, `"progress":0,`):
			kinds = append(kinds, "p0")
		case strings.Contains(ev.data, `"progress":50`):
			kinds = append(kinds, "p50")
		case strings.Contains(ev.data, `"progress":100`):
			kinds = append(kinds, "p100")
		case strings.Contains(ev.data, `"id":7,"result"`):
			kinds = append(kinds, "result")
		default:
			kinds = append(kinds, ev.data)
		}
	}
	if got := strings.Join(kinds, " "); got != "p0 p50 p100 result" {
		t.Errorf("events after resumption: %s", got)
	}
}

// TestResumeErrors: an unknown Last-Event-ID is 400 (the session is
// there: 404 would tell the client it is gone), one whose successors were
// dropped from the bounded store is 410.
func TestResumeErrors(t *testing.T) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
	h := streamable.New(srv, streamable.WithEventStore(streamable.NewMemoryEventStore(3, time.Minute)))
	ts := httptest.NewServer(h)
	defer func() { h.Shutdown(); ts.Close(); srv.Close() }()
	e := &env{t: t, url: ts.URL, srv: srv}
	sid := e.initialize()
	// one call: priming, 3 progress events and the response; the store keeps 3
	resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_tool_with_progress","_meta":{"progressToken":1}}}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	if resp.StatusCode != 200 {
		t.Fatal(body)
	}
	firstID := strings.TrimPrefix(strings.SplitN(body, "\n", 2)[0], "id: ")
	for _, tt := range []struct {
		last   string
		status int
	}{{firstID, 410}, {"nope-3", 400}, {"garbage", 400}} {
		r, b := e.do(req{method: "GET", headers: map[string]string{"Accept": "text/event-stream", "Mcp-Session-Id": sid, "Last-Event-ID": tt.last}})
		if r.StatusCode != tt.status {
			t.Errorf("Last-Event-ID %q: %d %q, want %d", tt.last, r.StatusCode, b, tt.status)
		}
	}
}

// TestResumeGetStream: messages sent while the client's GET stream is down
// wait in the store and arrive on a GET with Last-Event-ID.
func TestResumeGetStream(t *testing.T) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
	h := streamable.New(srv)
	ts := httptest.NewServer(h)
	defer func() { h.Shutdown(); ts.Close(); srv.Close() }()
	e := &env{t: t, url: ts.URL, srv: srv}
	sid := e.initialize()
	e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	open := func(last string) (*http.Response, *bufio.Scanner, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		hr, _ := http.NewRequestWithContext(ctx, "GET", ts.URL, nil)
		hr.Header.Set("Accept", "text/event-stream")
		hr.Header.Set("Mcp-Session-Id", sid)
		if last != "" {
			hr.Header.Set("Last-Event-ID", last)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		return resp, bufio.NewScanner(resp.Body), cancel
	}
	resp, sc, cancel := open("")
	var primeID string
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "id: ") {
			primeID = strings.TrimPrefix(sc.Text(), "id: ")
			break
		}
	}
	cancel()
	resp.Body.Close()
	sess, _ := core.Of(srv).Session(sid)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := sess.Notify(context.Background(), "notifications/tools/list_changed", nil); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	resp2, sc2, cancel2 := open(primeID)
	defer func() { cancel2(); resp2.Body.Close() }()
	evs := readEvents(t, sc2, 1)
	if len(evs) != 1 || !strings.Contains(evs[0].data, "notifications/tools/list_changed") {
		t.Fatalf("replayed %v", evs)
	}
}

// TestCloseStreamEarly: a method that ends its response early (SEP-1699
// polling) has the response end while it runs on, with only the priming
// event; the client resumes with that event's id and gets the answer.
func TestCloseStreamEarly(t *testing.T) {
	for _, mode := range []streamable.ResponseMode{streamable.Auto, streamable.SSE} {
		t.Run(string(mode), func(t *testing.T) {
			const step = 150 * time.Millisecond // the tool sleeps a step, closes the stream, sleeps a step
			srv := server.New(conformance.New(conformance.WithStepDelay(step)))
			h := streamable.New(srv, streamable.WithResponseMode(mode))
			ts := httptest.NewServer(h)
			defer func() { h.Shutdown(); ts.Close(); srv.Close() }()
			e := &env{t: t, url: ts.URL, srv: srv}
			sid := e.initialize()
			e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})

			start := time.Now()
			resp, body := e.do(req{body: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`, headers: map[string]string{"Mcp-Session-Id": sid}})
			if took := time.Since(start); took >= 2*step {
				t.Errorf("the response lasted %v: it did not end before the call (%v)", took.Round(time.Millisecond), 2*step)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" || strings.Contains(body, conformance.ReconnectionDoneText) {
				t.Fatalf("%s response held the answer, or no stream: %q", ct, body)
			}
			id := ""
			for _, line := range strings.Split(body, "\n") {
				if v, ok := strings.CutPrefix(line, "id: "); ok {
					id = v
				}
			}
			if id == "" {
				t.Fatalf("no priming event id in %q", body)
			}
			get, _ := http.NewRequest("GET", ts.URL, nil)
			get.Header.Set("Accept", "text/event-stream")
			get.Header.Set("Mcp-Session-Id", sid)
			get.Header.Set("Last-Event-ID", id)
			resp2, err := http.DefaultClient.Do(get)
			if err != nil {
				t.Fatal(err)
			}
			defer resp2.Body.Close()
			events := readEvents(t, bufio.NewScanner(resp2.Body), 1)
			if len(events) != 1 || !strings.Contains(events[0].data, `"id":9,"result"`) || !strings.Contains(events[0].data, conformance.ReconnectionDoneText) {
				t.Errorf("resumed: %v, want the answer", events)
			}
		})
	}
}

// A call's stream resumed on a GET is the call's: a graceful shutdown lets
// it carry the call's answer, as it lets the POST that started it do,
// rather than ending it (a GET refused while closing could not fetch the
// answer again).
func TestShutdownLetsAResumedCallFinish(t *testing.T) {
	h, url, sid, first := slowCallCut(t)
	if len(first) != 1 {
		t.Fatalf("first event %v", first)
	}
	resp2 := resumeWithGET(t, url, sid, first[0].id)
	defer resp2.Body.Close()
	h.Shutdown() // the call still runs
	rest := readEvents(t, bufio.NewScanner(resp2.Body), 10)
	if len(rest) == 0 || !strings.Contains(rest[len(rest)-1].data, `"id":7,"result"`) {
		t.Errorf("the resumed stream after the shutdown: %v, want it to end with the call's answer", rest)
	}
}

// A GET stream carried by a process that went away (a replica) is taken
// up where its client resumes it: the events are replayed, and the
// response goes on as the session's GET stream there, primed with an id
// of its own, so that what the session gets outside its calls reaches the
// client again. It used to end after the replay, and the client resumed
// it again and again, getting nothing.
func TestGetStreamMovesToAnotherProcess(t *testing.T) {
	sessions := sharedSessions{core.MemorySessions()}
	events := streamable.NewMemoryEventStore(streamable.DefaultEventsPerSession, streamable.DefaultEventAge)
	process := func() (*server.Server, *httptest.Server) {
		srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true), server.WithSessionStore(sessions))
		h := streamable.New(srv, streamable.WithEventStore(events))
		ts := httptest.NewServer(h)
		t.Cleanup(func() { h.Shutdown(); ts.Close(); srv.Close() })
		return srv, ts
	}
	_, a := process()
	srvB, b := process()
	e := &env{t: t, url: a.URL}
	sid := e.initialize()
	e.do(req{body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, headers: map[string]string{"Mcp-Session-Id": sid}})
	open := func(url, last string) (*http.Response, *bufio.Scanner) {
		resp := resumeWithGET(t, url, sid, last)
		return resp, bufio.NewScanner(resp.Body)
	}
	firstID := func(sc *bufio.Scanner) string {
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				return id
			}
		}
		return ""
	}
	resp, sc := open(a.URL, "")
	primeID := firstID(sc)
	resp.Body.Close() // A goes away, as far as this stream is concerned
	resp2, sc2 := open(b.URL, primeID)
	defer resp2.Body.Close()
	if id := firstID(sc2); id == "" || id == primeID {
		t.Fatalf("resumed at the other process: primed %q, want a new id", id)
	}
	go func() {
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if sess, ok := core.Of(srvB).Session(sid); ok && sess.Notify(context.Background(), "notifications/tools/list_changed", nil) == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if evs := readEvents(t, sc2, 1); len(evs) != 1 || !strings.Contains(evs[0].data, "notifications/tools/list_changed") {
		t.Fatalf("after the replay: %v, want the session's notification", evs)
	}
}

// sharedSessions is core.MemorySessions, the store several servers in
// one process can share, as the server.SessionStore two servers of a test
// share, as replicas share Redis.
type sharedSessions struct{ core.SessionStore }

func (s sharedSessions) Create(ctx context.Context, st server.SessionState) error {
	return s.SessionStore.Create(ctx, core.SessionState(st))
}

func (s sharedSessions) Load(ctx context.Context, id string) (server.SessionState, error) {
	st, err := s.SessionStore.Load(ctx, id)
	return server.SessionState(st), err
}

func (s sharedSessions) Update(ctx context.Context, st server.SessionState) error {
	return s.SessionStore.Update(ctx, core.SessionState(st))
}
