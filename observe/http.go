package observe

import (
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/propagation"

	"github.com/mcpstack/mcpstack/internal/tracemeta"
)

// Middleware wraps an MCP HTTP handler: the trace context of the request's
// traceparent header goes into its context (a message's own _meta comes
// first, see Serve), and its answer counts by status, an authentication
// failure by its reason (mcphttp.WithObserver).
func (o *Observer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A POST is one message (or batch) to trace; a GET stream or a
		// socket carries many, each with its own parent, if any.
		if _, ok := r.Header["Traceparent"]; ok && r.Method == http.MethodPost {
			r = r.WithContext(tracemeta.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
		}
		if o.metrics == nil {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		code := sw.status
		if code == 0 {
			code = http.StatusOK
		}
		o.metrics.httpAnswer(code)
		if code == http.StatusUnauthorized || code == http.StatusForbidden {
			o.metrics.authFails.WithLabelValues(authReason(w.Header().Get("WWW-Authenticate"))).Inc()
		}
	})
}

// authReason is the error of a WWW-Authenticate challenge (RFC 6750:
// invalid_token, insufficient_scope, ...), missing_token without one.
func authReason(challenge string) string {
	_, after, ok := strings.Cut(challenge, `error="`)
	if !ok {
		return "missing_token"
	}
	reason, _, _ := strings.Cut(after, `"`)
	switch reason {
	case "invalid_request", "invalid_token", "insufficient_scope":
		return reason
	}
	return "other"
}

// statusWriter remembers the status of an answer; it passes Flush on, so
// that event streams still stream.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath
// (deadlines, hijacking for WebSocket).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
