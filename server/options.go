package server

import (
	"log/slog"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
)

// Option configures a Server.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config collects the core's options.
type config struct{ core []core.Option }

func coreOption(o core.Option) Option {
	return optionFunc(func(c *config) { c.core = append(c.core, o) })
}

// WithStrict makes the server validate every message it sends against the
// negotiated revision's schema too. A failure is a bug of the handler: the
// request is answered -32603 and the failure is logged.
func WithStrict(on bool) Option { return coreOption(core.WithStrict(on)) }

// WithLogger sets where the server logs (never stdout: stdio owns it).
// The default discards.
func WithLogger(l *slog.Logger) Option { return coreOption(core.WithLogger(l)) }

// WithValidation turns the schema check of incoming messages off (it is on
// by default). Only benchmarks that measure its cost should do that:
// without it, malformed params reach handlers as decode errors, not as
// -32602 with a field.
func WithValidation(on bool) Option { return coreOption(core.WithValidation(on)) }

// WithBatches allows or refuses JSON-RPC batches (default allowed; only
// 2025-03-26 has them).
func WithBatches(on bool) Option { return coreOption(core.WithBatches(on)) }

// WithStateKey sets the secret the requestState of input-required results
// is sealed with (the AES-256-GCM key is derived from it with HKDF), and
// the secrets it replaced, whose states are still opened: keep a previous
// one for the state TTL (an hour by default) after a rotation. Replicas
// behind one load balancer need the same secrets; by default each Server
// draws a random one. Each secret must be at least 32 bytes; a shorter
// one panics.
func WithStateKey(key []byte, previous ...[]byte) Option {
	return coreOption(core.WithStateKey(key, previous...))
}

// WithTaskDelay sets how long the server lets a tool call that may run as
// a task of the 2026-07-28 tasks extension run before it answers with a
// task (default 100ms): a call that ends sooner is answered with its
// result, one that asks the client for input sooner with an
// input-required result, and one still running becomes a task. 0 makes
// every such call a task at once.
func WithTaskDelay(d time.Duration) Option { return coreOption(core.WithTaskDelay(d)) }

// WithTaskLease sets how long the record of a running task counts as
// running without its heartbeat (a third of it): after that, another
// process on the same durable store takes the task for dead (default 90s).
func WithTaskLease(d time.Duration) Option { return coreOption(core.WithTaskLease(d)) }

// Limits bound what the server holds for its clients, so that no client
// can take what the others need. A zero field keeps its default (given
// in parentheses); a negative one turns that bound off, except Depth and
// RequestState, which are always bounded (a negative one keeps the
// default).
type Limits struct {
	Sessions int // live sessions, listen streams included (10000)
	// SessionsPerClient is the share of Sessions one client may hold: a
	// client is a principal when requests are authenticated, an address
	// otherwise (a tenth of Sessions, at least 10, at most Sessions; none
	// when Sessions is off).
	SessionsPerClient int
	SessionIdle       time.Duration // a session unused this long is closed (30m; not a stdio one, which lives as long as its client)
	// InflightPerSession and InflightPerClient cap the requests in flight
	// at once (256 and 1024); over them a request is answered at once with
	// an error, and the session goes on.
	InflightPerSession, InflightPerClient int
	// PendingPerSession caps the server-to-client requests (sampling,
	// elicitation, roots) one session may wait on (64); past it the
	// handler's call fails at once.
	PendingPerSession int
	// AnswerTimeout bounds how long a server-to-client request waits for
	// the client's answer (60s; off: as long as the call lasts).
	AnswerTimeout time.Duration
	Depth         int // nesting of incoming JSON (128)
	// RequestState bounds how long the requestState of an input-required
	// result may be given back (1h); later it is refused with -32602.
	RequestState time.Duration
	// OutputPerStream and Output bound the bytes written for clients and
	// not yet taken by them: in progress on one stream or socket (more
	// waits: backpressure; 8 MiB), and handed to all of them together (64
	// MiB; over it, the stream holding the most is closed).
	OutputPerStream, Output int64
}

// WithLimits sets the bounds l names; its zero fields keep their defaults.
func WithLimits(l Limits) Option {
	return optionFunc(func(c *config) {
		c.core = bound(c.core, l.Sessions, core.WithMaxSessions)
		c.core = bound(c.core, l.SessionsPerClient, core.WithMaxClientSessions)
		c.core = bound(c.core, l.SessionIdle, core.WithSessionIdleTimeout)
		c.core = bound(c.core, l.InflightPerSession, core.WithMaxInflight)
		c.core = bound(c.core, l.InflightPerClient, core.WithMaxClientInflight)
		c.core = bound(c.core, l.PendingPerSession, core.WithMaxPendingRequests)
		c.core = bound(c.core, l.AnswerTimeout, core.WithCallTimeout)
		c.core = bound(c.core, max(l.Depth, 0), core.WithMaxDepth)        // always bounded
		c.core = bound(c.core, max(l.RequestState, 0), core.WithStateTTL) // likewise
		if l.OutputPerStream != 0 || l.Output != 0 {
			c.core = append(c.core, core.WithOutputLimits(orDefault(l.OutputPerStream, core.DefaultOutputPerStream), orDefault(l.Output, core.DefaultOutputTotal)))
		}
	})
}

// bound adds the core option of a Limits field: none where it is zero
// (the default stays), the bound turned off (0 to the core) where it is
// negative.
func bound[T ~int | ~int64](opts []core.Option, v T, option func(T) core.Option) []core.Option {
	if v == 0 {
		return opts
	}
	return append(opts, option(max(v, 0)))
}

// orDefault is a Limits field's value for the core where another field
// of its option is set: def where it is zero, 0 (off) where negative.
func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return max(v, 0)
}
