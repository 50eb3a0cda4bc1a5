package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/generated/mcp"
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
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		w.Header().Set("Content-Type", "application/json")
		switch msg.Method {
		case "initialize":
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"broken","version":"1"}}}`, msg.ID)
		case method:
			fmt.Fprint(w, strings.ReplaceAll(answer, "%ID%", string(msg.ID)))
		case "":
			w.WriteHeader(http.StatusAccepted) // a response or a notification
		default:
			if len(msg.ID) == 0 {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
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
			if tc.rule == client.RuleUnknownID {
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a call whose answer has another id: %v, want its timeout", err)
				}
			} else if !errors.As(err, &v) || v.Rule != tc.rule || !strings.HasPrefix(v.Pointer, tc.pointer) {
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
			mu.Lock()
			defer mu.Unlock()
			if len(seen) == 0 || seen[0].Rule != tc.rule || !strings.HasPrefix(seen[0].Pointer, tc.pointer) {
				t.Errorf("violations %v, want a %s violation at %s", seen, tc.rule, tc.pointer)
			}
		})
	}
}
