package httpx_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/httpx"
)

func TestReadJSON(t *testing.T) {
	tests := []struct {
		name        string
		contentType string
		body        string
		length      int64 // Content-Length; -1 unknown
		max         int64
		status      int // 0: read
	}{
		{"known length", "application/json", `{"a":1}`, 7, 100, 0},
		{"unknown length", "application/json", `{"a":1}`, -1, 100, 0},
		{"parameters", "application/json; charset=utf-8", `{}`, 2, 100, 0},
		{"case", "Application/JSON", `{}`, 2, 100, 0},
		{"not JSON", "text/plain", `{}`, 2, 100, http.StatusUnsupportedMediaType},
		{"over the bound", "application/json", strings.Repeat(" ", 101), 101, 100, http.StatusRequestEntityTooLarge},
		{"over the bound, length unknown", "application/json", strings.Repeat(" ", 101), -1, 100, http.StatusRequestEntityTooLarge},
		{"shorter than announced", "application/json", `{}`, 10, 100, http.StatusBadRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", io.NopCloser(strings.NewReader(tt.body)))
			r.Header.Set("Content-Type", tt.contentType)
			r.ContentLength = tt.length
			w := httptest.NewRecorder()
			body, ok := httpx.ReadJSON(w, r, tt.max, time.Second)
			if tt.status == 0 {
				if !ok || string(body) != tt.body {
					t.Fatalf("read %q, %v (status %d %s)", body, ok, w.Code, w.Body)
				}
				return
			}
			if ok || w.Code != tt.status {
				t.Fatalf("ok %v, status %d, want %d: %s", ok, w.Code, tt.status, w.Body)
			}
		})
	}
}

// TestReadJSONTakesNoLengthOnTrust: a client that announces a large body
// and sends two bytes does not make the server allocate what it announced.
func TestReadJSONTakesNoLengthOnTrust(t *testing.T) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 8 {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/json")
		r.ContentLength = 4 << 20
		if body, ok := httpx.ReadJSON(httptest.NewRecorder(), r, 4<<20, time.Second); !ok || string(body) != `{}` {
			t.Fatalf("read %q, %v", body, ok)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("8 bodies of 2 bytes, announced as 4 MiB each, allocated %d KiB", grew>>10)
	}
}

func TestAccepts(t *testing.T) {
	tests := []struct {
		accept []string
		want   bool
	}{
		{[]string{"text/event-stream"}, true},
		{[]string{"application/json, Text/Event-Stream;q=0.9"}, true},
		{[]string{"application/json", "text/event-stream"}, true},
		{[]string{"*/*"}, true},
		{[]string{"application/json"}, false},
		{[]string{"text/event-streamx"}, false},
		{nil, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		for _, a := range tt.accept {
			r.Header.Add("Accept", a)
		}
		if got := httpx.Accepts(r, "text/event-stream"); got != tt.want {
			t.Errorf("Accept %q: %v, want %v", tt.accept, got, tt.want)
		}
	}
}

func TestHeaderNamesAreCanonical(t *testing.T) {
	for _, k := range []string{httpx.HeaderContentType, httpx.HeaderSessionID, httpx.HeaderProtocolVersion, httpx.HeaderMethod, httpx.HeaderName, httpx.HeaderLastEventID} {
		if c := http.CanonicalHeaderKey(k); c != k {
			t.Errorf("%q is kept by net/http as %q: Get would not find it", k, c)
		}
	}
	h := http.Header{}
	h.Set("mcp-session-id", "abc")
	if got := httpx.Get(h, httpx.HeaderSessionID); got != "abc" {
		t.Errorf("Get(%q) = %q after Set(\"mcp-session-id\")", httpx.HeaderSessionID, got)
	}
}

// TestDates: the Date header made once a second is the one net/http
// would write, at most a second old.
func TestDates(t *testing.T) {
	var d httpx.Dates
	for i := 0; i < 3; i++ {
		before := time.Now().Truncate(time.Second)
		got := d.Now()
		after := time.Now()
		at, err := http.ParseTime(got[0])
		if len(got) != 1 || err != nil || at.Before(before) || at.After(after) {
			t.Fatalf("Date %q (%v), want a time between %v and %v", got, err, before, after)
		}
		if again := d.Now(); &again[0] != &got[0] && time.Now().Unix() == at.Unix() {
			t.Error("the value was made again within its second")
		}
		time.Sleep(600 * time.Millisecond)
	}
}
