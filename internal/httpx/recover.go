package httpx

import (
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
)

// Recover answers a request whose handler panics with 500 and logs the
// panic with its stack, so that one bad request neither kills the server
// nor closes the connection of a client that did nothing wrong. A panic
// with http.ErrAbortHandler is passed on: net/http aborts the response
// quietly, which is what it asks for.
//
// It replaces chi's middleware.Recoverer, whose package imports
// net/http/pprof: linking it registered the profiling handlers on
// http.DefaultServeMux of every program that imported mcphttp.
func Recover(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				v := recover()
				if v == nil {
					return
				}
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				log.Error("panic serving a request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
				if !HasToken(r.Header, "Connection", "upgrade") { // a hijacked connection has no response to write
					w.WriteHeader(http.StatusInternalServerError)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}
