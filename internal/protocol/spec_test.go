package protocol

import (
	"testing"
	"testing/fstest"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
)

// A Spec without generated checks is sure of nothing and lets the
// reference validator decide; its method table is searched by name.
func TestSpecWithoutChecks(t *testing.T) {
	s := &Spec{Revision: "2099-01-01", Schemas: fstest.MapFS{}, Methods: []Method{{Name: "a"}, {Name: "b/c"}, {Name: "ping"}}}
	if s.SurelyValid("X", map[string]any{}) || s.Requires("X", "y") || s.SurelyValidMessage("X", &jsonrpc.Message{}) {
		t.Error("a Spec without checks is sure of something")
	}
	for _, name := range []string{"a", "b/c", "ping"} {
		if m, ok := s.Method(name); !ok || m.Name != name {
			t.Errorf("Method(%q) = %q, %v", name, m.Name, ok)
		}
	}
	for _, name := range []string{"", "b", "pong", "z"} {
		if _, ok := s.Method(name); ok {
			t.Errorf("Method(%q) found", name)
		}
	}
	if !s.Stateless() {
		t.Error("a table without initialize is stateless")
	}
	if _, err := s.Validator(); err == nil {
		t.Error("no schemas compiled without an error")
	}
}
