package core_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
)

// TestRequestStateBinding: a requestState is sealed (not readable) and
// bound to the user it was issued to, and it expires.
func TestRequestStateBinding(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`
	const answer = `"inputResponses":{"sampling/createMessage#1":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}`
	alice := core.WithCaller(context.Background(), core.Caller{Owner: "alice", Key: "alice"})
	bob := core.WithCaller(context.Background(), core.Caller{Owner: "bob", Key: "bob"})
	for _, tt := range []struct {
		name  string
		ttl   time.Duration
		retry context.Context
		want  string // "" for success
	}{
		{"same user", time.Minute, alice, ""},
		{"another user", time.Minute, bob, "issued to another user"},
		{"expired", -2 * time.Second, alice, "expired"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newServer(conformance.New(conformance.WithStepDelay(0)), core.WithStrict(true), core.WithStateTTL(tt.ttl))
			defer srv.Close()
			call := func(ctx context.Context, extra string) map[string]any {
				body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"},` + extra + meta + `}}`
				reply, _ := srv.ServeStateless(ctx, srv.Parse([]byte(body)), nil, nil)
				var msg map[string]any
				if err := json.Unmarshal(reply, &msg); err != nil {
					t.Fatalf("%s: %v", reply, err)
				}
				return msg
			}
			first := call(alice, "")
			state, _ := first["result"].(map[string]any)["requestState"].(string)
			if state == "" {
				t.Fatalf("no requestState: %v", first)
			}
			raw, err := base64.RawURLEncoding.DecodeString(state)
			if err != nil {
				t.Fatalf("state is not base64url: %v", err)
			}
			if strings.Contains(string(raw), "tools/call") || strings.Contains(string(raw), "alice") {
				t.Errorf("the state is readable: %q", raw)
			}
			got := call(tt.retry, `"requestState":"`+state+`",`+answer+`,`)
			if tt.want == "" {
				if got["result"] == nil {
					t.Fatalf("retry refused: %v", got)
				}
				return
			}
			e, _ := got["error"].(map[string]any)
			if e == nil || e["code"] != -32602.0 || !strings.Contains(e["message"].(string), tt.want) {
				t.Fatalf("retry: %v, want -32602 %q", got, tt.want)
			}
		})
	}
}

// TestRequestStateAcrossReplicas: a state issued by one server is opened
// by another with the same secret (a replica), and after a rotation by
// one that keeps the old secret as a previous one; a server without it
// refuses the state.
func TestRequestStateAcrossReplicas(t *testing.T) {
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"sampling":{}}}`
	const answer = `"inputResponses":{"sampling/createMessage#1":{"role":"assistant","content":{"type":"text","text":"Four."},"model":"m"}}`
	oldKey, newKey := []byte(strings.Repeat("o", 32)), []byte(strings.Repeat("n", 32))
	call := func(srv *core.Server, extra string) map[string]any {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"test_sampling","arguments":{"prompt":"2+2?"},` + extra + meta + `}}`
		reply, _ := srv.ServeStateless(context.Background(), srv.Parse([]byte(body)), nil, nil)
		var msg map[string]any
		if err := json.Unmarshal(reply, &msg); err != nil {
			t.Fatalf("%s: %v", reply, err)
		}
		return msg
	}
	issuer := newServer(conformance.New(conformance.WithStepDelay(0)), core.WithStateKey(oldKey))
	defer issuer.Close()
	state, _ := call(issuer, "")["result"].(map[string]any)["requestState"].(string)
	if state == "" {
		t.Fatal("no requestState")
	}
	for _, tt := range []struct {
		name string
		opt  core.Option
		ok   bool
	}{
		{"a replica with the same secret", core.WithStateKey(oldKey), true},
		{"rotated, the old secret kept as previous", core.WithStateKey(newKey, oldKey), true},
		{"rotated, the old secret dropped", core.WithStateKey(newKey), false},
		{"a secret of its own", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := []core.Option{}
			if tt.opt != nil {
				opts = append(opts, tt.opt)
			}
			srv := newServer(conformance.New(conformance.WithStepDelay(0)), opts...)
			defer srv.Close()
			got := call(srv, `"requestState":"`+state+`",`+answer+`,`)
			if tt.ok != (got["result"] != nil) {
				t.Fatalf("retry: %v, want opened %v", got, tt.ok)
			}
			if !tt.ok {
				if e, _ := got["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "integrity") {
					t.Errorf("refused with %v, want the integrity check's error", got)
				}
			}
		})
	}
}

// TestShortStateKeyPanics: a secret anyone could guess would let anyone
// forge a requestState, so WithStateKey takes none shorter than 32 bytes,
// as mcpstack serve's --state-key-file does not.
func TestShortStateKeyPanics(t *testing.T) {
	long := []byte(strings.Repeat("k", core.MinStateKey))
	for _, tt := range []struct {
		name     string
		key      []byte
		previous [][]byte
		panics   string
	}{
		{"32 bytes", long, nil, ""},
		{"31 bytes", long[:31], nil, "the key is 31 bytes"},
		{"empty", nil, nil, "the key is 0 bytes"},
		{"a short previous key", long, [][]byte{long[:8]}, "previous key 1 is 8 bytes"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				got, _ := recover().(string)
				if tt.panics == "" && got != "" || !strings.Contains(got, tt.panics) {
					t.Errorf("panic %q, want one saying %q", got, tt.panics)
				}
			}()
			core.WithStateKey(tt.key, tt.previous...)
		})
	}
}
