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
)

// sink is the other origin a server redirects to: it records every
// request that reaches it, with what the client would have leaked.
type sink struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newSink(t *testing.T) *sink {
	s := &sink{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.seen = append(s.seen, fmt.Sprintf("%s %s Authorization=%q X-Custom=%q body=%dB", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("X-Custom"), len(body)))
		s.mu.Unlock()
		w.WriteHeader(http.StatusTeapot)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *sink) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// redirect answers 307 to the same path on to.
func redirect(w http.ResponseWriter, r *http.Request, to string) {
	http.Redirect(w, r, to+r.URL.Path, http.StatusTemporaryRedirect)
}

// answerPOST is a Streamable HTTP server's POST: it negotiates a session
// and answers any other request with an empty result.
func answerPOST(w http.ResponseWriter, r *http.Request) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	_ = json.NewDecoder(r.Body).Decode(&msg)
	switch {
	case len(msg.ID) == 0:
		w.WriteHeader(http.StatusAccepted)
	case msg.Method == "initialize":
		w.Header().Set("Mcp-Session-Id", "s1")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, msg.ID)
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
	}
}

// A redirect to another origin (here another port of 127.0.0.1) is not
// followed, by any of the client's HTTP requests: nothing reaches the
// other origin (no Authorization, no custom header, no message), and the
// error names both origins. Within the origin, redirects are followed.
func TestRedirectToAnotherOrigin(t *testing.T) {
	header := http.Header{"Authorization": {"Bearer secret"}, "X-Custom": {"mine"}}
	tests := []struct {
		name string
		// serve is the server's handler; to is the sink's URL, self its own.
		serve     func(w http.ResponseWriter, r *http.Request, to, self string)
		transport func(url string) client.Transport
		// refused: Connect fails with the RedirectError; else the session
		// works (a ping) and closes.
		refused bool
		// reached is what the server itself must have received (method
		// and path), so that the redirects were asked for.
		reached []string
	}{
		{"Streamable HTTP: the POST", func(w http.ResponseWriter, r *http.Request, to, _ string) { redirect(w, r, to) },
			func(url string) client.Transport { return &client.StreamableHTTP{URL: url + "/mcp", Header: header} }, true,
			[]string{"POST /mcp"}},
		{"Streamable HTTP, the user's client: the POST", func(w http.ResponseWriter, r *http.Request, to, _ string) { redirect(w, r, to) },
			func(url string) client.Transport {
				return &client.StreamableHTTP{URL: url + "/mcp", Header: header, Client: &http.Client{Timeout: 10 * time.Second}}
			}, true, []string{"POST /mcp"}},
		{"Streamable HTTP: the GET stream and the DELETE", func(w http.ResponseWriter, r *http.Request, to, _ string) {
			if r.Method == http.MethodPost {
				answerPOST(w, r)
				return
			}
			redirect(w, r, to)
		}, func(url string) client.Transport { return &client.StreamableHTTP{URL: url + "/mcp", Header: header} }, false,
			[]string{"GET /mcp", "DELETE /mcp"}},
		{"Streamable HTTP: within the origin, followed", func(w http.ResponseWriter, r *http.Request, _, self string) {
			if r.URL.Path == "/old" {
				http.Redirect(w, r, self+"/mcp", http.StatusTemporaryRedirect)
				return
			}
			answerPOST(w, r)
		}, func(url string) client.Transport {
			return &client.StreamableHTTP{URL: url + "/old", Header: header, NoListen: true}
		}, false, []string{"POST /old", "POST /mcp"}},
		{"HTTP+SSE: the GET", func(w http.ResponseWriter, r *http.Request, to, _ string) { redirect(w, r, to) },
			func(url string) client.Transport { return &client.SSE{URL: url + "/sse", Header: header} }, true,
			[]string{"GET /sse"}},
		{"HTTP+SSE: the POST to the endpoint", func(w http.ResponseWriter, r *http.Request, to, _ string) {
			if r.Method == http.MethodGet {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, "event: endpoint\ndata: /messages\n\n")
				w.(http.Flusher).Flush()
				<-r.Context().Done()
				return
			}
			redirect(w, r, to)
		}, func(url string) client.Transport { return &client.SSE{URL: url + "/sse", Header: header} }, true,
			[]string{"GET /sse", "POST /messages"}},
		{"WebSocket: the handshake", func(w http.ResponseWriter, r *http.Request, to, _ string) { redirect(w, r, to) },
			func(url string) client.Transport {
				return &client.WebSocket{URL: "ws" + strings.TrimPrefix(url, "http") + "/mcp/ws", Header: header}
			}, true, []string{"GET /mcp/ws"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			other := newSink(t)
			var self string
			var mu sync.Mutex
			got := map[string]bool{} // what the server itself received
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				got[r.Method+" "+r.URL.Path] = true
				mu.Unlock()
				tc.serve(w, r, other.URL, self)
			}))
			defer hs.Close()
			reached := func(what string) bool {
				mu.Lock()
				defer mu.Unlock()
				return got[what]
			}
			self = hs.URL
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			tr := tc.transport(hs.URL)
			s, err := client.New("t", "1").Connect(ctx, tr)
			if tc.refused {
				var re *client.RedirectError
				if !errors.As(err, &re) || re.From != hs.URL || re.To != other.URL ||
					!strings.Contains(err.Error(), "("+hs.URL+" -> "+other.URL+"): not followed") {
					t.Errorf("Connect: %v, want a RedirectError from %s to %s", err, hs.URL, other.URL)
				}
				if s != nil {
					s.Close()
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Ping(ctx, nil); err != nil {
					t.Errorf("ping: %v", err)
				}
				// The GET stream opens after negotiation: wait for it.
				for deadline := time.Now().Add(5 * time.Second); !reached(tc.reached[0]) && time.Now().Before(deadline); {
					time.Sleep(10 * time.Millisecond)
				}
				s.Close()
			}
			for _, what := range tc.reached {
				if !reached(what) {
					t.Errorf("the server did not receive %s", what)
				}
			}
			if seen := other.requests(); len(seen) > 0 {
				t.Errorf("the other origin received %q", seen)
			}
			if c, ok := tr.(*client.StreamableHTTP); ok && c.Client != nil && c.Client.CheckRedirect != nil {
				t.Errorf("the user's http.Client was changed")
			}
		})
	}
}
