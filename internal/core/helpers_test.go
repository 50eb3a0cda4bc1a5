package core_test

import (
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
)

// newServer is core.New with the handler's tools run as tasks when it says
// so, as server.New does.
func newServer(h mcp.Handler, opts ...core.Option) *core.Server {
	if ts, ok := h.(core.TaskSupporter); ok {
		opts = append([]core.Option{core.WithTaskRunner(ts)}, opts...)
	}
	return core.New(h, opts...)
}
