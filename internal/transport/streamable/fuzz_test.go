package streamable_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/txtar"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/server"
)

// transcriptLines returns every client line of the server transcripts: the
// fuzz seeds.
func transcriptLines(f *testing.F) []string {
	files, _ := filepath.Glob("../testdata/transcripts/*.txtar")
	var out []string
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, fl := range ar.Files {
			if fl.Name != "client" {
				continue
			}
			for _, l := range strings.Split(string(fl.Data), "\n") {
				if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
					out = append(out, l)
				}
			}
		}
	}
	return out
}

// FuzzHTTPHandler posts arbitrary bodies to an initialized session: no
// panic, a known status, and every JSON answer is valid JSON.
func FuzzHTTPHandler(f *testing.F) {
	for _, l := range transcriptLines(f) {
		f.Add([]byte(l), false)
	}
	f.Add([]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x"}]`), true)
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true), server.WithLimits(server.Limits{AnswerTimeout: time.Millisecond}))
	h := streamable.New(srv, streamable.WithMaxBody(1<<16), streamable.WithResponseMode(streamable.JSON))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, post(initBody, ""))
	sid := rec.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatalf("initialize failed: %d %s", rec.Code, rec.Body)
	}
	f.Cleanup(srv.Close)
	allowed := map[int]bool{200: true, 202: true, 400: true, 404: true, 413: true}
	f.Fuzz(func(t *testing.T, body []byte, fresh bool) {
		s := sid
		if fresh {
			s = ""
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post(string(body), s))
		if !allowed[rec.Code] {
			t.Fatalf("status %d for %q", rec.Code, body)
		}
		if ct := rec.Header().Get("Content-Type"); ct == "application/json" && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("invalid JSON answer %q for %q", rec.Body, body)
		}
	})
}

func post(body, sid string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		r.Header.Set("Mcp-Session-Id", sid)
	}
	return r
}
