package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpstack/mcpstack/internal/addrfile"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/guard"
	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/internal/logbuf"
	"github.com/mcpstack/mcpstack/internal/logfmt"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/auth"
	"github.com/mcpstack/mcpstack/server/redisstore"
	"github.com/mcpstack/mcpstack/server/stdio"
	"github.com/mcpstack/mcpstack/server/taskstore"
)

// serveConfig is everything `mcpstack serve` can be told.
type serveConfig struct {
	httpAddr     string
	stdio        bool
	profile      string
	strict       bool
	validate     bool
	responseMode string
	addrFile     string
	maxBody      int64
	maxSessions  int
	idleTimeout  time.Duration
	pageSize     int
	logLevel     string
	logFormat    string
	drain        time.Duration
	// notReadyDelay is how long /readyz fails before draining, on SIGTERM.
	notReadyDelay time.Duration
	auth          auth.Config
	chat          chatConfig
	stateless     bool
	record        string
	metricsAddr   string
	metrics       bool
	debugAddr     string // --debug-addr: pprof, loopback only
	accessLog     bool
	obs           *observe.Observer // made before the profile, which may time its calls with it
	taskStore     string
	taskDelay     time.Duration
	redisURL      string        // --redis-url: sessions and stream events shared by replicas
	stateKeyFile  string        // --state-key-file: requestState's secret, shared by replicas
	prevStateKey  string        // --state-key-previous-file: the secret a rotation replaced
	proxies       prefixList    // --trusted-proxies
	redis         *redis.Client // opened from redisURL
	maxInflight   int
	limits        limitsConfig
}

// limitsConfig is what bounds one client and the whole process under abuse.
type limitsConfig struct {
	clientSessions  int
	clientInflight  int
	rateLimit       string
	byteRateLimit   string
	outputPerStream int64
	outputTotal     int64
	eventBytes      int64
	eventBytesTotal int64
	writeTimeout    time.Duration
	bytes           httpx.RateLimit // parsed byteRateLimit
}

// serverLimits are the flags' bounds as server.Limits, where 0 keeps a
// default and a negative value is none: a flag's 0 is none.
func (c serveConfig) serverLimits() server.Limits {
	none := func(n int64) int64 {
		if n == 0 {
			return -1
		}
		return n
	}
	l := server.Limits{
		Sessions:           int(none(int64(c.maxSessions))),
		SessionIdle:        time.Duration(none(int64(c.idleTimeout))),
		InflightPerSession: int(none(int64(c.maxInflight))),
		InflightPerClient:  int(none(int64(c.limits.clientInflight))),
		OutputPerStream:    none(c.limits.outputPerStream),
		Output:             none(c.limits.outputTotal),
	}
	if c.limits.clientSessions >= 0 { // -1: the default share
		l.SessionsPerClient = int(none(int64(c.limits.clientSessions)))
	}
	return l
}

func (l *limitsConfig) register(fl *flag.FlagSet) {
	fl.IntVar(&l.clientSessions, "max-client-sessions", -1, "most sessions (and listen streams) one client may hold open; a client is a token's principal, or an address without --auth (-1: a tenth of --max-sessions; 0: no cap; 429 above)")
	fl.IntVar(&l.clientInflight, "max-client-inflight", 1024, "most requests one client may have in flight over all its sessions (0: no cap; -32000 above)")
	fl.StringVar(&l.rateLimit, "rate-limit", "1000/10s", "most HTTP requests (and WebSocket frames) per client, as `N/DURATION` (0: none; 429 with Retry-After above)")
	fl.StringVar(&l.byteRateLimit, "rate-limit-bytes", "32MiB/10s", "most bytes of requests (and WebSocket frames) per client, as `N/DURATION` with N in bytes or KiB/MiB/GiB (0: none; 429 with Retry-After above)")
	fl.Int64Var(&l.outputPerStream, "max-output-per-stream", core.DefaultOutputPerStream, "most `bytes` one stream or socket writes at once; more waits for its client to read (backpressure; 0: none)")
	fl.Int64Var(&l.outputTotal, "max-output", core.DefaultOutputTotal, "most `bytes` handed to all streams and not yet read (the streams holding the most are closed above; 0: none)")
	fl.Int64Var(&l.eventBytes, "max-event-bytes-per-session", streamable.DefaultEventBytes, "most `bytes` of stream events kept per session for resumption (the oldest go first; a resume past them gets 410; 0: none)")
	fl.Int64Var(&l.eventBytesTotal, "max-event-bytes", streamable.DefaultEventBytesTotal, "most `bytes` of stream events kept for all sessions (the session holding the most loses its oldest first; 0: none; with --redis-url only the bound per session holds)")
	fl.DurationVar(&l.writeTimeout, "write-timeout", httpx.DefaultWriteTimeout, "longest an answer, a write to a stream or socket, or 64 KB of a large answer, may wait on its client (it is closed after)")
}

const serveUsage = `Usage: mcpstack serve [flags]

Serve MCP over Streamable HTTP (default, at http://ADDR/mcp) or stdio.
Every incoming message is validated against the schema of the protocol
revision the client negotiated (%s).

Every flag can also be set by an environment variable: MCPSTACK_ and the
flag name in upper case with - as _ (MCPSTACK_HTTP, MCPSTACK_PROFILE, ...).
Flags win over the environment.

Examples:
  mcpstack serve --profile conformance --http 127.0.0.1:8000
  mcpstack serve --stdio --profile conformance

Flags:
`

func serveCommand(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("serve", flag.ContinueOnError)
	fl.SetOutput(stderr)
	names := profileNames()
	var c serveConfig
	fl.StringVar(&c.httpAddr, "http", "127.0.0.1:8000", "serve Streamable HTTP on `ADDR` (host:port; port 0 picks a free one)")
	fl.BoolVar(&c.stdio, "stdio", false, "serve one session over stdin/stdout instead of HTTP (logs go to stderr)")
	fl.StringVar(&c.profile, "profile", "chat", "the handler to serve: "+strings.Join(names, ", "))
	fl.BoolVar(&c.strict, "strict", false, "also validate every outgoing message; an invalid one is a bug, answered -32603 and logged")
	fl.BoolVar(&c.validate, "validate", true, "validate incoming messages (turn off only to measure what validation costs)")
	fl.StringVar(&c.responseMode, "response-mode", "auto", "answer POSTed requests as JSON until the call sends something else (`auto`), always as an event stream (sse), or always as JSON (json)")
	fl.StringVar(&c.addrFile, "addr-file", "", "write the bound host:port to `FILE` once listening")
	fl.Int64Var(&c.maxBody, "max-body", 4<<20, "largest accepted HTTP body in `bytes` (413 above)")
	fl.IntVar(&c.maxSessions, "max-sessions", 10000, "most live sessions (503 above; 0: none)")
	fl.IntVar(&c.maxInflight, "max-inflight", 256, "most requests one session may have in flight (-32000 above; 0: none, and a socket then serves 256 at once)")
	fl.DurationVar(&c.idleTimeout, "session-idle-timeout", 30*time.Minute, "close sessions idle this long (0: never; stdio's lives as long as its client)")
	fl.IntVar(&c.pageSize, "page-size", 50, "items per page of list results")
	fl.StringVar(&c.logLevel, "log-level", "info", "log `level`: debug, info, warn, error")
	fl.StringVar(&c.logFormat, "log-format", "text", "log `format`: text or json (always on stderr)")
	fl.DurationVar(&c.drain, "shutdown-timeout", 20*time.Second, "on SIGTERM, wait this long for calls in flight (with --shutdown-delay, keep the sum under an orchestrator's grace period: Kubernetes' default is 30s)")
	fl.DurationVar(&c.notReadyDelay, "shutdown-delay", 5*time.Second, "on SIGTERM, answer /readyz 503 and keep serving this long before draining, so that a load balancer stops sending first (Ctrl-C skips it)")
	fl.BoolVar(&c.stateless, "stateless", false, "keep no sessions over Streamable HTTP: every POST stands alone; server-to-client requests (sampling, elicitation, roots) then fail with a clear error")
	fl.DurationVar(&c.taskDelay, "task-delay", core.DefaultTaskDelay, "how long a tool call that may run as a task of the 2026-07-28 tasks extension runs before the server answers with a task (0: at once)")
	fl.StringVar(&c.taskStore, "task-store", "memory", "where tasks are kept (2025-11-25 tasks/*, the 2026-07-28 tasks extension): memory, sqlite (tasks.db in --data-dir), postgres (--postgres-dsn or MCPSTACK_POSTGRES_DSN) or redis (--redis-url); a durable store keeps a finished task's result readable across restarts, until its TTL; a user keeps at most their newest 100 finished tasks and 64 MiB of results")
	fl.StringVar(&c.redisURL, "redis-url", "", "keep sessions, the events of resumable streams and the per-client quotas in Redis at `URL` (redis://[user:password@]host:port/db, rediss:// for TLS; Redis 6.2 or later), and carry messages between replicas through it, so that replicas behind a load balancer serve each other's sessions; give a password through MCPSTACK_REDIS_URL, not the command line, which ps shows")
	fl.StringVar(&c.stateKeyFile, "state-key-file", "", "seal the requestState of 2026-07-28 input-required results with the secret in `FILE` (at least 32 bytes; or MCPSTACK_STATE_KEY holds it), the same on every replica; without it each process draws its own and refuses the others' states")
	fl.StringVar(&c.prevStateKey, "state-key-previous-file", "", "also open states sealed with the secret in `FILE` (or MCPSTACK_STATE_KEY_PREVIOUS), the one --state-key-file replaced: keep it for an hour, the states' lifetime, after a rotation")
	fl.Var(&c.proxies, "trusted-proxies", "believe the client address that a reverse proxy at these `CIDRS` (comma-separated; an address alone is one host) forwards in X-Forwarded-For, for the per-client quotas of clients without a token; from other addresses the headers are ignored")
	fl.BoolVar(&c.metrics, "metrics", true, "count Prometheus metrics and serve them (see --metrics-addr); false counts none")
	fl.StringVar(&c.metricsAddr, "metrics-addr", "", "serve Prometheus metrics at `ADDR`/metrics on a listener of their own (default: /metrics on the HTTP listener; stdio serves them only with this)")
	fl.StringVar(&c.debugAddr, "debug-addr", "", "serve the Go runtime's profiles (pprof) at `ADDR`/debug/pprof/ on a listener of their own; loopback addresses only")
	fl.BoolVar(&c.accessLog, "access-log", true, "log one line per request at info (method, target, duration, outcome, a digest of the session id); the session id and arguments at debug")
	fl.StringVar(&c.record, "record", "", "append every message to `FILE`, one JSON line each (schema/ext/RecordedMessage.json), for mcpstack validate")
	c.limits.register(fl)
	c.auth.RegisterFlags(fl)
	c.chat.register(fl)
	fl.Usage = func() {
		fmt.Fprintf(fl.Output(), serveUsage, revisionRange())
		fl.PrintDefaults()
	}
	if err := applyEnv(fl, "MCPSTACK_"); err != nil {
		fmt.Fprintln(stderr, "mcpstack serve:", err)
		return 2
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fl.SetOutput(stdout) // help is asked for: it goes to stdout, once
			fl.Usage()
			return 0
		}
	}
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "mcpstack serve: unexpected arguments %q\n", fl.Args())
		return 2
	}
	if c.debugAddr == "" {
		// Only --debug-addr serves the heap profile: without it, sampling
		// allocations is work and memory (stacks kept per sample) for
		// nobody, so it stops before serve allocates much. A program that
		// links no profiler gets this from the linker; serve links
		// net/http/pprof for --debug-addr.
		runtime.MemProfileRate = 0
	}
	if q := c.chat.quota; q.Conversations <= 0 || q.Bytes <= 0 {
		fmt.Fprintf(stderr, "mcpstack serve: --user-max-conversations and --user-max-bytes must be positive (got %d and %d)\n", q.Conversations, q.Bytes)
		return 2
	}
	p, ok := profiles[c.profile]
	if !ok {
		fmt.Fprintf(stderr, "mcpstack serve: unknown profile %q (have %s)\n", c.profile, strings.Join(names, ", "))
		return 2
	}
	mode := mcphttp.ResponseMode(c.responseMode)
	if mode != mcphttp.ResponseAuto && mode != mcphttp.ResponseSSE && mode != mcphttp.ResponseJSON {
		fmt.Fprintf(stderr, "mcpstack serve: --response-mode must be auto, sse or json, not %q\n", c.responseMode)
		return 2
	}
	log, logBuf, err := newLogger(stderr, c.logLevel, c.logFormat)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack serve:", err)
		return 2
	}
	defer logBuf.Close() // last: every line is out before serve returns
	stderr = logBuf      // what is written directly from here on keeps its place among the log's lines
	if c.stdio && c.auth.Mode != auth.ModeOff {
		log.Info("stdio needs no token: --auth applies to HTTP only")
	}
	if !c.stdio {
		if err := auth.CheckBind(c.httpAddr, c.auth.Mode, c.auth.Insecure); err != nil {
			fmt.Fprintln(stderr, "mcpstack serve:", err)
			return 2
		}
	}
	if !c.metrics && c.metricsAddr != "" {
		fmt.Fprintln(stderr, "mcpstack serve: --metrics-addr serves the metrics that --metrics=false turns off")
		return 2
	}
	obs, labelNames, stopObserving, err := newObserver(context.Background(), c, log)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack serve:", err)
		return 2
	}
	defer stopObserving() // after srv.Close: the last spans are flushed
	c.obs = obs
	b, err := p.build(context.Background(), c, log)
	if err != nil {
		fmt.Fprintf(stderr, "mcpstack serve: profile %s: %v\n", c.profile, err)
		return 1
	}
	if b.close != nil {
		defer b.close() // runs after srv.Close
	}
	if c.taskDelay < 0 {
		fmt.Fprintln(stderr, "mcpstack serve: --task-delay must not be negative:", c.taskDelay)
		return 2
	}
	if c.redisURL != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c.redis, err = openRedis(ctx, c.redisURL, log)
		cancel()
		if err != nil {
			fmt.Fprintln(stderr, "mcpstack serve: --redis-url:", err)
			return 1
		}
		defer c.redis.Close() // after srv.Close
		log.Info("sessions and stream events in Redis", "redis", redactRedisURL(c.redisURL))
	}
	ts, closeTasks, err := openTaskStore(c)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack serve: --task-store:", err)
		return 2
	}
	defer closeTasks() // after srv.Close
	opts := append([]server.Option{
		server.WithLogger(log),
		server.WithStrict(c.strict),
		server.WithValidation(c.validate),
		server.WithLimits(c.serverLimits()),
	}, b.options...)
	if c.redis != nil {
		opts = append(opts, server.WithSessionStore(redisstore.NewSessions(c.redis)))
	}
	if ts != nil {
		opts = append(opts, server.WithTaskStore(ts))
	}
	opts = append(opts, server.WithTaskDelay(c.taskDelay))
	key, previous, err := stateKeys(c.stateKeyFile, c.prevStateKey)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack serve: --state-key-file:", err)
		return 2
	}
	if key != nil {
		opts = append(opts, server.WithStateKey(key, previous...))
	}
	rate, err := httpx.ParseRateLimit(c.limits.rateLimit)
	if err != nil {
		fmt.Fprintln(stderr, "mcpstack serve: --rate-limit:", err)
		return 2
	}
	if c.limits.bytes, err = httpx.ParseRateLimit(c.limits.byteRateLimit); err != nil {
		fmt.Fprintln(stderr, "mcpstack serve: --rate-limit-bytes:", err)
		return 2
	}
	var recorder *record.Recorder
	if c.record != "" {
		rec, err := record.Create(c.record)
		if err != nil {
			fmt.Fprintln(stderr, "mcpstack serve: --record:", err)
			return 2
		}
		defer func() { // after srv.Close: nothing is lost
			if err := rec.Close(); err != nil {
				log.Error("record", "err", err)
			}
		}()
		opts = append(opts, server.WithTap(rec))
		recorder = rec
	}
	if r, ok := b.handler.(interface {
		Registered(method, name string) bool
	}); ok {
		*labelNames = r.Registered // the labels: only registered tools and prompts
	}
	if obs != nil {
		opts = append(opts, server.WithObserver(obs))
	}
	srv := server.New(b.handler, opts...)
	if obs != nil {
		obs.Watch(srv)
	}
	if recorder != nil {
		// A session's end is recorded too: nothing may follow it.
		srv.OnSessionClosed(func(id string) { recorder.Shutdown(id, server.ServerToClient) })
	}
	defer srv.Close()
	ctx, stop := signalContext()
	defer stop()
	if c.metricsAddr != "" {
		stopMetrics, err := serveMetrics(c.metricsAddr, obs, log)
		if err != nil {
			fmt.Fprintln(stderr, "mcpstack serve: --metrics-addr:", err)
			return 1
		}
		defer stopMetrics()
	}
	if c.debugAddr != "" {
		stopDebug, err := serveDebug(c.debugAddr, log)
		if err != nil {
			fmt.Fprintln(stderr, "mcpstack serve: --debug-addr:", err)
			return 2
		}
		defer stopDebug()
	}
	if c.stdio {
		log.Info("serving MCP on stdio", "profile", c.profile)
		if err := stdio.Serve(ctx, srv, os.Stdin, os.Stdout); err != nil && !errors.Is(err, context.Canceled) {
			log.Error("stdio", "err", err)
			return 1
		}
		return 0
	}
	if err := serveHTTP(ctx, c, srv, obs, mode, rate, log); err != nil {
		log.Error("http", "err", err)
		return 1
	}
	return 0
}

// serveHTTP listens, serves until ctx ends, then drains: GET streams close,
// calls in flight get up to the shutdown timeout to finish.
func serveHTTP(ctx context.Context, c serveConfig, srv *server.Server, obs *observe.Observer, mode mcphttp.ResponseMode, rate httpx.RateLimit, log *slog.Logger) error {
	c.auth.Logger = log
	az, err := auth.New(ctx, c.auth)
	if err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if az.Mode == auth.ModeOff && !guard.IsLoopbackAddr(c.httpAddr) {
		log.Warn("serving without authentication on a non-loopback address (--insecure)", "addr", c.httpAddr)
	}
	ln, err := net.Listen("tcp", c.httpAddr)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	lim := c.limits
	opts := []mcphttp.Option{
		mcphttp.WithAuth(az), mcphttp.WithMaxBody(c.maxBody), mcphttp.WithResponseMode(mode),
		mcphttp.WithEventLimits(lim.eventBytes, lim.eventBytesTotal), mcphttp.WithWriteTimeout(lim.writeTimeout),
		mcphttp.WithRateLimit(rate.Requests, rate.Window), mcphttp.WithByteRateLimit(lim.bytes.Requests, lim.bytes.Window), mcphttp.WithMaxConcurrent(c.maxInflight), mcphttp.WithObserver(obs),
		mcphttp.WithTransport(websocket.Transport()),
	}
	switch {
	case c.metricsAddr != "" || !c.metrics:
	case az.Mode == auth.ModeOff:
		opts = append(opts, mcphttp.WithMetrics(obs.Metrics()))
	default: // /metrics is unauthenticated: not beside what the tokens guard
		log.Info("metrics: with --auth, serve them on a listener of their own (--metrics-addr)")
	}
	if c.stateless {
		opts = append(opts, mcphttp.WithStateless())
	}
	if len(c.proxies) > 0 {
		opts = append(opts, mcphttp.WithTrustedProxies(c.proxies...))
	}
	var events mcphttp.EventStore
	if c.redis != nil {
		perSession := lim.eventBytes
		if perSession == 0 {
			perSession = -1 // the flag's 0 is none; WithEventLimits' keeps its default
		}
		events = redisstore.NewEvents(c.redis, redisstore.WithEventLimits(0, 0, perSession))
		opts = append(opts, mcphttp.WithEventStore(events))
	}
	if guard.IsLoopbackAddr(c.httpAddr) {
		opts = append(opts, mcphttp.WithLoopbackOnly())
	}
	var notReady atomic.Bool
	opts = append(opts, mcphttp.WithReadiness(func() error {
		if notReady.Load() {
			return errors.New("shutting down")
		}
		return nil
	}))
	h, shutdown := mcphttp.Handler(srv, opts...)
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnContext:       httpx.ConnCaller, // a connection's address is found once, not once a request
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if c.addrFile != "" {
		if err := addrfile.Write(c.addrFile, addr); err != nil {
			return err
		}
	}
	log.Info("serving MCP over HTTP", "url", "http://"+addr+"/mcp", "sse", "http://"+addr+"/sse", "websocket", "ws://"+addr+websocket.Path,
		"profile", c.profile, "response_mode", mode, "strict", c.strict, "auth", az.Mode)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	notReady.Store(true)
	if terminated(ctx) && c.notReadyDelay > 0 {
		log.Info("shutting down: /readyz says 503, still serving until the load balancer notices", "delay", c.notReadyDelay)
		select {
		case <-time.After(c.notReadyDelay):
		case err := <-errc:
			return err
		}
	}
	log.Info("shutting down: draining calls in flight", "timeout", c.drain)
	sctx, cancel := context.WithTimeout(context.Background(), c.drain)
	defer cancel()
	var drained sync.WaitGroup
	drained.Go(func() { shutdown(sctx) }) // streams and sockets, while hs waits for its requests
	if err := hs.Shutdown(sctx); err != nil {
		log.Warn("shutdown timed out; closing", "err", err)
		_ = hs.Close()
	}
	drained.Wait()
	if c, ok := events.(io.Closer); ok {
		_ = c.Close() // the events written behind, the answers of the last calls among them, reach Redis
	}
	return nil
}

// openTaskStore opens the durable task store --task-store names (nil for
// memory), and what closes it.
func openTaskStore(c serveConfig) (server.TaskStore, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sql := func(st *taskstore.SQL, err error) (server.TaskStore, func(), error) {
		if err != nil {
			return nil, func() {}, err
		}
		return st, func() { st.Close() }, nil
	}
	switch c.taskStore {
	case "memory":
		return nil, func() {}, nil
	case "sqlite":
		if err := os.MkdirAll(c.chat.dataDir, 0o700); err != nil {
			return nil, func() {}, err
		}
		return sql(taskstore.OpenSQLite(ctx, filepath.Join(c.chat.dataDir, "tasks.db")))
	case "postgres":
		dsn := c.chat.postgresDSN
		if dsn == "" {
			dsn = os.Getenv("MCPSTACK_POSTGRES_DSN")
		}
		if dsn == "" {
			return nil, func() {}, errors.New("postgres needs --postgres-dsn or MCPSTACK_POSTGRES_DSN")
		}
		return sql(taskstore.OpenPostgres(ctx, dsn, "mcpstack"))
	case "redis":
		if c.redis == nil {
			return nil, func() {}, errors.New("redis needs --redis-url or MCPSTACK_REDIS_URL")
		}
		return taskstore.NewRedis(c.redis, ""), func() {}, nil
	}
	return nil, func() {}, fmt.Errorf("%q is not memory, sqlite, postgres or redis", c.taskStore)
}

func newLogger(w io.Writer, level, format string) (*slog.Logger, *logbuf.Writer, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	opts := &slog.HandlerOptions{Level: lv}
	// Lines are batched (an access line per request would be a write each);
	// a warning or an error goes out at once, with every line before it.
	buf := logbuf.New(w, logBuffer, logFlushInterval)
	var h slog.Handler
	switch format {
	case "text":
		h = logfmt.New(buf, opts) // slog.TextHandler's lines, for less

	case "json":
		h = slog.NewJSONHandler(buf, opts)
	default:
		return nil, nil, fmt.Errorf("--log-format must be text or json, not %q", format)
	}
	// Lines logged inside a traced request carry its trace_id and span_id.
	return slog.New(observe.LogHandler(logbuf.FlushAt(h, buf, slog.LevelWarn))), buf, nil
}

// How long, and how much, the log holds back before writing.
const (
	logBuffer        = 64 << 10
	logFlushInterval = 200 * time.Millisecond
)

// applyEnv sets flags from PREFIX_NAME environment variables.
func applyEnv(fl *flag.FlagSet, prefix string) error {
	var err error
	fl.VisitAll(func(f *flag.Flag) {
		name := prefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(name); ok && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s=%s: %w", name, strconv.Quote(v), e)
			}
		}
	})
	return err
}

// signalContext ends at SIGINT or SIGTERM, the signal its cause: an
// orchestrator's SIGTERM is followed by a delay while /readyz fails,
// Ctrl-C is not.
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		if sig, ok := <-sigs; ok {
			cancel(stopSignal{sig})
		}
		signal.Stop(sigs) // a second Ctrl-C ends the process at once
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(sigs)
		cancel(nil)
	}
}

// stopSignal is the cause of a context that signalContext ended.
type stopSignal struct{ os.Signal }

func (s stopSignal) Error() string { return "received " + s.String() }

// terminated reports whether ctx ended at SIGTERM.
func terminated(ctx context.Context) bool {
	var s stopSignal
	return errors.As(context.Cause(ctx), &s) && s.Signal == syscall.SIGTERM
}

// revisionRange names the oldest and the newest revision served, as the
// generated table has them.
func revisionRange() string {
	specs := generated.Specs
	return specs[0].Revision + " ... " + specs[len(specs)-1].Revision
}
