package main

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestServeDebug(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, addr := range []string{"0.0.0.0:0", "example.com:6060", ":0"} {
		if stop, err := serveDebug(addr, log); err == nil {
			stop()
			t.Errorf("--debug-addr %s: served; profiles must stay on loopback", addr)
		} else if !strings.Contains(err.Error(), "not a loopback address") {
			t.Errorf("--debug-addr %s: %v, want it refused as not loopback", addr, err)
		}
	}
	var out, errb strings.Builder
	if code := run([]string{"serve", "--debug-addr", "0.0.0.0:0"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "--debug-addr") {
		t.Errorf("serve --debug-addr 0.0.0.0:0: exit %d, %q; want 2 and the flag named", code, errb.String())
	}
}

func TestServeDebugServesProfiles(t *testing.T) {
	var lines strings.Builder
	log := slog.New(slog.NewTextHandler(&lines, nil))
	stop, err := serveDebug("127.0.0.1:0", log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	_, url, _ := strings.Cut(lines.String(), "url=")
	url = strings.TrimSpace(url)
	for _, path := range []string{"", "heap?debug=1", "goroutine?debug=1"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(body) == 0 {
			t.Errorf("GET %s%s: %d, %d bytes", url, path, resp.StatusCode, len(body))
		}
	}
}
