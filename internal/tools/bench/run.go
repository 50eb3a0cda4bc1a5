package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/protocol"
)

// Config is what a run does; the zero values of the optional fields take
// the defaults of the command.
type Config struct {
	// Sessions is the number of concurrent sessions: MCP sessions over
	// HTTP, each with one call in flight, or server processes over stdio.
	// 0 means 16 over HTTP and 1 over stdio.
	Sessions int
	// Inflight is the number of calls outstanding on each stdio
	// connection (default 32).
	Inflight int
	// Duration is the measured time after the warmup (default 10s); with
	// Calls it is the longest the run may take.
	Duration time.Duration
	// Calls, when positive, ends the run after this many measured calls.
	Calls int64
	// Warmup is the time spent calling before measuring (default 1s);
	// negative means none.
	Warmup time.Duration
	// TextSize is the length of the echoed text in bytes (default 64).
	TextSize int
	// ProtocolVersion is the MCP revision to ask for (default 2025-11-25).
	// From 2026-07-28 on there is no initialize and no session: each call
	// carries the version in params._meta and the Mcp-Method header.
	ProtocolVersion string
	// Timeout bounds each call (default 10s).
	Timeout time.Duration
	// AllowRemote permits targets that are not on a loopback address.
	AllowRemote bool
}

// Defaults of Config.
const (
	DefaultHTTPSessions  = 16
	DefaultStdioSessions = 1
	DefaultInflight      = 32
	DefaultDuration      = 10 * time.Second
	DefaultCallsCap      = 5 * time.Minute
	DefaultWarmup        = time.Second
	DefaultTextSize      = 64
	DefaultTimeout       = 10 * time.Second
)

// DefaultProtocolVersion is the newest revision with sessions: the peers
// it measures against negotiate down from it when they must.
var DefaultProtocolVersion = protocol.NewestSession(generated.Specs).Revision

func (c Config) withDefaults(stdio bool) Config {
	if c.Sessions <= 0 {
		c.Sessions = DefaultHTTPSessions
		if stdio {
			c.Sessions = DefaultStdioSessions
		}
	}
	if c.Inflight <= 0 {
		c.Inflight = DefaultInflight
	}
	if !stdio {
		c.Inflight = 1
	}
	if c.Duration <= 0 {
		c.Duration = DefaultDuration
		if c.Calls > 0 {
			c.Duration = DefaultCallsCap
		}
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	} else if c.Warmup < 0 {
		c.Warmup = 0
	}
	if c.TextSize <= 0 {
		c.TextSize = DefaultTextSize
	}
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = DefaultProtocolVersion
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Target is one server to load: a Streamable HTTP endpoint, or a command
// that starts a server speaking MCP over its stdin and stdout.
type Target struct {
	Name    string
	URL     string   // Streamable HTTP endpoint
	Command []string // or: the server command, started once per session
	// PID is the server process to measure (CPU while loading, RSS in idle
	// mode); 0 when unknown. Stdio servers are measured without it.
	PID int
}

func (t Target) isStdio() bool { return len(t.Command) > 0 }

func (t Target) endpoint() string {
	if t.isStdio() {
		return "stdio:" + joinCommand(t.Command)
	}
	return t.URL
}

func (t Target) validate(allowRemote bool) error {
	if t.isStdio() == (t.URL != "") {
		return fmt.Errorf("target %q: give either a URL or a command", t.Name)
	}
	if t.isStdio() {
		return nil
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return fmt.Errorf("target %q: %v", t.Name, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("target %q: %q is not an http:// or https:// URL", t.Name, t.URL)
	}
	if !allowRemote && !isLoopback(u.Hostname()) {
		return fmt.Errorf("target %q: %s is not a loopback address (127.0.0.0/8, ::1, localhost); pass --allow-remote to load another host", t.Name, u.Hostname())
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Result is the outcome of one run against one target.
type Result struct {
	Target           string           `json:"target"`
	Endpoint         string           `json:"endpoint"`
	Transport        string           `json:"transport"` // "http" or "stdio"
	Sessions         int              `json:"sessions"`
	Inflight         int              `json:"inflight"` // per session
	TextSize         int              `json:"text_size"`
	ProtocolVersion  string           `json:"protocol_version"`
	Responses        map[string]int64 `json:"responses,omitempty"` // HTTP responses by content type: json, sse
	Calls            int64            `json:"calls"`               // measured calls answered correctly
	Errors           int64            `json:"errors"`              // failed calls and session setups, warmup included
	ErrorKinds       map[string]int64 `json:"error_kinds,omitempty"`
	ErrorSamples     []string         `json:"error_samples,omitempty"`
	Seconds          float64          `json:"seconds"` // measured time
	CallsPerSec      float64          `json:"calls_per_sec"`
	Latency          Latency          `json:"latency"`
	ClientCPU        float64          `json:"client_cpu_cores,omitempty"`       // cores this process used while measuring
	ServerCPU        float64          `json:"server_cpu_cores,omitempty"`       // cores the server used while measuring
	ServerCPUPerCall float64          `json:"server_cpu_us_per_call,omitempty"` // server CPU µs per answered call

	lat      []int64 // sorted latencies (ns), kept for Compare
	serverNs int64   // server CPU ns while measuring, 0 when unknown
}

// Run loads one target as c says and returns what it measured.
func Run(ctx context.Context, c Config, t Target) (*Result, error) {
	c = c.withDefaults(t.isStdio())
	if err := t.validate(c.AllowRemote); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Warmup+c.Duration+c.Timeout+10*time.Second)
	defer cancel()

	win := newWindow(time.Now(), &c)
	m := startMeter(ctx, win.start, t.PID)
	var (
		mu       sync.Mutex
		all      = newRecorder()
		wg       sync.WaitGroup
		serverNs int64
		cpuKnown = true
	)
	collect := func(r *recorder) {
		mu.Lock()
		all.merge(r)
		mu.Unlock()
	}
	var sessions []*httpSession
	var tr *http.Transport
	if t.isStdio() {
		for range c.Sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rec := newRecorder()
				d, ok := runStdio(ctx, t.Command, &c, win, rec)
				mu.Lock()
				serverNs += int64(d)
				cpuKnown = cpuKnown && ok
				mu.Unlock()
				collect(rec)
			}()
		}
	} else {
		tr = newTransport(c.Sessions)
		for range c.Sessions {
			rec := newRecorder()
			s := newHTTPSession(tr, t.URL, &c, rec)
			sessions = append(sessions, s)
			wg.Add(1)
			go func() {
				defer wg.Done()
				httpWorker(ctx, s, win, rec, c.TextSize)
				collect(rec)
			}()
		}
	}
	wg.Wait()
	end := time.Now()
	client, srv := m.stop()
	if len(sessions) > 0 {
		closeSessions(context.WithoutCancel(ctx), sessions)
		tr.CloseIdleConnections()
	}
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}

	r := &Result{
		Target:          t.Name,
		Endpoint:        t.endpoint(),
		Transport:       "http",
		Sessions:        c.Sessions,
		Inflight:        c.Inflight,
		TextSize:        c.TextSize,
		ProtocolVersion: c.ProtocolVersion,
		Calls:           int64(len(all.lat)),
		ErrorKinds:      all.errs,
		ErrorSamples:    all.samples,
		lat:             all.lat,
	}
	if t.isStdio() {
		r.Transport = "stdio"
		if cpuKnown {
			srv = time.Duration(serverNs)
		}
	} else if len(all.kinds) > 0 {
		r.Responses = all.kinds
	}
	for _, n := range all.errs {
		r.Errors += n
	}
	if len(r.ErrorKinds) == 0 {
		r.ErrorKinds = nil
	}
	last := all.lastDone
	if last.IsZero() {
		last = end
		if last.After(win.deadline) {
			last = win.deadline
		}
	}
	if d := last.Sub(win.start); d > 0 {
		r.Seconds = d.Seconds()
		r.CallsPerSec = float64(r.Calls) / r.Seconds
		r.ClientCPU = client.Seconds() / r.Seconds
		r.ServerCPU = srv.Seconds() / r.Seconds
	}
	r.serverNs = int64(srv)
	if srv > 0 && r.Calls > 0 {
		r.ServerCPUPerCall = float64(srv.Microseconds()) / float64(r.Calls)
	}
	r.Latency = summarize(r.lat)
	return r, nil
}

func httpWorker(ctx context.Context, s *httpSession, win *window, rec *recorder, textSize int) {
	text := newText(textSize)
	failures := 0 // initialize failures in a row
	for ctx.Err() == nil {
		if !s.ready {
			if err := s.initialize(ctx); err != nil {
				rec.fail(err, false, time.Now())
				failures++
				// A server that cannot open a session three times in a
				// row is down or broken: give up on this session.
				if failures >= 3 || !sleepCtx(ctx, 50*time.Millisecond) || !time.Now().Before(win.deadline) {
					return
				}
				continue
			}
			failures = 0
		}
		t0 := time.Now()
		run, measured := win.admit(t0)
		if !run {
			return
		}
		err := s.call(ctx, text)
		t1 := time.Now()
		if err == nil {
			rec.ok(measured, t0, t1)
			continue
		}
		rec.fail(err, measured, t1)
		var ce *callError
		if errors.As(err, &ce) && (ce.kind == errTransport || ce.kind == errTimeout || strings.HasPrefix(ce.kind, "http-")) {
			sleepCtx(ctx, 10*time.Millisecond) // do not spin on a failing server
		}
	}
}

func closeSessions(ctx context.Context, sessions []*httpSession) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for _, s := range sessions {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.close(ctx)
		}()
	}
	wg.Wait()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// meter samples this process's CPU time and the server's at the start of
// the measurement, and again when stopped.
type meter struct {
	pid    int
	done   chan struct{}
	mu     sync.Mutex
	ok     bool
	self0  time.Duration
	srv0   time.Duration
	srvOK  bool
	cancel context.CancelFunc
}

func startMeter(ctx context.Context, at time.Time, pid int) *meter {
	ctx, cancel := context.WithCancel(ctx)
	m := &meter{pid: pid, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(m.done)
		if !sleepCtx(ctx, time.Until(at)) {
			return
		}
		self, ok := selfCPU()
		var srv time.Duration
		var err error = errors.New("no pid")
		if pid > 0 {
			srv, err = procCPU(pid)
		}
		m.mu.Lock()
		m.ok, m.self0, m.srv0, m.srvOK = ok, self, srv, err == nil
		m.mu.Unlock()
	}()
	return m
}

// stop returns the CPU time used since the start sample by this process
// and by the server (0 when unknown).
func (m *meter) stop() (self, srv time.Duration) {
	m.cancel()
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ok {
		if s, ok := selfCPU(); ok {
			self = s - m.self0
		}
	}
	if m.srvOK {
		if s, err := procCPU(m.pid); err == nil {
			srv = s - m.srv0
		}
	}
	return self, srv
}

// joinCommand quotes the words of a command for display.
func joinCommand(argv []string) string {
	var b strings.Builder
	for i, w := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`") {
			b.WriteString(w)
			continue
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(w, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}
