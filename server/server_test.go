package server_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
)

// outbox keeps what a session's stream is sent.
type outbox struct {
	mu   sync.Mutex
	sent []string
}

func (o *outbox) Send(msg []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sent = append(o.sent, string(msg))
	return nil
}

// Notify reaches one live session on its stream, and says which session
// is not live.
func TestNotify(t *testing.T) {
	srv := server.New(conformance.New())
	defer srv.Close()
	ctx := context.Background()
	if err := srv.Notify(ctx, "nobody", mcp.MethodToolListChanged, &mcp.NotificationParams{}); !errors.Is(err, server.ErrSessionNotFound) {
		t.Errorf("Notify of no session: %v, want ErrSessionNotFound", err)
	}
	out := &outbox{}
	sess, err := core.Of(srv).NewSession("s1", out)
	if err != nil {
		t.Fatal(err)
	}
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sess.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), nil)
	if err := srv.Notify(ctx, "s1", mcp.MethodToolListChanged, &mcp.NotificationParams{}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	out.mu.Lock()
	defer out.mu.Unlock()
	if len(out.sent) != 1 || !strings.Contains(out.sent[0], `"method":"notifications/tools/list_changed"`) {
		t.Errorf("the session's stream got %q", out.sent)
	}
}
