package redisstore

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/go-chi/httprate"
	"github.com/redis/go-redis/v9"
)

// rateSync is how often a replica adds its counts to Redis and reads the
// service's: a client's rate holds for the service within it.
const rateSync = 100 * time.Millisecond

// RateCounter is a counter for the per-client rate limits
// (github.com/go-chi/httprate's LimitCounter) that the replicas share in
// Redis, for mcphttp's limits (see mcphttp.WithEventStore): each limit
// gets one. httprate asks its counter under one lock for every request,
// so a round trip to Redis per request would serialize the replica's
// requests; this counter answers from memory what it last read from Redis
// plus what it counted since, and every rateSync adds its counts to Redis
// and reads the service's back (one pipeline for every client it saw).
// Without Redis it goes on counting alone.
func (e *events) RateCounter() httprate.LimitCounter {
	c := newRateCounter(e.rdb, e.cfg.prefix+"rate:")
	c.stop, c.running = e.stop, &e.running
	return c
}

type rateCounter struct {
	rdb     redis.UniversalClient
	prefix  string
	stop    <-chan struct{} // the event store closed
	running *sync.WaitGroup

	mu      sync.Mutex
	window  time.Duration
	windows map[rateKey]*rateWindow
	started bool
}

type rateKey struct {
	key   string
	start int64 // the window's start, unix seconds
}

// rateWindow is one client's count in one window: what the service had
// at the last sync, and what this replica counted since.
type rateWindow struct{ service, pending int }

func newRateCounter(rdb redis.UniversalClient, prefix string) *rateCounter {
	return &rateCounter{rdb: rdb, prefix: prefix, windows: map[rateKey]*rateWindow{}}
}

// Config names the counter's keys by its limit and window, so that the
// replicas' counters of one limit add up, and another limit's (the bytes
// beside the requests, or a new setting during a rollout) stay apart.
func (c *rateCounter) Config(limit int, window time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.window = window
	c.prefix += strconv.Itoa(limit) + "/" + window.String() + ":"
	if !c.started {
		c.started = true
		c.running.Go(c.sync) // until the event store closes
	}
}

func (c *rateCounter) Increment(key string, w time.Time) error { return c.IncrementBy(key, w, 1) }

func (c *rateCounter) IncrementBy(key string, w time.Time, n int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at(key, w).pending += n
	return nil
}

func (c *rateCounter) Get(key string, cur, prev time.Time) (int, int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a, b := c.at(key, cur), c.at(key, prev)
	return a.service + a.pending, b.service + b.pending, nil
}

// at is key's count in the window starting at w. Called with c.mu held.
func (c *rateCounter) at(key string, w time.Time) *rateWindow {
	k := rateKey{key, w.Unix()}
	rw := c.windows[k]
	if rw == nil {
		rw = &rateWindow{}
		c.windows[k] = rw
	}
	return rw
}

// sync adds the pending counts to Redis and reads the service's back,
// every rateSync; it forgets the windows older than the previous one.
func (c *rateCounter) sync() {
	tick := time.NewTicker(rateSync)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-c.stop:
			return
		}
		c.mu.Lock()
		window := c.window
		cutoff := time.Now().Add(-2 * window).Unix()
		type item struct {
			k       rateKey
			pending int
		}
		items := make([]item, 0, len(c.windows))
		for k, rw := range c.windows {
			if k.start < cutoff {
				delete(c.windows, k)
				continue
			}
			items = append(items, item{k, rw.pending})
		}
		c.mu.Unlock()
		if len(items) == 0 {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), rateSync*5)
		pipe := c.rdb.Pipeline()
		totals := make([]func() (int64, error), len(items))
		for i, it := range items {
			key := c.prefix + strconv.FormatInt(it.k.start, 10) + ":" + it.k.key
			if it.pending == 0 {
				// Only read: INCRBY 0 would make a key without an expiry
				// for every window a client was quiet in.
				get := pipe.Get(ctx, key)
				totals[i] = func() (int64, error) {
					n, err := get.Int64()
					if errors.Is(err, redis.Nil) {
						return 0, nil
					}
					return n, err
				}
				continue
			}
			incr := pipe.IncrBy(ctx, key, int64(it.pending))
			pipe.Expire(ctx, key, 3*window)
			totals[i] = incr.Result
		}
		_, _ = pipe.Exec(ctx) // each command's own error counts below: what reached Redis is not added again
		cancel()
		c.mu.Lock()
		for i, it := range items {
			n, err := totals[i]()
			if rw := c.windows[it.k]; rw != nil && err == nil { // else the counts stay pending, added when Redis is back
				rw.pending -= it.pending // what came since stays pending
				rw.service = int(n)      // the service's, this replica's counts included
			}
		}
		c.mu.Unlock()
	}
}
