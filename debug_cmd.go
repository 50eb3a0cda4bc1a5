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
// elsewhere through a tunnel (kubectl port-forward, ssh -L).
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	if !guard.IsLoopbackAddr(addr) {
		return nil, fmt.Errorf("%q is not a loopback address: profiles expose the process's memory", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return serveAside(addr, mux, "Go profiles", "/debug/pprof/", log)
}
