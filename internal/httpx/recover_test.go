package httpx_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/httpx"
)

func TestRecover(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		upgrade string // the Connection header
		status  int    // what the client gets
		logged  string // in the log line; "" for none
	}{
		{"no panic", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }, "", http.StatusTeapot, ""},
		{"panic", func(http.ResponseWriter, *http.Request) { panic("boom") }, "", http.StatusInternalServerError, "panic=boom"},
		{"panic with an error", func(http.ResponseWriter, *http.Request) { panic(bytes.ErrTooLarge) }, "keep-alive", http.StatusInternalServerError, "too large"},
		{"panic on an upgrade writes no status", func(http.ResponseWriter, *http.Request) { panic("boom") }, "Upgrade", http.StatusOK, "panic=boom"},
		{"panic on an upgrade among other tokens", func(http.ResponseWriter, *http.Request) { panic("boom") }, "keep-alive, upgrade", http.StatusOK, "panic=boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			h := httpx.Recover(slog.New(slog.NewTextHandler(&log, nil)))(tt.handler)
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			if tt.upgrade != "" {
				r.Header.Set("Connection", tt.upgrade)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tt.status {
				t.Errorf("status %d, want %d", w.Code, tt.status)
			}
			switch {
			case tt.logged == "" && log.Len() > 0:
				t.Errorf("logged %q, want nothing", log.String())
			case tt.logged != "" && (!strings.Contains(log.String(), tt.logged) || !strings.Contains(log.String(), "stack=")):
				t.Errorf("log %q lacks %q or the stack", log.String(), tt.logged)
			}
		})
	}
}

// http.ErrAbortHandler is net/http's way to abort a response: it must
// reach net/http, not become a 500.
func TestRecoverPassesAbortOn(t *testing.T) {
	h := httpx.Recover(slog.New(slog.DiscardHandler))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }))
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Errorf("recovered %v, want http.ErrAbortHandler passed on", v)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
}
