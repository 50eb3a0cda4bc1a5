package peer_test

import (
	"context"
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

type fake struct {
	token  wire.ID
	level  mcp.LoggingLevel
	caps   *mcp.ClientCapabilities
	sent   []string
	result wire.Encoder
}

func (f *fake) Call(_ context.Context, method string, _ wire.Encoder) (wire.Encoder, error) {
	f.sent = append(f.sent, method)
	return f.result, nil
}
func (f *fake) Notify(_ context.Context, method string, _ wire.Encoder) error {
	f.sent = append(f.sent, method)
	return nil
}
func (f *fake) ProgressToken() wire.ID                      { return f.token }
func (f *fake) LogLevel() mcp.LoggingLevel                  { return f.level }
func (f *fake) ClientCapabilities() *mcp.ClientCapabilities { return f.caps }
func (f *fake) SessionID() string                           { return "s" }

func TestLogFiltersByLevel(t *testing.T) {
	tests := []struct {
		session, msg mcp.LoggingLevel
		sent         bool
	}{
		{"", mcp.LoggingLevelEmergency, false},
		{mcp.LoggingLevelDebug, mcp.LoggingLevelDebug, true},
		{mcp.LoggingLevelWarning, mcp.LoggingLevelInfo, false},
		{mcp.LoggingLevelWarning, mcp.LoggingLevelError, true},
		{mcp.LoggingLevelEmergency, mcp.LoggingLevelAlert, false},
	}
	for _, tt := range tests {
		f := &fake{level: tt.session}
		ctx := peer.With(context.Background(), f)
		if err := peer.Log(ctx, tt.msg, "l", "data"); err != nil {
			t.Fatal(err)
		}
		if got := len(f.sent) == 1; got != tt.sent {
			t.Errorf("session %q, message %q: sent %v, want %v", tt.session, tt.msg, got, tt.sent)
		}
	}
}

func TestProgressNeedsToken(t *testing.T) {
	f := &fake{}
	ctx := peer.With(context.Background(), f)
	_ = peer.Progress(ctx, 1, nil, "")
	if len(f.sent) != 0 {
		t.Error("progress sent without a token")
	}
	f.token = wire.StringID("t")
	_ = peer.Progress(ctx, 1, nil, "")
	if len(f.sent) != 1 || f.sent[0] != mcp.MethodProgress {
		t.Errorf("sent %v", f.sent)
	}
}

func TestCapabilitiesChecked(t *testing.T) {
	f := &fake{caps: &mcp.ClientCapabilities{}}
	ctx := peer.With(context.Background(), f)
	if _, err := peer.CreateMessage(ctx, &mcp.CreateMessageRequestParams{}); !errors.Is(err, peer.ErrNotSupported) {
		t.Errorf("sampling without capability: %v", err)
	}
	if _, err := peer.ListRoots(context.Background()); !errors.Is(err, peer.ErrNoPeer) {
		t.Errorf("outside a call: %v", err)
	}
	f.caps.Sampling = &mcp.ClientCapabilitiesSampling{}
	f.result = &mcp.CreateMessageResult{Model: "m"}
	r, err := peer.CreateMessage(ctx, &mcp.CreateMessageRequestParams{})
	if err != nil || r.Model != "m" {
		t.Errorf("sampling: %v %v", r, err)
	}
}
