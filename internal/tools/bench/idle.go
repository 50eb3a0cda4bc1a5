package bench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// IdleResult is the memory an HTTP server spends on sessions that do
// nothing: the growth of its resident set while N sessions are open.
type IdleResult struct {
	Target          string           `json:"target"`
	Endpoint        string           `json:"endpoint"`
	ProtocolVersion string           `json:"protocol_version"`
	Requested       int              `json:"requested"`
	Opened          int              `json:"opened"`
	Errors          int64            `json:"errors"`
	ErrorKinds      map[string]int64 `json:"error_kinds,omitempty"`
	ErrorSamples    []string         `json:"error_samples,omitempty"`
	OpenSeconds     float64          `json:"open_seconds"`
	HoldSeconds     float64          `json:"hold_seconds"`
	// Resident set of the server (VmRSS) before opening, while the
	// sessions are open, and after they were closed; 0 without a PID.
	RSSBefore       int64   `json:"rss_before_bytes,omitempty"`
	RSSHalf         int64   `json:"rss_half_bytes,omitempty"` // with the first half open
	RSSOpen         int64   `json:"rss_open_bytes,omitempty"`
	RSSClosed       int64   `json:"rss_closed_bytes,omitempty"`
	BytesPerSession float64 `json:"rss_bytes_per_session,omitempty"` // (RSSOpen-RSSBefore)/Opened
	// BytesPerSessionSecondHalf is the growth while the second half of
	// the sessions opened, per session: less disturbed by what the server
	// had allocated before (see Idle).
	BytesPerSessionSecondHalf float64 `json:"rss_bytes_per_session_second_half,omitempty"`
	Measured                  bool    `json:"measured"` // RSS was read
}

// IdleWarmupSessions sessions are opened, called once and closed before
// the baseline RSS is read, so that code pages and pools the first
// sessions fault in are not charged to the idle sessions.
const IdleWarmupSessions = 8

// Idle opens n sessions on an HTTP target (initialize and
// notifications/initialized only), holds them open for hold, reads the
// server's VmRSS (when t.PID is set) and closes them again.
//
// The RSS of a garbage-collected server follows its live memory loosely:
// garbage from before the sessions may be collected and returned while
// they open, so that a server that spends little per session can show a
// negative growth. The growth over the second half of the sessions, read
// after the first half is open, is reported too and is the steadier
// figure.
func Idle(ctx context.Context, c Config, t Target, n int, hold time.Duration) (*IdleResult, error) {
	c = c.withDefaults(false)
	if err := t.validate(c.AllowRemote); err != nil {
		return nil, err
	}
	if t.isStdio() {
		return nil, errors.New("idle mode needs an HTTP target: a stdio server has one session")
	}
	if isModern(c.ProtocolVersion) {
		return nil, fmt.Errorf("idle mode needs sessions; protocol %s has none", c.ProtocolVersion)
	}
	if n <= 0 {
		return nil, errors.New("idle mode needs a positive number of sessions")
	}
	r := &IdleResult{Target: t.Name, Endpoint: t.URL, ProtocolVersion: c.ProtocolVersion, Requested: n, HoldSeconds: hold.Seconds()}
	ctx, cancel := context.WithTimeout(ctx, hold+time.Duration(n+IdleWarmupSessions)*c.Timeout/8+time.Minute)
	defer cancel()
	tr := newTransport(16)
	defer tr.CloseIdleConnections()
	rec := newRecorder()
	var recMu sync.Mutex
	fail := func(err error) {
		recMu.Lock()
		rec.fail(err, false, time.Now())
		recMu.Unlock()
	}

	// Warm up: open a few sessions, call once on each, close them.
	warm := make([]*httpSession, IdleWarmupSessions)
	for i := range warm {
		warm[i] = newHTTPSession(tr, t.URL, &c, newRecorder())
	}
	parallel(IdleWarmupSessions, IdleWarmupSessions, func(i int) {
		s := warm[i]
		if err := s.initialize(ctx); err != nil {
			fail(err)
			return
		}
		if err := s.call(ctx, newText(c.TextSize)); err != nil {
			fail(err)
		}
	})
	closeSessions(ctx, warm)
	var err error
	if t.PID > 0 {
		if r.RSSBefore, err = settleRSS(ctx, t.PID); err != nil {
			return nil, fmt.Errorf("server RSS: %v", err)
		}
	}

	sessions := make([]*httpSession, n)
	var opened atomic.Int64
	open := func(from, to int) {
		parallel(to-from, 16, func(i int) {
			s := newHTTPSession(tr, t.URL, &c, newRecorder())
			if err := s.initialize(ctx); err != nil {
				fail(err)
				return
			}
			sessions[from+i] = s
			opened.Add(1)
		})
	}
	// Open half, read the RSS, open the rest: the growth over the second
	// half does not depend on garbage the warmup left behind, which the
	// first allocations may collect and return.
	t0 := time.Now()
	half := n / 2
	open(0, half)
	openTime := time.Since(t0)
	var halfOpened int
	if t.PID > 0 && half > 0 {
		halfOpened = int(opened.Load())
		if r.RSSHalf, err = settleRSS(ctx, t.PID); err != nil {
			return nil, fmt.Errorf("server RSS: %v", err)
		}
	}
	t1 := time.Now()
	open(half, n)
	r.OpenSeconds = (openTime + time.Since(t1)).Seconds()
	r.Opened = int(opened.Load())
	if !sleepCtx(ctx, hold) {
		return nil, ctx.Err()
	}
	if t.PID > 0 {
		if r.RSSOpen, err = settleRSS(ctx, t.PID); err != nil {
			return nil, fmt.Errorf("server RSS: %v", err)
		}
	}
	var live []*httpSession
	for _, s := range sessions {
		if s != nil {
			live = append(live, s)
		}
	}
	closeSessions(ctx, live)
	if t.PID > 0 {
		sleepCtx(ctx, 500*time.Millisecond)
		if rss, err := procRSS(t.PID); err == nil {
			r.RSSClosed = rss
		}
		r.Measured = true
		if r.Opened > 0 {
			r.BytesPerSession = float64(r.RSSOpen-r.RSSBefore) / float64(r.Opened)
		}
		if d := r.Opened - halfOpened; r.RSSHalf > 0 && d > 0 {
			r.BytesPerSessionSecondHalf = float64(r.RSSOpen-r.RSSHalf) / float64(d)
		}
	}
	for _, v := range rec.errs {
		r.Errors += v
	}
	if r.Errors > 0 {
		r.ErrorKinds, r.ErrorSamples = rec.errs, rec.samples
	}
	return r, nil
}

// parallel runs f(0..n-1) on at most width goroutines at once.
func parallel(n, width int, f func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, width)
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			f(i)
		}()
	}
	wg.Wait()
}

// settleRSS reads the RSS of pid every 250ms until two readings in a row
// are within 64 KiB of each other (at most 5s), and returns the last: a
// server's runtime may still be returning or growing memory after a burst.
func settleRSS(ctx context.Context, pid int) (int64, error) {
	prev, err := procRSS(pid)
	if err != nil {
		return 0, err
	}
	for range 20 {
		if !sleepCtx(ctx, 250*time.Millisecond) {
			return 0, ctx.Err()
		}
		cur, err := procRSS(pid)
		if err != nil {
			return 0, err
		}
		if d := cur - prev; d >= -64<<10 && d <= 64<<10 {
			return cur, nil
		}
		prev = cur
	}
	return prev, nil
}
