package core

import (
	"fmt"
	"io"
	"log/slog"
	"time"
)

// Option configures a Server.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	taskStore   TaskStore
	taskLease   time.Duration
	strict      bool
	logger      *slog.Logger
	callTimeout time.Duration
	maxSessions int
	idleTimeout time.Duration
	maxDepth    int
	batches     bool
	validate    bool
	tap         Tap
	stateKey    []byte
	relay       Relay
	// previousStateKeys open states sealed before a rotation.
	previousStateKeys [][]byte
	stateTTL          time.Duration
	maxInflight       int

	taskDelay  time.Duration
	observer   Observer
	taskRunner TaskSupporter
	sessions   SessionStore

	maxClientSessions int
	clientSessionsSet bool
	maxClientInflight int
	maxPending        int
	outputPerStream   int64
	outputTotal       int64
}

func defaults() config {
	return config{
		logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		callTimeout: 60 * time.Second,
		maxSessions: 10000,
		idleTimeout: 30 * time.Minute,
		maxDepth:    128,
		batches:     true,
		validate:    true,
		maxInflight: 256,

		stateTTL:          DefaultStateTTL,
		taskDelay:         DefaultTaskDelay,
		maxClientInflight: 1024,
		maxPending:        64,
		outputPerStream:   DefaultOutputPerStream,
		outputTotal:       DefaultOutputTotal,
	}
}

// Default bounds of the output a server holds for clients that do not
// read it (WithOutputLimits).
const (
	DefaultOutputPerStream = 8 << 20  // 8 MiB per stream or socket
	DefaultOutputTotal     = 64 << 20 // 64 MiB for the whole process
)

// WithStrict makes the server validate every message it sends against the
// negotiated revision's schema too. A failure is a bug of the handler: the
// request is answered -32603 and the failure is logged.
func WithStrict(on bool) Option { return optionFunc(func(c *config) { c.strict = on }) }

// WithLogger sets where the server logs (never stdout: stdio owns it).
func WithLogger(l *slog.Logger) Option { return optionFunc(func(c *config) { c.logger = l }) }

// WithCallTimeout bounds how long a server-to-client request waits for the
// client's answer (default 60s; 0: as long as the call lasts).
func WithCallTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.callTimeout = d })
}

// WithMaxSessions caps the number of live sessions (default 10000).
func WithMaxSessions(n int) Option { return optionFunc(func(c *config) { c.maxSessions = n }) }

// WithSessionIdleTimeout closes sessions unused for d (default 30m; 0 never).
func WithSessionIdleTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.idleTimeout = d })
}

// WithMaxDepth bounds the nesting of incoming JSON (default 128).
func WithMaxDepth(n int) Option { return optionFunc(func(c *config) { c.maxDepth = n }) }

// WithBatches allows or refuses JSON-RPC batches (default allowed).
func WithBatches(on bool) Option { return optionFunc(func(c *config) { c.batches = on }) }

// WithValidation turns the schema check of incoming messages off (it is on
// by default). Only benchmarks that measure its cost should do that: without
// it, malformed params reach handlers as decode errors, not as -32602 with a
// field.
func WithValidation(on bool) Option { return optionFunc(func(c *config) { c.validate = on }) }

// Direction says which way a message went.
type Direction string

const (
	ClientToServer Direction = "c2s"
	ServerToClient Direction = "s2c"
)

// Tap sees every message of every session as it crosses the server: bodies
// as received (a batch is one array), and each message the server sends. It
// must not block; it is called from the goroutines that handle messages.
type Tap interface {
	Message(session string, dir Direction, msg []byte)
}

// WithTap records the traffic, e.g. for `mcpstack serve --record`.
func WithTap(t Tap) Option { return optionFunc(func(c *config) { c.tap = t }) }

// WithStateKey sets the secret the requestState of input-required results
// is sealed with (the AES-256-GCM key is derived from it with HKDF), and
// the secrets it replaced, whose states are still opened: keep a previous
// one for the state TTL after a rotation. Replicas behind one load
// balancer need the same secrets; by default each Server draws a random one.
// Each secret must be at least MinStateKey bytes: a shorter one panics
// here, as a guessable key would let anyone forge a state.
func WithStateKey(key []byte, previous ...[]byte) Option {
	for i, k := range append([][]byte{key}, previous...) {
		if len(k) < MinStateKey {
			which := "the key"
			if i > 0 {
				which = fmt.Sprintf("previous key %d", i)
			}
			panic(fmt.Sprintf("WithStateKey: %s is %d bytes; a requestState secret needs at least %d", which, len(k), MinStateKey))
		}
	}
	return optionFunc(func(c *config) { c.stateKey, c.previousStateKeys = key, previous })
}

// MinStateKey is the shortest secret WithStateKey takes, in bytes: the
// AES key HKDF derives from it is 256 bits.
const MinStateKey = 32

// WithStateTTL sets how long a requestState may be given back (default
// DefaultStateTTL; 0 keeps it); later it is refused with -32602.
func WithStateTTL(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d != 0 {
			c.stateTTL = d
		}
	})
}

// WithMaxInflight caps the requests one session may have in flight at once
// (default 256); a request over the cap is answered at once with an error
// and the session goes on. It bounds what one client can make the server
// hold, on every transport.
func WithMaxInflight(n int) Option { return optionFunc(func(c *config) { c.maxInflight = n }) }

// DefaultTaskDelay is how long a call that may run as a task of the tasks
// extension runs before it becomes one (WithTaskDelay).
const DefaultTaskDelay = 100 * time.Millisecond

// WithTaskDelay sets how long the server lets a tool call that may run as a
// task of the 2026-07-28 tasks extension run before it answers with a task
// (default DefaultTaskDelay): a call that ends sooner is answered with its
// result, one that asks the client for input sooner with an input-required
// result (the request is retried with the answers), and one still running
// becomes a task. Under that extension the server decides, the client only
// declares that it can follow a task. 0 makes every such call a task at
// once.
func WithTaskDelay(d time.Duration) Option {
	return optionFunc(func(c *config) { c.taskDelay = max(d, 0) })
}

// WithMaxClientSessions caps the sessions one client may hold open at once
// (listen streams included), so that one user cannot take every session of
// WithMaxSessions from the others: a client is a principal when requests
// are authenticated, an address otherwise. Default: a tenth of the session
// cap (at least 10, at most the cap); 0: no per-client cap. Over it,
// NewSession fails with ErrQuota.
func WithMaxClientSessions(n int) Option {
	return optionFunc(func(c *config) { c.maxClientSessions, c.clientSessionsSet = n, true })
}

// WithMaxClientInflight caps the requests one client may have in flight
// over all its sessions and stateless requests (default 1024; 0: none);
// over it a request is answered -32000 at once.
func WithMaxClientInflight(n int) Option {
	return optionFunc(func(c *config) { c.maxClientInflight = n })
}

// WithMaxPendingRequests caps the server-to-client requests (sampling,
// elicitation, roots) one session may be waiting on (default 64); past it
// the handler's call fails at once.
func WithMaxPendingRequests(n int) Option {
	return optionFunc(func(c *config) { c.maxPending = n })
}

// WithOutputLimits bounds the bytes written for clients and not yet taken
// by them: perStream in progress on one stream or socket (more waits for
// it: backpressure), total handed to all of them together, waiting or not
// (defaults DefaultOutputPerStream and DefaultOutputTotal). Over the
// total, the stream holding the most is closed. A client that reads
// stalls nobody; one that does not stalls only itself, and loses its
// stream when a write waits past the transport's write timeout.
func WithOutputLimits(perStream, total int64) Option {
	return optionFunc(func(c *config) { c.outputPerStream, c.outputTotal = perStream, total })
}

// WithTaskRunner runs the tools ts says may run as tasks as tasks (package
// server passes the handler when it implements TaskSupporter).
func WithTaskRunner(ts TaskSupporter) Option {
	return optionFunc(func(c *config) { c.taskRunner = ts })
}

// WithSessionStore keeps the sessions' state in st (default: in the
// process, MemorySessions).
func WithSessionStore(st SessionStore) Option {
	return optionFunc(func(c *config) { c.sessions = st })
}
