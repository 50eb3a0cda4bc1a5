package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// brokenServer is a Streamable HTTP server that negotiates correctly and
// answers one method with a scripted body: the answer a broken server
// gives. %ID% in the body is the request's id.
func brokenServer(t *testing.T, method, answer string) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		_, id, got := posted(r)
		w.Header().Set("Content-Type", "application/json")
		switch got {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}`, id)
		case method:
			fmt.Fprint(w, strings.ReplaceAll(answer, "%ID%", string(id)))
		case "":
			w.WriteHeader(http.StatusAccepted) // a response or a notification
		default:
			if len(id) == 0 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, id)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// Every rule a server's message can break is a *Violation naming the rule
// and where; in lenient mode the handler hears of it instead.
func TestViolations(t *testing.T) {
	tests := []struct {
		name, method, answer string
		call                 func(ctx context.Context, s *client.Session) error
		rule, pointer        string
	}{
		{"a tool without inputSchema", "tools/list", `{"jsonrpc":"2.0","id":%ID%,"result":{"tools":[{"name":"t"}]}}`,
			func(ctx context.Context, s *client.Session) error { _, err := s.ListTools(ctx, nil); return err },
			client.RuleSchema, "/result/tools/0"},
		{"content of an unknown type", "tools/call", `{"jsonrpc":"2.0","id":%ID%,"result":{"content":[{"type":"hologram"}]}}`,
			func(ctx context.Context, s *client.Session) error {
				_, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "t"})
				return err
			},
			client.RuleSchema, "/result/content/0"},
		{"result and error", "ping", `{"jsonrpc":"2.0","id":%ID%,"result":{},"error":{"code":1,"message":"x"}}`,
			func(ctx context.Context, s *client.Session) error { _, err := s.Ping(ctx, nil); return err },
			client.RuleJSON, ""},
		{"the wrong id", "ping", `{"jsonrpc":"2.0","id":"not-mine","result":{}}`,
			func(ctx context.Context, s *client.Session) error { _, err := s.Ping(ctx, nil); return err },
			client.RuleUnknownID, "/id"},
		{"an error without a message", "ping", `{"jsonrpc":"2.0","id":%ID%,"error":{"code":-32603}}`,
			func(ctx context.Context, s *client.Session) error { _, err := s.Ping(ctx, nil); return err },
			client.RuleSchema, "/error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := brokenServer(t, tc.method, tc.answer)
			// Strict (the default): the call fails with the violation;
			// a response to no call fails nothing but is reported.
			var mu sync.Mutex
			var seen []*client.Violation
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			s, err := client.New("t", "1", client.WithRequestTimeout(500*time.Millisecond)).Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = tc.call(ctx, s)
			var v *client.Violation
			if !errors.As(err, &v) || v.Rule != tc.rule || !strings.HasPrefix(v.Pointer, tc.pointer) {
				t.Fatalf("error %v, want a %s violation at %s", err, tc.rule, tc.pointer)
			}
			// Lenient: the handler hears of it.
			s2, err := client.New("t", "1", client.WithRequestTimeout(500*time.Millisecond), client.WithViolationHandler(func(v *client.Violation) {
				mu.Lock()
				seen = append(seen, v)
				mu.Unlock()
			})).Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			_ = tc.call(ctx, s2)
			// A message the call's answer held beside it is reported as
			// the session reads it, which may be after the call failed.
			for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				if n > 0 {
					break
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 || seen[0].Rule != tc.rule || !strings.HasPrefix(seen[0].Pointer, tc.pointer) {
				t.Errorf("violations %v, want a %s violation at %s", seen, tc.rule, tc.pointer)
			}
		})
	}
}

// floodServer is a Streamable HTTP server that answers ping with n
// invalid notifications of about size bytes each, then the answer:
// half of an unknown method (the whole name is the message), half a
// log message of an unknown level with data of that size. onDelete runs
// when the client ends the session.
func floodServer(t *testing.T, method string, n, size int, onDelete func()) string {
	t.Helper()
	long := strings.Repeat("x", size)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			onDelete()
			return
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		switch {
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "flood")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}}`, msg.ID)
		case msg.Method == method:
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range n {
				if i%2 == 0 {
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/%s\"}\n\n", long)
				} else {
					fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"%s\",\"data\":\"%s\"}}\n\n", long[:10], long)
				}
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[]}}\n\n", msg.ID)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A violation keeps at most MaxExcerpt of the server's message, and of
// the method, pointer and reason that quote it: a program that keeps the
// violations of a hostile server (64 notifications of 1 MiB here) keeps
// kilobytes, not the 64 MiB it was sent (issue 20).
func TestViolationsKeepAnExcerpt(t *testing.T) {
	const n, size, bound = 64, 1 << 20, 1 << 10
	url := floodServer(t, "ping", n, size, func() {})
	before := liveHeap()
	var mu sync.Mutex
	var seen []*client.Violation
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := client.New("t", "1", client.WithViolationHandler(func(v *client.Violation) {
		mu.Lock()
		seen = append(seen, v)
		mu.Unlock()
	})).Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	grown := int64(liveHeap()) - int64(before)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Fatalf("%d violations, want %d", len(seen), n)
	}
	for i, v := range seen {
		if len(v.Message) > bound || len(v.Method) > bound || len(v.Pointer) > bound || len(v.Reason) > bound {
			t.Errorf("violation %d keeps %d bytes of the message, method %d, pointer %d, reason %d: want at most %d each",
				i, len(v.Message), len(v.Method), len(v.Pointer), len(v.Reason), bound)
			break
		}
		if !v.Truncated || v.Size < size || (v.Rule == client.RuleUnknownMethod && !strings.HasSuffix(v.Reason, "…[truncated]")) {
			t.Errorf("violation %d: truncated %v, size %d, reason %.80q…: want it marked as cut from %d bytes", i, v.Truncated, v.Size, v.Reason, size)
			break
		}
	}
	t.Logf("the heap grew by %d KiB keeping %d violations", grown>>10, n)
	if grown > n*size/4 {
		t.Errorf("keeping %d violations grew the heap by %d MiB, of %d MiB sent", n, grown>>20, n*size>>20)
	}
	runtime.KeepAlive(seen)
}

// A JSON body is all the answer a POSTed request gets: one that holds no
// response to it, or a 202, fails the call at once, without a request
// timeout to end the wait.
func TestJSONAnswerWithoutTheResponse(t *testing.T) {
	tests := []struct{ name, answer string }{
		{"another id", `{"jsonrpc":"2.0","id":"not-mine","result":{}}`},
		{"a notification", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`},
		{"202 Accepted", ""},
		{"an error with no id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: no"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := brokenServer(t, "ping", tc.answer)
			if tc.answer == "" { // initialize answered, anything else 202
				hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if _, id, got := posted(r); got == "initialize" {
						answerInitialize(w, id, `{}`, "accepting")
						return
					}
					w.WriteHeader(http.StatusAccepted)
				}))
				t.Cleanup(hs.Close)
				url = hs.URL
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s, err := client.New("t", "1", client.WithViolationHandler(func(*client.Violation) {})).Connect(ctx, &client.StreamableHTTP{URL: url, NoListen: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			start := time.Now()
			_, err = s.Ping(ctx, nil)
			var ae *client.AnswerError
			var we *wire.Error
			var v *client.Violation
			switch {
			case time.Since(start) > time.Second:
				t.Errorf("ping: %v after %v, want it failed at once", err, time.Since(start).Round(time.Millisecond))
			case strings.Contains(tc.answer, `"error"`):
				if !errors.As(err, &we) || we.Code != -32600 {
					t.Errorf("ping: %v, want the server's error as it said it", err)
				}
			case strings.Contains(tc.answer, `"not-mine"`):
				if !errors.As(err, &v) || v.Rule != client.RuleUnknownID {
					t.Errorf("ping: %v, want an unknown-id violation", err)
				}
			case !errors.As(err, &ae):
				t.Errorf("ping: %v, want an AnswerError", err)
			}
		})
	}
}
