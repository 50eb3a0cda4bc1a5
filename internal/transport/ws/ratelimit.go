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

// WithByteRateLimit caps the bytes of the frames one client sends over all
// its sockets, as WithRateLimit caps their number: a frame waits (unread
// beyond its own bytes) until the bucket allows it. bytes <= 0: no limit.
func WithByteRateLimit(bytes int, window time.Duration) Option {
	return optionFunc(func(c *config) { c.rateBytes, c.byteWindow = bytes, window })
}

// clientLimiters keeps one token bucket per client key while the client
// has sockets open.
type clientLimiters struct {
	mu     sync.Mutex
	frames bucketSpec
	bytes  bucketSpec
	window time.Duration // the longest refill: a bucket is kept that long after its last socket
	by     map[string]*sharedLimiter
}

type bucketSpec struct {
	limit rate.Limit
	burst int
}

func (b bucketSpec) new() *rate.Limiter {
	if b.burst <= 0 {
		return rate.NewLimiter(rate.Inf, 0)
	}
	return rate.NewLimiter(b.limit, b.burst)
}

type sharedLimiter struct {
	frames, bytes *rate.Limiter
	sockets       int
	released      time.Time // when the last socket closed
}

func newClientLimiters(requests int, window time.Duration, bytes int, byteWindow time.Duration) *clientLimiters {
	c := &clientLimiters{by: map[string]*sharedLimiter{}}
	if requests > 0 && window > 0 {
		c.frames = bucketSpec{limit: rate.Limit(float64(requests) / window.Seconds()), burst: requests}
		c.window = window
	}
	if bytes > 0 && byteWindow > 0 {
		c.bytes = bucketSpec{limit: rate.Limit(float64(bytes) / byteWindow.Seconds()), burst: bytes}
		c.window = max(c.window, byteWindow)
	}
	if c.window == 0 {
		return nil
	}
	return c
}

// acquire returns the buckets of key for one socket (wait takes one frame
// of n bytes), and the function that lets them go when the socket closes.
// A nil *clientLimiters limits nothing.
func (c *clientLimiters) acquire(key string) (wait func(ctx context.Context, n int) error, release func()) {
	if c == nil || key == "" {
		return func(context.Context, int) error { return nil }, func() {}
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
		l = &sharedLimiter{frames: c.frames.new(), bytes: c.bytes.new()}
		c.by[key] = l
	}
	l.sockets++
	wait = func(ctx context.Context, n int) error {
		if err := l.frames.Wait(ctx); err != nil {
			return err
		}
		if c.bytes.burst > 0 {
			return l.bytes.WaitN(ctx, min(n, c.bytes.burst))
		}
		return nil
	}
	return wait, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if l.sockets--; l.sockets == 0 {
			l.released = time.Now()
		}
	}
}
