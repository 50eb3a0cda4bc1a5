package server_test

import (
	"errors"
	"testing"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
)

// WithLimits: a zero field keeps its default, a negative one is no bound,
// a positive one is the bound; here the sessions one client may open.
func TestWithLimits(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limits server.Limits
		opened int   // sessions the client opens before the first refusal
		err    error // that refusal
	}{
		{"default share: a tenth of Sessions", server.Limits{Sessions: 50}, 10, core.ErrQuota},
		{"a share of its own", server.Limits{Sessions: 50, SessionsPerClient: 3}, 3, core.ErrQuota},
		{"no share: only Sessions bounds", server.Limits{Sessions: 50, SessionsPerClient: -1}, 50, core.ErrTooManySessions},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := server.New(conformance.New(), server.WithLimits(tt.limits))
			defer srv.Close()
			alice := core.OpenedBy(core.Caller{Owner: "alice", Key: "principal:alice"})
			for i := range tt.opened {
				if _, err := core.Of(srv).NewSession("", nil, alice); err != nil {
					t.Fatalf("session %d refused: %v", i+1, err)
				}
			}
			if _, err := core.Of(srv).NewSession("", nil, alice); !errors.Is(err, tt.err) {
				t.Errorf("session %d: %v, want %v", tt.opened+1, err, tt.err)
			}
		})
	}
}
