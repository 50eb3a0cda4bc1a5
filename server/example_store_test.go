package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
)

// mapStore is a SessionStore in a map: what Redis or SQL would be for
// replicas on several machines.
type mapStore struct {
	mu     sync.Mutex
	states map[string]server.SessionState
}

func (m *mapStore) Create(_ context.Context, s server.SessionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.states[s.ID]; ok {
		return fmt.Errorf("session %s exists", s.ID)
	}
	m.states[s.ID] = s
	return nil
}

func (m *mapStore) Load(_ context.Context, id string) (server.SessionState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.states[id]
	if !ok {
		return s, server.ErrSessionNotFound
	}
	return s, nil
}

// Update compares versions, so that two replicas that change a session
// at once both keep their change.
func (m *mapStore) Update(_ context.Context, s server.SessionState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	kept, ok := m.states[s.ID]
	if !ok {
		return server.ErrSessionNotFound
	}
	if kept.Version != s.Version {
		return server.ErrSessionChanged
	}
	s.Version++
	m.states[s.ID] = s
	return nil
}

func (m *mapStore) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.states, id)
	return nil
}

// Two servers that share a SessionStore serve each other's sessions: the
// client opens its session on one, and the other answers its next request
// from the stored state.
func ExampleWithSessionStore() {
	store := &mapStore{states: map[string]server.SessionState{}}
	var stops []func() // each replica's: drain its HTTP handler, close its server
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	replica := func() http.Handler {
		a := app.New("replica", "1.0.0")
		app.AddTool(a, app.Tool{Name: "ping"}, func(context.Context, struct{}) (string, error) { return "pong", nil })
		srv := app.NewServer(a, server.WithSessionStore(store))
		h, shutdown := mcphttp.Handler(srv, mcphttp.WithResponseMode(mcphttp.ResponseJSON))
		stops = append(stops, func() { shutdown(context.Background()); srv.Close() })
		return h
	}
	one, two := httptest.NewServer(replica()), httptest.NewServer(replica())
	defer one.Close()
	defer two.Close()

	// post sends a body as a Streamable HTTP client does, and returns the
	// session id the answer names and the answer.
	post := func(url, session, body string) (string, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err.Error()
		}
		defer resp.Body.Close()
		answer, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), strings.TrimSpace(string(answer))
	}
	session, _ := post(one.URL+"/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	post(one.URL+"/mcp", session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	_, answer := post(two.URL+"/mcp", session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ping","arguments":{}}}`)
	fmt.Println(answer)
	// Output:
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"pong","type":"text"}]}}
}
