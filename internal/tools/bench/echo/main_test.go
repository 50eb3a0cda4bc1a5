package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/tools/bench"
)

// The echo answers the load generator's calls over HTTP in every response
// mode, more of them than the per-client rate limit (1000 in 10s) would
// let one client make: it is off, as it is for serve in make bench.
func TestEchoServesTheBenchmark(t *testing.T) {
	for _, mode := range []string{"auto", "sse", "json"} {
		t.Run(mode, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			addrFile := filepath.Join(t.TempDir(), "addr")
			srv := app.NewServer(newApp(), quotasOff())
			defer srv.Close()
			done := make(chan error, 1)
			go func() { done <- run(ctx, srv, "127.0.0.1:0", addrFile, mode, false) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("run: %v", err)
				}
			}()
			var addr []byte
			for deadline := time.Now().Add(10 * time.Second); len(addr) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				addr, _ = os.ReadFile(addrFile)
			}
			url := "http://" + strings.TrimSpace(string(addr)) + "/mcp"
			r, err := bench.Run(ctx, bench.Config{Sessions: 4, Calls: 1500, Duration: 30 * time.Second, Warmup: -1}, bench.Target{Name: "echo", URL: url})
			if err != nil {
				t.Fatal(err)
			}
			if r.Errors != 0 || r.Calls != 1500 {
				t.Errorf("%d calls, %d errors: %v", r.Calls, r.Errors, r.ErrorSamples)
			}
		})
	}
	if err := run(context.Background(), nil, "127.0.0.1:0", "", "xml", false); err == nil || !strings.Contains(err.Error(), "--response-mode") {
		t.Errorf("an unknown response mode: %v", err)
	}
}
