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
	// Counter, when set, gives the limiter its counter (one that replicas
	// share); nil counts in memory.
	Counter func() httprate.LimitCounter
}

// counted is the options of a limiter: its keys, and its counter when
// RateLimit has one.
func (l RateLimit) counted(opts ...httprate.Option) []httprate.Option {
	opts = append(opts, httprate.WithKeyFuncs(func(r *http.Request) (string, error) {
		if k := Caller(r).Key; k != "" {
			return k, nil
		}
		return "", errors.New("no client key")
	}))
	if l.Counter != nil {
		opts = append(opts, httprate.WithLimitCounter(l.Counter()))
	}
	return opts
}

// ParseRateLimit reads "N/DURATION" (e.g. "1000/10s"; "N/s" and "N/m"
// for one second or minute; N may end in KiB, MiB or GiB, for byte rates:
// "32MiB/10s"), or "0" and "off" for no limit.
func ParseRateLimit(s string) (RateLimit, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "off" || s == "" {
		return RateLimit{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	mult := 1
	for suffix, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if cut, found := strings.CutSuffix(n, suffix); found {
			n, mult = cut, m
		}
	}
	reqs, err := strconv.Atoi(n)
	if !ok || err != nil || reqs <= 0 {
		return RateLimit{}, fmt.Errorf("rate limit %q: want N/DURATION, e.g. 1000/10s, or 0 for none", s)
	}
	reqs *= mult
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
	return httprate.Limit(l.Requests, l.Window, l.counted(
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			Error(w, http.StatusTooManyRequests, wire.CodeServerBusy,
				fmt.Sprintf("Too Many Requests: more than %d requests in %s; retry after the time in Retry-After", l.Requests, l.Window))
		}))...)
}

// BytesMiddleware limits the bytes each client sends (the same keys as
// Middleware): Requests is then a number of bytes per Window, and each
// request counts its Content-Length (maxBody when it has none: a chunked
// body is counted at the most it may be). Past it a request gets 429 with
// Retry-After, before its body is read. It bounds what one client can make
// the server parse and validate, which a count of requests does not.
func (l RateLimit) BytesMiddleware(maxBody int64) func(http.Handler) http.Handler {
	if l.Off() {
		return func(next http.Handler) http.Handler { return next }
	}
	limit := httprate.Limit(l.Requests, l.Window, l.counted(
		httprate.WithResponseHeaders(httprate.ResponseHeaders{RetryAfter: "Retry-After"}),
		httprate.WithLimitHandler(func(w http.ResponseWriter, _ *http.Request) {
			Error(w, http.StatusTooManyRequests, wire.CodeServerBusy,
				fmt.Sprintf("Too Many Requests: more than %d bytes of requests in %s; retry after the time in Retry-After", l.Requests, l.Window))
		}))...)
	return func(next http.Handler) http.Handler {
		limited := limit(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := r.ContentLength
			if n < 0 || n > maxBody {
				n = maxBody
			}
			if n == 0 {
				next.ServeHTTP(w, r) // a GET, a DELETE: nothing to parse
				return
			}
			limited.ServeHTTP(w, r.WithContext(httprate.WithIncrement(r.Context(), int(min(n, int64(l.Requests))))))
		})
	}
}
