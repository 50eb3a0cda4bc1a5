package httpx

import (
	"net/http"
	"time"
)

// WriteDeadline gives every response a write deadline timeout from the
// start of its request. net/http sets none of its own (http.Server's
// WriteTimeout would cut long calls and streams), so a client that sends
// requests and never reads the answers would hold each connection, and
// its goroutine, for ever. Event streams and large answers move the
// deadline on as they write; JSON answers move it before they are written
// (ArmWrite); a hijacked connection loses it (net/http clears deadlines
// on Hijack). HTTP/1 only: on HTTP/2 a write deadline resets the stream
// when it passes, writing or not, which would cut a long call, and the
// protocol's flow control already keeps one stream from holding the
// connection. (An event stream's writes have deadlines on HTTP/2 too:
// EventWriter sets one for each write there and clears it after.)
func WriteDeadline(timeout time.Duration) func(http.Handler) http.Handler {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor == 1 {
				ArmWrite(w, timeout)
			}
			next.ServeHTTP(w, r)
		})
	}
}

// ArmWrite gives what w writes from now on timeout to reach the client:
// an answer written after a long call or a slow body gets its own time.
// A writer without deadlines (a test recorder) is left as it is;
// timeout <= 0 is DefaultWriteTimeout.
func ArmWrite(w http.ResponseWriter, timeout time.Duration) {
	if timeout <= 0 {
		timeout = DefaultWriteTimeout
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout))
}
