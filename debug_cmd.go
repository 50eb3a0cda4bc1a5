package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/pprof"

	"github.com/mcpstack/mcpstack/internal/guard"
)

// serveDebug serves the Go runtime's profiles (net/http/pprof) at
// ADDR/debug/pprof/ on a listener of their own. Profiles show the process's
// code and data, so the address must be a loopback one: reach it from
// elsewhere through a tunnel (kubectl port-forward, ssh -L). The command
// line is not served: flags may carry credentials (--postgres-dsn).
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	if !guard.IsLoopbackAddr(addr) {
		return nil, fmt.Errorf("%q is not a loopback address: profiles expose the process's memory", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// A loopback listener is still reachable from a browser's page through
	// DNS rebinding: the Host and Origin checks of the MCP endpoint apply.
	return serveAside(addr, guard.Loopback()(mux), "Go profiles", "/debug/pprof/", log)
}
