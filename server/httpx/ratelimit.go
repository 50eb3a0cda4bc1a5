package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/httprate"

	"github.com/mcpstack/mcpstack/wire"
)

// RateLimit is a request rate per client: Requests in every Window.
type RateLimit struct {
	Requests int
	Window   time.Duration
}

// ParseRateLimit reads "N/DURATION" (e.g. "1000/10s"; "N/s" and "N/m"
// for one second or minute), or "0" and "off" for no limit.
func ParseRateLimit(s string) (RateLimit, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "off" || s == "" {
		return RateLimit{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	reqs, err := strconv.Atoi(n)
	if !ok || err != nil || reqs <= 0 {
		return RateLimit{}, fmt.Errorf("rate limit %q: want N/DURATION, e.g. 1000/10s, or 0 for none", s)
	}
	switch per {
	case "s":
		per = "1s"
	case "m":
		per = "1m"
	}
	d, err := time.ParseDuration(per)
	if err != nil || d <= 0 {
		return RateLimit{}, fmt.Errorf("rate limit %q: %q is not a duration", s, per)
	}
	return RateLimit{Requests: reqs, Window: d}, nil
}

// Off reports whether the limit lets everything through.
func (l RateLimit) Off() bool { return l.Requests <= 0 }

// Middleware limits each client (Caller(r).Key: the principal, or the
// address without authentication) to the rate, with a sliding window
// (github.com/go-chi/httprate). Past it a request gets 429 with
// Retry-After and a JSON-RPC error body. Mount it after authentication, so
// that it counts principals rather than the addresses they share.
func (l RateLimit) Middleware() func(http.Handler) http.Handler {
	if l.Off() {
		return func(next http.Handler) http.Handler { return next }
	}
	return httprate.Limit(l.Requests, l.Window,
		httprate.WithKeyFuncs(func(r *http.Request) (string, error) {
			if k := Caller(r).Key; k != "" {
				return k, nil
			}
			return "", errors.New("no client key")
		}),
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			Error(w, http.StatusTooManyRequests, wire.CodeServerBusy,
				fmt.Sprintf("Too Many Requests: more than %d requests in %s; retry after the time in Retry-After", l.Requests, l.Window))
		}))
}
