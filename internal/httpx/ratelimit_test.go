package httpx_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpx"
	"github.com/mcpstack/mcpstack/server/auth"
)

func TestParseRateLimit(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want httpx.RateLimit
		bad  bool
	}{
		{"1000/10s", httpx.RateLimit{Requests: 1000, Window: 10 * time.Second}, false},
		{"5/s", httpx.RateLimit{Requests: 5, Window: time.Second}, false},
		{"60/m", httpx.RateLimit{Requests: 60, Window: time.Minute}, false},
		{"32MiB/10s", httpx.RateLimit{Requests: 32 << 20, Window: 10 * time.Second}, false},
		{"0", httpx.RateLimit{}, false},
		{"off", httpx.RateLimit{}, false},
		{"10", httpx.RateLimit{}, true},
		{"-1/s", httpx.RateLimit{}, true},
		{"10/fortnight", httpx.RateLimit{}, true},
	} {
		got, err := httpx.ParseRateLimit(tt.in)
		if (err != nil) != tt.bad || got.Requests != tt.want.Requests || got.Window != tt.want.Window {
			t.Errorf("ParseRateLimit(%q) = %v, %v", tt.in, got, err)
		}
	}
}

// TestRateLimit: past its rate a client gets 429 with Retry-After and a
// JSON-RPC error; another principal from the same address is counted on
// its own.
func TestRateLimit(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := httpx.RateLimit{Requests: 3, Window: time.Minute}.Middleware()(ok)
	as := func(user string) int {
		r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if user != "" {
			r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Subject: user}))
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusTooManyRequests {
			var msg struct {
				Error struct{ Code int } `json:"error"`
			}
			if rec.Header().Get("Retry-After") == "" || json.Unmarshal(rec.Body.Bytes(), &msg) != nil || msg.Error.Code != -32000 {
				t.Errorf("429 without Retry-After or a JSON-RPC body: %v %s", rec.Header(), rec.Body)
			}
		}
		return rec.Code
	}
	for i := range 3 {
		if st := as("alice"); st != http.StatusNoContent {
			t.Fatalf("alice's request %d: %d", i+1, st)
		}
	}
	if st := as("alice"); st != http.StatusTooManyRequests {
		t.Errorf("alice's 4th request: %d, want 429", st)
	}
	if st := as("bob"); st != http.StatusNoContent {
		t.Errorf("bob, from the same address: %d, want 204", st)
	}
	if st := as(""); st != http.StatusNoContent {
		t.Errorf("an anonymous client: %d, want 204", st)
	}
}

// TestByteRateLimit: past its bytes a client gets 429 before its body is
// read; bodiless requests (a GET stream) are not counted; other clients
// have their own budget.
func TestByteRateLimit(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) })
	h := httpx.RateLimit{Requests: 1000, Window: time.Minute}.BytesMiddleware(4 << 20)(ok)
	send := func(user string, size int) int {
		var r *http.Request
		if size > 0 {
			r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(strings.Repeat("x", size)))
		} else {
			r = httptest.NewRequest(http.MethodGet, "/mcp", nil)
		}
		r = r.WithContext(auth.WithPrincipal(r.Context(), &auth.Principal{Subject: user}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code == http.StatusTooManyRequests && rec.Header().Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		return rec.Code
	}
	for i, want := range []int{204, 204, 429} {
		if st := send("alice", 400); st != want {
			t.Errorf("alice's request %d of 400 bytes: %d, want %d", i+1, st, want)
		}
	}
	if st := send("alice", 0); st != 204 {
		t.Errorf("a GET past the byte budget: %d, want 204", st)
	}
	if st := send("bob", 400); st != 204 {
		t.Errorf("bob: %d, want 204", st)
	}
}
