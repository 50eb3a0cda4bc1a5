package ws

import (
	"context"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// WithRateLimit caps the frames one client reads over all its sockets:
// requests per window, the rate the HTTP transports allow a client too (a
// bucket of its own: a client is a token's principal, or an address
// without authentication). Past it the next frame is not read until the
// bucket allows: the client's writes back up in TCP, and a flood costs the
// server nothing. Closing and reopening sockets does not refill the
// bucket. requests <= 0: no limit (default).
func WithRateLimit(requests int, window time.Duration) Option {
	return optionFunc(func(c *config) { c.rateRequests, c.rateWindow = requests, window })
}

// clientLimiters keeps one token bucket per client key while the client
// has sockets open.
type clientLimiters struct {
	mu     sync.Mutex
	limit  rate.Limit
	burst  int
	window time.Duration
	by     map[string]*sharedLimiter
}

type sharedLimiter struct {
	*rate.Limiter
	sockets  int
	released time.Time // when the last socket closed
}

func newClientLimiters(requests int, window time.Duration) *clientLimiters {
	if requests <= 0 || window <= 0 {
		return nil
	}
	return &clientLimiters{limit: rate.Limit(float64(requests) / window.Seconds()), burst: requests, window: window, by: map[string]*sharedLimiter{}}
}

// acquire returns the bucket of key for one socket, and the function that
// lets it go when the socket closes. A nil *clientLimiters limits nothing.
func (c *clientLimiters) acquire(key string) (wait func(context.Context) error, release func()) {
	if c == nil || key == "" {
		return func(context.Context) error { return nil }, func() {}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for k, l := range c.by { // a bucket goes once it has refilled: nothing is lost then
		if l.sockets == 0 && now.Sub(l.released) >= c.window {
			delete(c.by, k)
		}
	}
	l := c.by[key]
	if l == nil {
		l = &sharedLimiter{Limiter: rate.NewLimiter(c.limit, c.burst)}
		c.by[key] = l
	}
	l.sockets++
	return l.Wait, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if l.sockets--; l.sockets == 0 {
			l.released = time.Now()
		}
	}
}
