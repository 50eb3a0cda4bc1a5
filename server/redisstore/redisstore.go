// Package redisstore keeps what replicas of one MCP service must share in
// Redis: the sessions (a server.SessionStore, which also relays a
// client's messages to the replica that waits for them) and the events of
// resumable streams (an mcphttp.EventStore). With these, any
// replica behind a load balancer serves a session another opened, a
// client whose stream broke resumes it at any replica with Last-Event-ID,
// and the answer to a server's request (sampling, elicitation) or a
// cancellation reaches the call wherever the client sent it.
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"}) // github.com/redis/go-redis/v9
//	srv := server.New(handler, server.WithSessionStore(redisstore.NewSessions(rdb)))
//	err := mcphttp.ListenAndServe(ctx, addr, srv, mcphttp.WithEventStore(redisstore.NewEvents(rdb)))
//
// The event store writes behind and renews leases from goroutines of its
// own: it is an io.Closer, to close after the server that uses it (Close
// writes what is queued), before the Redis client.
//
// It is built on github.com/redis/go-redis/v9, the Redis project's own Go
// client: a redis.UniversalClient is a single server, a Sentinel set or a
// Cluster alike. Every key a store writes has an expiry and starts with
// the prefix (WithPrefix, default "mcpstack:"); a session's keys share a
// hash tag, so that a Cluster keeps them on one shard.
package redisstore

import (
	"context"
	"time"
)

// Option configures a store.
type Option func(*config)

type config struct {
	prefix     string
	maxIdle    time.Duration // a session state without Expires
	maxEvents  int
	maxAge     time.Duration
	maxBytes   int64
	opTimeout  time.Duration
	background func() (context.Context, context.CancelFunc)
}

// Defaults of the stores: the event bounds are the in-memory store's, so
// that a replica on Redis keeps what one in memory keeps.
const (
	defaultPrefix           = "mcpstack:"
	defaultEventsPerSession = 1024
	defaultEventAge         = 5 * time.Minute
	defaultEventBytes       = 8 << 20 // per session
	// defaultSessionTTL is how long a session state that says nothing of
	// its expiry (a server without an idle timeout) is kept after its
	// last save: every key has a bound.
	defaultSessionTTL = 24 * time.Hour
)

// WithPrefix starts every key with prefix (default "mcpstack:"), so that
// several services (or tests) share one Redis.
func WithPrefix(prefix string) Option { return func(c *config) { c.prefix = prefix } }

// WithEventLimits bounds the events kept per session: at most n events,
// none older than age, at most bytes of data (0 keeps the default: 1024
// events, 5 minutes, 8 MiB, the in-memory store's; bytes < 0: no bound in
// bytes). What falls out cannot
// be replayed, and a replay says so (mcphttp.ErrEventsGone).
func WithEventLimits(n int, age time.Duration, bytes int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxEvents = n
		}
		if age > 0 {
			c.maxAge = age
		}
		switch {
		case bytes > 0:
			c.maxBytes = bytes
		case bytes < 0:
			c.maxBytes = 0 // the scripts take 0 for no bound
		}
	}
}

func newConfig(opts []Option) config {
	c := config{prefix: defaultPrefix, maxIdle: defaultSessionTTL, maxEvents: defaultEventsPerSession,
		maxAge: defaultEventAge, maxBytes: defaultEventBytes, opTimeout: 5 * time.Second}
	for _, o := range opts {
		o(&c)
	}
	c.background = func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), c.opTimeout)
	}
	return c
}

// key is the prefix, the kind and the session as a hash tag.
func (c *config) key(kind, session string) string {
	return c.prefix + kind + ":{" + session + "}"
}
