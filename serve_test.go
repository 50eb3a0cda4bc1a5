package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
)

func TestServeHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--help"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"-http", "-stdio", "-profile", "-strict", "-response-mode", "MCPSTACK_"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	for _, args := range [][]string{{"serve", "--profile", "nope"}, {"serve", "--response-mode", "xml"}, {"serve", "extra"}, {"serve", "--user-max-bytes", "0"}} {
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	t.Setenv("MCPSTACK_PROFILE", "nope")
	if code := run([]string{"serve"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown profile "nope"`) {
		t.Errorf("MCPSTACK_PROFILE=nope: exit %d, %q", code, errb.String())
	}
}

// TestServeDrains: on shutdown, a call in flight is still answered, health
// endpoints answer, and the server stops by itself.
func TestServeDrains(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	srv := server.New(conformance.New(conformance.WithStepDelay(300*time.Millisecond)), server.WithStrict(true))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cfg := serveConfig{httpAddr: "127.0.0.1:0", addrFile: addrFile, maxBody: 1 << 20, drain: 10 * time.Second, profile: "conformance"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- serveHTTP(ctx, cfg, srv, observe.New(), mcphttp.ResponseJSON, httpx.RateLimit{}, log) }()
	base := "http://" + waitAddr(t, addrFile)
	for _, p := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(base + p)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %v %v", p, resp, err)
		}
		resp.Body.Close()
	}
	post := func(body, sid string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	resp, _ := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, "")
	sid := resp.Header.Get("Mcp-Session-Id")
	answered := make(chan string, 1)
	go func() {
		_, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_tool_with_progress"}}`, sid)
		answered <- body
	}()
	time.Sleep(100 * time.Millisecond) // the call is in flight
	cancel()
	select {
	case body := <-answered:
		if !strings.Contains(body, `"id":2,"result"`) {
			t.Errorf("call in flight during shutdown: %s", body)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call in flight was not answered")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveHTTP: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

// TestServeNotReadyOnSIGTERM: from SIGTERM on /readyz answers 503 while
// the server still serves, for --shutdown-delay, then it drains and stops
// (the regression: the listener closed at once, /readyz said 200 to the
// last and a load balancer kept sending to a closing replica).
func TestServeNotReadyOnSIGTERM(t *testing.T) {
	addrFile := filepath.Join(t.TempDir(), "addr")
	srv := server.New(conformance.New())
	defer srv.Close()
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	done := make(chan error, 1)
	const delay = 700 * time.Millisecond
	cfg := serveConfig{httpAddr: "127.0.0.1:0", addrFile: addrFile, maxBody: 1 << 20, drain: 5 * time.Second, notReadyDelay: delay, profile: "conformance"}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- serveHTTP(ctx, cfg, srv, observe.New(), mcphttp.ResponseJSON, httpx.RateLimit{}, log) }()
	addr := waitAddr(t, addrFile)
	status := func(path string) int {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status("/readyz"); got != 200 {
		t.Fatalf("/readyz before SIGTERM: %d, want 200", got)
	}
	stopped := time.Now()
	cancel(stopSignal{syscall.SIGTERM})
	time.Sleep(delay / 4)
	if got := status("/readyz"); got != http.StatusServiceUnavailable {
		t.Errorf("/readyz after SIGTERM: %d, want 503", got)
	}
	if got := status("/healthz"); got != 200 {
		t.Errorf("/healthz during the delay: %d, want 200 (still serving)", got)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serveHTTP: %v", err)
		}
		if d := time.Since(stopped); d < delay {
			t.Errorf("stopped %v after SIGTERM, want at least the %v delay", d, delay)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server did not stop")
	}
}

// TestServeLoggerBatches: serve's info lines wait for the flush interval
// (an access line per request would be a write each); a warning goes out
// at once with every line before it, and closing the log lets nothing wait.
func TestServeLoggerBatches(t *testing.T) {
	var out lockedBuffer
	log, buf, err := newLogger(&out, "info", "text")
	if err != nil {
		t.Fatal(err)
	}
	log.Info("first")
	if got := out.String(); got != "" {
		t.Fatalf("an info line was written at once: %q", got)
	}
	log.Warn("second")
	if got := out.String(); !strings.Contains(got, "msg=first") || !strings.Contains(got, "msg=second") {
		t.Fatalf("a warning did not flush the lines before it: %q", got)
	}
	log.Info("third")
	if err := buf.Close(); err != nil {
		t.Fatal(err)
	}
	log.Info("fourth")
	if got := out.String(); !strings.Contains(got, "msg=third") || !strings.Contains(got, "msg=fourth") {
		t.Fatalf("lines were held after Close: %q", got)
	}
}

type lockedBuffer = syncbuf.Buffer

// A Redis that does not answer stops serve at once, with the URL's
// password left out of what it says.
func TestServeRedisUnreachable(t *testing.T) {
	// A password with a slash does not parse, and the parser's error
	// quotes the URL: it must not reach the output either.
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--profile", "conformance", "--redis-url", "redis://:s3c/ret@redis:6379/0"}, &out, &errb); code != 1 || strings.Contains(errb.String(), "s3c") {
		t.Errorf("an unparsable URL: exit %d, %q", code, errb.String())
	}
	if code := run([]string{"serve", "--profile", "conformance", "--task-store", "redis"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "redis needs --redis-url") {
		t.Errorf("--task-store redis without Redis: exit %d, %q", code, errb.String())
	}
	for _, viaEnv := range []bool{false, true} {
		var out, errb bytes.Buffer
		args := []string{"serve", "--profile", "conformance", "--http", "127.0.0.1:0", "--log-level", "error"}
		const url = "redis://:s3cret@127.0.0.1:1/0"
		if viaEnv {
			t.Setenv("MCPSTACK_REDIS_URL", url)
		} else {
			args = append(args, "--redis-url", url)
		}
		if code := run(args, &out, &errb); code != 1 {
			t.Errorf("env %v: exit %d, want 1: %s", viaEnv, code, errb.String())
		}
		if msg := errb.String(); !strings.Contains(msg, "redis://:***@127.0.0.1:1/0") || strings.Contains(msg, "s3cret") {
			t.Errorf("env %v: %q, want the URL without its password", viaEnv, msg)
		}
	}
}

func TestRedactRedisURL(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/0"},
		{"redis://:s3cret@redis:6379/2", "redis://:***@redis:6379/2"},
		{"rediss://app:s3cret@redis.example:6380", "rediss://app:***@redis.example:6380/0"},
		{"://nope", "(an unparsable Redis URL)"},
	} {
		if got := redactRedisURL(tt.url); got != tt.want || strings.Contains(got, "s3cret") {
			t.Errorf("redactRedisURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// The container and the Kubernetes manifests name flags and variables
// that serve has: a renamed flag fails here, not in a rollout.
func TestDeployNamesServeFlags(t *testing.T) {
	var help, errb bytes.Buffer
	if code := run([]string{"serve", "--help"}, &help, &errb); code != 0 {
		t.Fatal(errb.String())
	}
	flags := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  -([a-z0-9-]+)`).FindAllStringSubmatch(help.String(), -1) {
		flags[m[1]] = true
	}
	for _, file := range []string{"Dockerfile", "deploy/kubernetes/deployment.yaml"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string // serve's lines: not comments (kubectl's flags), not COPY --from
		for line := range strings.Lines(string(b)) {
			line := strings.TrimSpace(line)
			if !strings.HasPrefix(line, "#") && (!strings.HasSuffix(file, "Dockerfile") || strings.HasPrefix(line, "CMD") || strings.HasPrefix(line, "ENTRYPOINT")) {
				lines = append(lines, line+"\n")
			}
		}
		text := strings.Join(lines, "")
		for _, m := range regexp.MustCompile(`"?--([a-z0-9-]+)[="]`).FindAllStringSubmatch(text, -1) {
			if !flags[m[1]] {
				t.Errorf("%s: --%s is no flag of mcpstack serve", file, m[1])
			}
		}
		for _, m := range regexp.MustCompile(`name: (MCPSTACK_[A-Z0-9_]+)`).FindAllStringSubmatch(text, -1) {
			name := m[1]
			flag := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, "MCPSTACK_"), "_", "-"))
			if !flags[flag] && !strings.Contains(help.String(), name) {
				t.Errorf("%s: %s is neither MCPSTACK_<FLAG> nor a variable serve --help names", file, name)
			}
		}
	}
}

// TestServeMetricsSwitch: /metrics is served beside /mcp by default and
// not at all with --metrics=false, which --metrics-addr contradicts.
func TestServeMetricsSwitch(t *testing.T) {
	for _, on := range []bool{true, false} {
		addrFile := filepath.Join(t.TempDir(), "addr")
		srv := server.New(conformance.New())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		cfg := serveConfig{httpAddr: "127.0.0.1:0", addrFile: addrFile, maxBody: 1 << 20, drain: time.Second, profile: "conformance", metrics: on}
		obs := observe.New()
		if !on {
			obs = observe.New(observe.WithRegisterer(nil))
		}
		go func() {
			done <- serveHTTP(ctx, cfg, srv, obs, mcphttp.ResponseJSON, httpx.RateLimit{}, slog.New(slog.DiscardHandler))
		}()
		addr := waitAddr(t, addrFile)
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{true: 200, false: 404}[on]; resp.StatusCode != want {
			t.Errorf("--metrics=%v: GET /metrics %d, want %d", on, resp.StatusCode, want)
		}
		cancel()
		<-done
		srv.Close()
	}
	var out, errb bytes.Buffer
	if code := run([]string{"serve", "--metrics=false", "--metrics-addr", "127.0.0.1:0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--metrics=false") {
		t.Errorf("--metrics=false --metrics-addr: exit %d, %q", code, errb.String())
	}
}

// waitAddr waits for a server started with --addr-file to write its
// address there.
func waitAddr(t *testing.T, addrFile string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			return strings.TrimSpace(string(b))
		}
	}
	t.Fatal("server did not start")
	return ""
}

// newObserver follows --metrics and --access-log: metrics off serve 404;
// with both off (and no OTEL exporter) there is no observer at all.
func TestNewObserverSwitches(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	obs, _, stop, err := newObserver(context.Background(), serveConfig{metrics: false, accessLog: false}, log)
	if err != nil {
		t.Fatal(err)
	}
	stop()
	if obs != nil {
		t.Error("--metrics=false --access-log=false made an observer")
	}
	obs, _, stop, err = newObserver(context.Background(), serveConfig{metrics: false, accessLog: true}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	rec := httptest.NewRecorder()
	obs.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("--metrics=false: /metrics answers %d, want 404", rec.Code)
	}
}
