package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
)

// streamServer is a Streamable HTTP server scripted by ping: it answers
// initialize (with a session when sessions), a GET with a stream that
// carries what is put on get, and counts the streams it holds open.
type streamServer struct {
	get  chan string
	open atomic.Int32
}

func newStreamServer(t *testing.T, sessions bool, ping func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte)) (*streamServer, string) {
	s := &streamServer{get: make(chan string, 16)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			return
		case http.MethodGet:
			s.open.Add(1)
			defer s.open.Add(-1)
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			for {
				select {
				case m := <-s.get:
					fmt.Fprintf(w, "data: %s\n\n", m)
					w.(http.Flusher).Flush()
				case <-r.Context().Done():
					return
				}
			}
		}
		body, id, method := posted(r)
		switch {
		case method == "initialize":
			if sessions {
				w.Header().Set("Mcp-Session-Id", "s1")
			}
			answerInitialize(w, id, `{}`, "s")
		case method == "ping":
			ping(s, w, r, id, body)
		case method == "" && len(id) > 0: // the client's answer: 200 and an empty JSON body
			w.Header().Set("Content-Type", "application/json")
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(hs.Close)
	return s, hs.URL
}

// answerInitialize writes a 2025-11-25 initialize result with the
// capabilities (JSON) and server name given.
func answerInitialize(w http.ResponseWriter, id json.RawMessage, capabilities, name string) {
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":%s,"serverInfo":{"name":%q,"version":"1"}}}`, id, capabilities, name)
}

// posted reads the JSON-RPC message of a POST: its body, id and method.
func posted(r *http.Request) (body []byte, id json.RawMessage, method string) {
	body, _ = io.ReadAll(r.Body)
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.Unmarshal(body, &m)
	return body, m.ID, m.Method
}

// The streams a call opens end with it: a server that keeps them open
// cannot make the client hold a connection and a goroutine for every
// call, whether the answer came on another stream or never came.
func TestCallStreamsEndWithTheCall(t *testing.T) {
	tests := []struct {
		name     string
		sessions bool
		timeout  time.Duration // of each call; 0: none
		ping     func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte)
	}{
		{"answered on the GET stream, the POST stream held open", true, 0,
			func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, _ []byte) {
				s.open.Add(1)
				defer s.open.Add(-1)
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				s.get <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
				<-r.Context().Done()
			}},
		{"given up while its resumption is held open", false, 400 * time.Millisecond,
			func(_ *streamServer, w http.ResponseWriter, _ *http.Request, _ json.RawMessage, _ []byte) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				fmt.Fprint(w, "id: 1\nretry: 100\n\n") // ends: the client resumes on a GET that never answers
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, url := newStreamServer(t, tt.sessions, tt.ping)
			s, err := client.New("t", "1").Connect(context.Background(), &client.StreamableHTTP{URL: url, NoListen: !tt.sessions})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			time.Sleep(100 * time.Millisecond) // the session's own GET stream opens
			base := srv.open.Load()
			for range 3 {
				ctx, cancel := context.Background(), context.CancelFunc(func() {})
				if tt.timeout > 0 {
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				}
				_, _ = s.Ping(ctx, nil)
				cancel()
			}
			deadline := time.Now().Add(3 * time.Second)
			for srv.open.Load() > base && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if n := srv.open.Load() - base; n > 0 {
				t.Errorf("%d streams of 3 ended calls still open", n)
			}
		})
	}
}

// The client's answer to a server's request carries the server's id: what
// the server answers to that POST is not the answer to the client's own
// call of the same number.
func TestAnswerOfAnAnswerIsNoAnswer(t *testing.T) {
	_, url := newStreamServer(t, true, func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, _ []byte) {
		s.get <- fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"ping"}`, id) // the server's request, with the call's number
		select {
		case <-time.After(500 * time.Millisecond): // the client answers it meanwhile
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
	})
	s, err := client.New("t", "1").Connect(context.Background(), &client.StreamableHTTP{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(100 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Errorf("a call whose number the server's request shares: %v", err)
	}
}

// A call whose answer the session is not taking (its read loop is held by
// a progress handler, and the queue behind it is full) fails with its
// context, instead of waiting past it for room.
func TestAnswerNobodyTakesEndsWithTheCall(t *testing.T) {
	var pings atomic.Int32
	srv, url := newStreamServer(t, true, func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, body []byte) {
		if pings.Add(1) > 1 { // the second call: answered at once, as JSON
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
			return
		}
		var m struct {
			Params struct {
				Meta map[string]any `json:"_meta"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &m)
		token, _ := json.Marshal(m.Params.Meta["progressToken"])
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":1}}\n\n", token)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	s, err := client.New("t", "1").Connect(context.Background(), &client.StreamableHTTP{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	held, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	var once sync.Once
	go func() {
		ctx := client.WithProgress(context.Background(), func(*mcp.ProgressNotificationParams) {
			once.Do(func() { close(held) })
			<-release // the read loop waits here
		})
		_, _ = s.Ping(ctx, nil)
	}()
	<-held
	go func() { // more than the queue behind the read loop holds
		for range 200 {
			select {
			case srv.get <- `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`:
			case <-release:
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = within(t, 5*time.Second, "a call whose answer nobody takes", func() error { _, err := s.Ping(ctx, nil); return err })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call whose answer nobody takes: %v, want its context's deadline", err)
	}
}

// A call failed by a broken answer (not JSON) has ended: the server's
// real answer after it is late, not an answer to no request.
func TestAnswerAfterABrokenOneIsLate(t *testing.T) {
	_, url := newStreamServer(t, true, func(s *streamServer, w http.ResponseWriter, r *http.Request, id json.RawMessage, _ []byte) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fmt.Fprintf(w, "data: {not json\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
	})
	var mu sync.Mutex
	var rules []string
	s, err := client.New("t", "1", client.WithViolationHandler(func(v *client.Violation) {
		mu.Lock()
		rules = append(rules, v.Rule)
		mu.Unlock()
	})).Connect(context.Background(), &client.StreamableHTTP{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ping(context.Background(), nil); err == nil {
		t.Fatal("a call answered with a body that is not JSON succeeded")
	}
	if _, err := s.Ping(context.Background(), nil); err == nil { // after the first call's stream is read whole
		t.Fatal("the second call succeeded")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, r := range rules {
		if r == client.RuleUnknownID {
			t.Errorf("violations %v: the real answer after a broken one counted as an answer to no request", rules)
			break
		}
	}
}

// A server that answers every GET with a stream that brings nothing (an
// event id it gave before, and the stream's end) is asked again less and
// less often, not ten times a second for the session's life.
func TestQuietGetStreamsBackOff(t *testing.T) {
	var gets atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			gets.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "id: 1\nretry: 1\n\n")
			return
		case http.MethodDelete:
			return
		}
		_, id, method := posted(r)
		if method != "initialize" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Mcp-Session-Id", "quiet")
		answerInitialize(w, id, `{}`, "quiet")
	}))
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	time.Sleep(2 * time.Second)
	// Waits of 0.1, 0.2, 0.4 and 0.8 s: 5 GETs in 2 s (20 at the server's
	// retry, bounded below by 100 ms).
	if n := gets.Load(); n > 6 {
		t.Errorf("%d GETs in 2s of streams that brought nothing; want at most 6", n)
	}
}

// What a server gives the client to send back is bounded: a session id
// (sent with every request) must be 1 to 1,024 visible ASCII characters,
// and an event id longer than 1,024 bytes is not sent back as
// Last-Event-ID (the call fails when its stream ends, as without ids).
func TestServerTokensAreBounded(t *testing.T) {
	tests := []struct {
		name, session, eventID string
	}{
		{"a session id of 2,000 bytes", strings.Repeat("s", 2000), ""},
		{"a session id with a space", "two words", ""},
		{"an event id of 2,000 bytes", "ok", strings.Repeat("e", 2000)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var resumed atomic.Int64
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.Method {
				case http.MethodGet:
					if r.Header.Get("Last-Event-ID") != "" {
						resumed.Add(1)
					}
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				case http.MethodDelete:
					return
				}
				_, id, method := posted(r)
				switch method {
				case "initialize":
					w.Header().Set("Mcp-Session-Id", tc.session)
					answerInitialize(w, id, `{}`, "tokens")
				case "ping": // a priming event, and the stream ends before the answer
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "id: %s\nretry: 1\ndata:\n\n", tc.eventID)
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			t.Cleanup(hs.Close)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := client.New("t", "1").Connect(ctx, &client.StreamableHTTP{URL: hs.URL, NoListen: true})
			if tc.eventID == "" {
				if err == nil || !strings.Contains(err.Error(), "Mcp-Session-Id") {
					t.Fatalf("connect: %v, want an error naming the session id", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Ping(ctx, nil); err == nil || ctx.Err() != nil {
				t.Errorf("ping: %v (context %v), want it failed when its stream ended", err, ctx.Err())
			}
			if n := resumed.Load(); n != 0 {
				t.Errorf("%d resumptions sent the long event id back", n)
			}
		})
	}
}

// The notifications waiting for their handler are bounded in bytes too:
// a server that sends 64 log messages of 1 MiB while the handler is
// stuck has at most 16 MiB of them kept, the rest dropped and logged.
func TestQueuedNotificationsAreBoundedInBytes(t *testing.T) {
	const n, size = 64, 1 << 20
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		case http.MethodDelete:
			return
		}
		_, id, method := posted(r)
		switch method {
		case "initialize":
			answerInitialize(w, id, `{"logging":{}}`, "loud")
		case "ping":
			w.Header().Set("Content-Type", "text/event-stream")
			data := strings.Repeat("x", size)
			for range n {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", data)
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(hs.Close)
	release := make(chan struct{})
	var handled atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := client.New("t", "1", client.WithLogger(slog.New(slog.DiscardHandler)), client.WithLogHandler(func(context.Context, *mcp.LoggingMessageNotificationParams) {
		<-release
		handled.Add(1)
	})).Connect(ctx, &client.StreamableHTTP{URL: hs.URL, NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	close(release)
	time.Sleep(200 * time.Millisecond)
	// One in the stuck handler, then 16 MiB of them queued.
	if got := handled.Load(); got < 2 || got > 1+maxQueued(size) {
		t.Errorf("%d of %d log messages of 1 MiB handled after the handler was stuck; want at most %d", got, n, 1+maxQueued(size))
	}
}

// maxQueued is how many notifications of about size bytes the client's
// bound of 16 MiB keeps waiting.
func maxQueued(size int) int64 { return int64(16<<20) / int64(size) }
