package main

import (
	"io"
	"log/slog"
	"net/http"
	"os"
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

// TestServeDebugRefusesRebinding: a page that rebinds its own host name to
// 127.0.0.1 reaches the listener with its own Host: refused, as on the MCP
// endpoint; and the command line (flags may carry credentials) is not served.
func TestServeDebugRefusesRebinding(t *testing.T) {
	var lines strings.Builder
	stop, err := serveDebug("127.0.0.1:0", slog.New(slog.NewTextHandler(&lines, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	_, url, _ := strings.Cut(lines.String(), "url=")
	url = strings.TrimSpace(url)
	req, _ := http.NewRequest(http.MethodGet, url+"heap?debug=1", nil)
	req.Host = "evil.example.com"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("Host evil.example.com: %d, want 403", resp.StatusCode)
	}
	resp, err = http.Get(url + "cmdline")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(body), "debug_cmd") || strings.Contains(string(body), os.Args[0]) {
		t.Errorf("GET cmdline served the command line: %q", body)
	}
}
