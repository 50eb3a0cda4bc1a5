package bench

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// quick is a short run: no warmup, a fixed number of calls.
func quick(calls int64) Config {
	return Config{Sessions: 4, Calls: calls, Warmup: -1, Duration: 20 * time.Second, Timeout: 5 * time.Second, TextSize: 40}
}

func TestRunHTTP(t *testing.T) {
	for _, mode := range []string{"json", "sse", "sse-fancy"} {
		t.Run(mode, func(t *testing.T) {
			f, srv := newFakeServer(t, mode, "")
			r, err := Run(context.Background(), quick(400), Target{Name: "fake", URL: srv.URL + "/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			if r.Errors != 0 || r.Calls != 400 {
				t.Fatalf("calls %d, errors %d %v %v; want 400 and none", r.Calls, r.Errors, r.ErrorKinds, r.ErrorSamples)
			}
			kind := "json"
			if mode != "json" {
				kind = "sse"
			}
			// initialize answers count too: 4 sessions.
			if r.Responses[kind] != 404 || len(r.Responses) != 1 {
				t.Errorf("responses %v, want %s 404", r.Responses, kind)
			}
			if f.badHdr.Load() != 0 {
				t.Errorf("%d requests with bad headers", f.badHdr.Load())
			}
			if f.deletes.Load() != 4 {
				t.Errorf("%d sessions deleted, want 4", f.deletes.Load())
			}
			if r.CallsPerSec <= 0 || r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P99 || r.Latency.P99 > r.Latency.Max {
				t.Errorf("implausible figures: %.0f calls/s, %+v", r.CallsPerSec, r.Latency)
			}
		})
	}
}

func TestRunHTTPStateless(t *testing.T) {
	f, srv := newFakeServer(t, "sse", "")
	f.stateless = true
	c := quick(100)
	c.ProtocolVersion = "2026-07-28"
	r, err := Run(context.Background(), c, Target{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Calls != 100 || f.badHdr.Load() != 0 {
		t.Fatalf("calls %d, errors %v %v, bad headers %d", r.Calls, r.ErrorKinds, r.ErrorSamples, f.badHdr.Load())
	}
}

func TestRunHTTPFaults(t *testing.T) {
	tests := []struct {
		fault, kind string
	}{
		{"wrong-text", errContent},
		{"rpc-error", errRPC},
		{"tool-error", errToolError},
		{"status-500", "http-500"},
		{"no-response", errNoAnswer},
		{"expire", "http-404"},
	}
	for _, tt := range tests {
		for _, mode := range []string{"json", "sse"} {
			t.Run(tt.fault+"/"+mode, func(t *testing.T) {
				f, srv := newFakeServer(t, mode, tt.fault)
				c := quick(200)
				c.Sessions = 2
				r, err := Run(context.Background(), c, Target{URL: srv.URL + "/mcp"})
				if err != nil {
					t.Fatal(err)
				}
				if r.ErrorKinds[tt.kind] == 0 || len(r.ErrorKinds) != 1 {
					t.Fatalf("errors %v, want only %s", r.ErrorKinds, tt.kind)
				}
				if r.Calls+r.Errors != 200 {
					t.Errorf("calls %d + errors %d != 200", r.Calls, r.Errors)
				}
				if len(r.ErrorSamples) == 0 || !strings.HasPrefix(r.ErrorSamples[0], tt.kind+": ") {
					t.Errorf("samples %q", r.ErrorSamples)
				}
				f.mu.Lock()
				initialized := f.nextSID
				f.mu.Unlock()
				if tt.fault == "expire" && initialized <= 2 {
					t.Errorf("sessions were not initialized again after 404 (%d initialized)", initialized)
				}
			})
		}
	}
}

func TestRunHTTPDown(t *testing.T) {
	_, srv := newFakeServer(t, "json", "")
	u := srv.URL + "/mcp"
	srv.Close()
	start := time.Now()
	r, err := Run(context.Background(), quick(1000), Target{URL: u})
	if err != nil {
		t.Fatal(err)
	}
	if r.Calls != 0 || r.ErrorKinds[errSession] != 3*4 || len(r.ErrorKinds) != 1 {
		t.Fatalf("calls %d, errors %v; want 3 session errors per session", r.Calls, r.ErrorKinds)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("giving up took %v", el)
	}
}

func TestRunDuration(t *testing.T) {
	_, srv := newFakeServer(t, "json", "")
	c := Config{Sessions: 2, Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond}
	start := time.Now()
	r, err := Run(context.Background(), c, Target{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("a 0.4s run took %v", el)
	}
	if r.Calls == 0 || r.Errors != 0 || r.Seconds < 0.29 || r.Seconds > 1 {
		t.Errorf("calls %d, errors %d, %.3fs measured", r.Calls, r.Errors, r.Seconds)
	}
	if r.ClientCPU <= 0 {
		t.Errorf("client CPU %v", r.ClientCPU)
	}
}

func TestRunRejectsRemote(t *testing.T) {
	for _, u := range []string{"http://10.1.2.3/mcp", "http://example.com/mcp", "ftp://127.0.0.1/mcp", "127.0.0.1:80"} {
		if _, err := Run(context.Background(), quick(1), Target{URL: u}); err == nil {
			t.Errorf("%s: no error", u)
		}
	}
	for _, u := range []string{"http://127.0.0.2:1/mcp", "http://[::1]:1/mcp", "http://localhost:1/mcp"} {
		if err := (Target{URL: u}).validate(false); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func stdioTarget(t *testing.T, fault string) Target {
	t.Helper()
	t.Setenv("BENCH_TEST_STDIO", fault)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Target{Name: "stdio", Command: []string{exe, "-test.run=^$"}}
}

func TestRunStdio(t *testing.T) {
	c := quick(1000)
	c.Sessions, c.Inflight = 2, 8
	r, err := Run(context.Background(), c, stdioTarget(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Calls != 1000 {
		t.Fatalf("calls %d, errors %v %v", r.Calls, r.ErrorKinds, r.ErrorSamples)
	}
	if r.Transport != "stdio" || r.Sessions != 2 || r.Inflight != 8 {
		t.Errorf("result %+v", r)
	}
	if r.ServerCPUPerCall <= 0 && r.serverNs != 0 {
		t.Errorf("server CPU %v", r.ServerCPUPerCall)
	}
}

func TestRunStdioModern(t *testing.T) {
	c := quick(100)
	c.Sessions, c.Inflight, c.ProtocolVersion = 1, 4, "2026-07-28"
	r, err := Run(context.Background(), c, stdioTarget(t, "ok"))
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Calls != 100 {
		t.Fatalf("calls %d, errors %v %v", r.Calls, r.ErrorKinds, r.ErrorSamples)
	}
}

func TestRunStdioFaults(t *testing.T) {
	t.Run("wrong text", func(t *testing.T) {
		c := quick(200)
		c.Sessions, c.Inflight = 1, 4
		r, err := Run(context.Background(), c, stdioTarget(t, "wrong-text"))
		if err != nil {
			t.Fatal(err)
		}
		if r.ErrorKinds[errContent] == 0 || r.Calls+r.Errors != 200 {
			t.Fatalf("calls %d, errors %v", r.Calls, r.ErrorKinds)
		}
	})
	t.Run("server exits", func(t *testing.T) {
		c := quick(200)
		c.Sessions, c.Inflight = 1, 4
		r, err := Run(context.Background(), c, stdioTarget(t, "exit"))
		if err != nil {
			t.Fatal(err)
		}
		if r.ErrorKinds[errTransport] == 0 || !strings.Contains(strings.Join(r.ErrorSamples, "\n"), "giving up") {
			t.Fatalf("errors %v %q; want transport errors quoting stderr", r.ErrorKinds, r.ErrorSamples)
		}
	})
	t.Run("server hangs", func(t *testing.T) {
		c := quick(200)
		c.Sessions, c.Inflight, c.Timeout = 1, 4, 300*time.Millisecond
		start := time.Now()
		r, err := Run(context.Background(), c, stdioTarget(t, "hang"))
		if err != nil {
			t.Fatal(err)
		}
		if r.ErrorKinds[errTimeout] == 0 {
			t.Fatalf("errors %v, want timeouts", r.ErrorKinds)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("took %v", el)
		}
	})
	t.Run("no such command", func(t *testing.T) {
		r, err := Run(context.Background(), quick(10), Target{Command: []string{"/nonexistent/server"}})
		if err != nil {
			t.Fatal(err)
		}
		if r.ErrorKinds[errSession] != 4 { // one per session
			t.Fatalf("errors %v", r.ErrorKinds)
		}
	})
}

func TestIdle(t *testing.T) {
	f, srv := newFakeServer(t, "sse", "")
	// The fake server runs in this process: measure our own RSS.
	r, err := Idle(context.Background(), Config{}, Target{Name: "fake", URL: srv.URL + "/mcp", PID: os.Getpid()}, 50, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Opened != 50 || r.Errors != 0 || !r.Measured || r.RSSBefore <= 0 || r.RSSOpen <= 0 {
		t.Fatalf("%+v", r)
	}
	if got := f.deletes.Load(); got != 50+IdleWarmupSessions {
		t.Errorf("%d sessions deleted, want %d", got, 50+IdleWarmupSessions)
	}
	if _, err := Idle(context.Background(), Config{}, Target{Command: []string{"x"}}, 5, time.Millisecond); err == nil {
		t.Error("idle over stdio: no error")
	}
	if _, err := Idle(context.Background(), Config{ProtocolVersion: "2026-07-28"}, Target{URL: srv.URL}, 5, time.Millisecond); err == nil {
		t.Error("idle without sessions: no error")
	}
}

func TestRunHTTPStreamLeftOpen(t *testing.T) {
	defer func(d time.Duration) { sseLinger = d }(sseLinger)
	sseLinger = 50 * time.Millisecond
	_, srv := newFakeServer(t, "sse", "linger")
	c := quick(10)
	c.Sessions = 2
	r, err := Run(context.Background(), c, Target{URL: srv.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Calls != 10 || r.Responses["sse-left-open"] != 10 {
		t.Fatalf("calls %d, errors %v %v, responses %v", r.Calls, r.ErrorKinds, r.ErrorSamples, r.Responses)
	}
}
