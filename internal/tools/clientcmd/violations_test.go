package clientcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// flood negotiates, then answers tools/list with n notifications of
// about size bytes that break the protocol (an unknown method, whose name
// is the message), then the answer; onDelete runs when the client ends
// the session, while the command still keeps its violations.
func flood(t *testing.T, n, size int, onDelete func()) string {
	t.Helper()
	long := strings.Repeat("x", size)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			onDelete()
			return
		case http.MethodGet:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&msg)
		switch {
		case len(msg.ID) == 0:
			w.WriteHeader(http.StatusAccepted)
		case msg.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "flood")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"flood","version":"1"}}}`, msg.ID)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			for range n {
				fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/%s\"}\n\n", long)
			}
			fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"tools\":[]}}\n\n", msg.ID)
		}
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// A server that sends violations as fast as it can does not grow what
// the command keeps (150 of 1 MiB kept 281 MB): it keeps the first
// maxViolations, each cut to client.MaxExcerpt, prints them, and counts
// the rest (issue 20).
func TestViolationsAreBounded(t *testing.T) {
	// 60 MiB in all: enough to tell kept from dropped, little enough for
	// a loaded machine under -race (150 of 1 MiB took over 30 s there).
	const n, size, kept = 120, 512 << 10, 100 // kept: maxViolations
	// The heap while the command holds its violations.
	var during atomic.Int64
	url := flood(t, n, size, func() { during.Store(liveHeap()) })
	before := liveHeap()
	var stdout, stderr bytes.Buffer
	code := Command([]string{url, "--timeout", "2m"}, &stdout, &stderr)
	if code != exitViolation {
		t.Errorf("exit %d, want %d", code, exitViolation)
	}
	printed, longest := 0, 0
	for line := range strings.Lines(stderr.String()) {
		if strings.HasPrefix(line, "violation [") {
			printed++
		}
		longest = max(longest, len(line))
	}
	if printed != kept || !strings.Contains(stderr.String(), fmt.Sprintf("and %d more", n-kept)) {
		t.Errorf("%d violations printed, want %d and \"and %d more\"; the end of stderr: %q", printed, kept, n-kept, tail(stderr.String(), 300))
	}
	if longest > 4<<10 {
		t.Errorf("a line of %d bytes on stderr", longest)
	}
	grown := during.Load() - before
	t.Logf("the heap grew by %d KiB while the command kept its violations", grown>>10)
	if during.Load() == 0 || grown > n*size/8 {
		t.Errorf("the heap grew by %d MiB (of %d MiB sent) while the command kept its violations", grown>>20, n*size>>20)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
