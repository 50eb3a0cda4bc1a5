package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeAPI is an OpenAI-compatible endpoint on 127.0.0.1 that speaks the
// real wire format. Each request is answered by the next handler in
// script (the last one repeats).
type fakeAPI struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	script []http.HandlerFunc
	bodies []map[string]any
	heads  []http.Header
	n      atomic.Int32
}

func newFakeAPI(t *testing.T, script ...http.HandlerFunc) *fakeAPI {
	f := &fakeAPI{t: t, script: script}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "not found: "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("request body %s: %v", b, err)
		}
		i := int(f.n.Add(1)) - 1
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.heads = append(f.heads, r.Header.Clone())
		h := f.script[min(i, len(f.script)-1)]
		f.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) requests() int { return int(f.n.Load()) }

func (f *fakeAPI) provider(mod func(*OpenAIConfig)) *OpenAI {
	cfg := OpenAIConfig{BaseURL: f.srv.URL + "/v1/", Model: "test-model", APIKey: "sk-test", Backoff: time.Millisecond, IdleTimeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	return NewOpenAI(cfg)
}

// sse writes events as the API does: "data: <json>\n\n", flushed.
func sse(w http.ResponseWriter, events ...string) {
	for _, e := range events {
		fmt.Fprintf(w, "data: %s\n\n", e)
	}
	w.(http.Flusher).Flush()
}

func streamHeaders(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func delta(s string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model-2024",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": s}, "finish_reason": nil}},
	})
	return string(b)
}

func finish(reason string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"test-model-2024","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]}`
}

func usageChunk(p, c int) string {
	return fmt.Sprintf(`{"id":"chatcmpl-1","object":"chat.completion.chunk","model":"test-model-2024","choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d}}`, p, c, p+c)
}

// answer streams the fragments, a finish reason, usage and [DONE].
func answer(fragments ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		for _, f := range fragments {
			sse(w, delta(f))
		}
		sse(w, finish("stop"), usageChunk(12, 3), "[DONE]")
	}
}

func status(code int, body string, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

var testReq = &Request{
	System: "Be brief.",
	Messages: []Message{
		{Role: RoleUser, Content: "Hi"},
		{Role: RoleAssistant, Content: "Hello!"},
		{Role: RoleUser, Content: "What is MCP?"},
	},
	MaxTokens: 77,
}

type collector struct {
	mu     sync.Mutex
	deltas []string
}

func (c *collector) add(d string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deltas = append(c.deltas, d)
	return nil
}

func (c *collector) got() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.deltas...)
}

func TestOpenAIStream(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		// The role-only first chunk, as OpenAI sends it.
		sse(w, `{"id":"c","object":"chat.completion.chunk","model":"test-model-2024","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
		// Two events in one write, a comment, CRLF line ends, an event
		// split across two writes, other SSE fields.
		io.WriteString(w, "data: "+delta("Model")+"\n\ndata: "+delta(" Context")+"\n\n: keep-alive\n\n")
		w.(http.Flusher).Flush()
		io.WriteString(w, "event: message\r\nid: 7\r\ndata: "+delta(" Proto")+"\r\n\r\n")
		io.WriteString(w, "data: "+delta("col")[:20])
		w.(http.Flusher).Flush()
		io.WriteString(w, delta("col")[20:]+"\n\n")
		sse(w, delta(" ✓"), finish("stop"), usageChunk(21, 7), "[DONE]")
	})
	var c collector
	resp, err := api.provider(nil).Generate(context.Background(), testReq, c.add)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Model", " Context", " Proto", "col", " ✓"}
	if !reflect.DeepEqual(c.got(), want) {
		t.Errorf("deltas %q, want %q", c.got(), want)
	}
	if resp.Text != "Model Context Protocol ✓" || resp.Provider != "openai" || resp.Model != "test-model-2024" || resp.StopReason != "stop" {
		t.Errorf("response %+v", resp)
	}
	if resp.Usage != (Usage{PromptTokens: 21, CompletionTokens: 7, TotalTokens: 28}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	// The request: model, stream with usage, the whole conversation after
	// the system prompt, the cap, the key.
	body := api.bodies[0]
	wantBody := map[string]any{
		"model": "test-model", "stream": true, "stream_options": map[string]any{"include_usage": true}, "max_tokens": float64(77),
		"messages": []any{
			map[string]any{"role": "system", "content": "Be brief."},
			map[string]any{"role": "user", "content": "Hi"},
			map[string]any{"role": "assistant", "content": "Hello!"},
			map[string]any{"role": "user", "content": "What is MCP?"},
		},
	}
	if !reflect.DeepEqual(body, wantBody) {
		t.Errorf("request body\n%v\nwant\n%v", body, wantBody)
	}
	h := api.heads[0]
	if h.Get("Authorization") != "Bearer sk-test" || h.Get("Content-Type") != "application/json" || h.Get("Accept") != "text/event-stream" {
		t.Errorf("request headers %v", h)
	}
}

func TestOpenAINoKeyForLocalServers(t *testing.T) {
	api := newFakeAPI(t, answer("ok"))
	p := api.provider(func(c *OpenAIConfig) { c.APIKey = "" })
	if _, err := p.Generate(context.Background(), testReq, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if h := api.heads[0].Get("Authorization"); h != "" {
		t.Errorf("Authorization %q sent without a key", h)
	}
}

func TestOpenAIUnavailable(t *testing.T) {
	for _, cfg := range []OpenAIConfig{
		{},                                      // the official API without a key
		{BaseURL: "https://API.openai.com/v1/"}, // also without a key
		{BaseURL: "ftp://example.invalid/v1", APIKey: "k"},
		{BaseURL: "not a url", APIKey: "k"},
	} {
		_, err := NewOpenAI(cfg).Generate(context.Background(), testReq, func(string) error { return nil })
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%+v: %v, want ErrUnavailable", cfg, err)
		}
	}
	if err := NewOpenAI(OpenAIConfig{APIKey: "sk"}).err; err != nil {
		t.Errorf("the official API with a key: %v", err)
	}
}

func TestOpenAIKeyFromEnv(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "b"}
	if k := APIKeyFromEnv(func(k string) string { return env[k] }); k != "b" {
		t.Errorf("key %q", k)
	}
	env["MCPSTACK_OPENAI_API_KEY"] = "a"
	if k := APIKeyFromEnv(func(k string) string { return env[k] }); k != "a" {
		t.Errorf("key %q", k)
	}
}

func TestOpenAIRetries(t *testing.T) {
	tests := []struct {
		name     string
		script   []http.HandlerFunc
		retries  int
		requests int
		err      string // "" for success
	}{
		{"500 then success", []http.HandlerFunc{status(500, `{"error":{"message":"boom","type":"server_error"}}`), answer("fine")}, 2, 2, ""},
		{"429 with Retry-After then success", []http.HandlerFunc{status(429, `{"error":{"message":"slow down","type":"rate_limit_exceeded"}}`, "Retry-After", "0"), answer("fine")}, 2, 2, ""},
		{"connection dropped before the headers, then success", []http.HandlerFunc{func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, answer("fine")}, 2, 2, ""},
		{"stream cut before any fragment, then success", []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) { streamHeaders(w); sse(w) }, answer("fine")}, 2, 2, ""},
		{"overloaded event, then success", []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) {
			streamHeaders(w)
			sse(w, `{"error":{"message":"The server is overloaded","type":"server_error","code":null}}`)
		}, answer("fine")}, 2, 2, ""},
		{"401 is final", []http.HandlerFunc{status(401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`)}, 2, 1,
			"HTTP 401: API error: Incorrect API key provided (invalid_request_error invalid_api_key)"},
		{"400 is final", []http.HandlerFunc{status(400, `{"error":{"message":"model not found","type":"invalid_request_error"}}`)}, 2, 1, "HTTP 400: API error: model not found"},
		{"plain-text error body", []http.HandlerFunc{status(404, "no such route")}, 2, 1, "HTTP 404: no such route"},
		{"retries run out", []http.HandlerFunc{status(503, `{"error":"upstream down"}`)}, 2, 3, "HTTP 503: upstream down (after 3 attempts)"},
		{"no retries", []http.HandlerFunc{status(503, `{"error":"upstream down"}`)}, -1, 1, "HTTP 503: upstream down"},
		{"bad chunk is final", []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) { streamHeaders(w); sse(w, `{not json`) }}, 2, 1, "bad stream chunk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, tc.script...)
			var c collector
			resp, err := api.provider(func(c *OpenAIConfig) { c.Retries = tc.retries }).Generate(context.Background(), testReq, c.add)
			if api.requests() != tc.requests {
				t.Errorf("%d requests, want %d", api.requests(), tc.requests)
			}
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Text != "fine" || !reflect.DeepEqual(c.got(), []string{"fine"}) {
					t.Errorf("text %q, deltas %q", resp.Text, c.got())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if len(c.got()) != 0 {
				t.Errorf("deltas %q from a failed call", c.got())
			}
		})
	}
}

// A stream that breaks after part of the answer went out is not retried:
// the caller gets a PartialError with what it has seen.
func TestOpenAICutStream(t *testing.T) {
	tests := []struct {
		name string
		h    http.HandlerFunc
		want error
	}{
		{"connection dropped", func(w http.ResponseWriter, r *http.Request) {
			streamHeaders(w)
			sse(w, delta("Half"), delta(" an"))
			panic(http.ErrAbortHandler)
		}, nil},
		{"stream ended without [DONE]", func(w http.ResponseWriter, r *http.Request) {
			streamHeaders(w)
			sse(w, delta("Half"), delta(" an"))
		}, ErrStreamCut},
		{"error event midway", func(w http.ResponseWriter, r *http.Request) {
			streamHeaders(w)
			sse(w, delta("Half"), delta(" an"), `{"error":{"message":"The server is overloaded","type":"server_error"}}`)
		}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := newFakeAPI(t, tc.h, answer("should not be asked"))
			var c collector
			_, err := api.provider(nil).Generate(context.Background(), testReq, c.add)
			var pe *PartialError
			if !errors.As(err, &pe) || pe.Streamed != "Half an" || pe.Provider != "openai" {
				t.Fatalf("error %v, want a PartialError after %q", err, "Half an")
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if api.requests() != 1 {
				t.Errorf("%d requests: a partly streamed answer was retried", api.requests())
			}
			if !reflect.DeepEqual(c.got(), []string{"Half", " an"}) {
				t.Errorf("deltas %q", c.got())
			}
		})
	}
}

// A finish reason without [DONE] (some servers) is a complete answer.
func TestOpenAIFinishWithoutDone(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		sse(w, delta("Done"), finish("length"))
	})
	resp, err := api.provider(nil).Generate(context.Background(), testReq, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Done" || resp.StopReason != "length" || !resp.Usage.Estimated || resp.Usage.CompletionTokens != 1 {
		t.Errorf("response %+v", resp)
	}
}

func TestOpenAISlow(t *testing.T) {
	// Silent after the first fragment: the idle timeout ends the call.
	stall := func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		sse(w, delta("wait"))
		<-r.Context().Done()
	}
	api := newFakeAPI(t, stall)
	start := time.Now()
	_, err := api.provider(func(c *OpenAIConfig) { c.IdleTimeout = 150 * time.Millisecond }).Generate(context.Background(), testReq, func(string) error { return nil })
	if !errors.Is(err, ErrIdle) {
		t.Fatalf("error %v, want ErrIdle", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}

	// Silent before the headers: idle too, and retried (nothing streamed).
	slowHeaders := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
	api = newFakeAPI(t, slowHeaders, answer("late but fine"))
	resp, err := api.provider(func(c *OpenAIConfig) { c.IdleTimeout = 150 * time.Millisecond }).Generate(context.Background(), testReq, func(string) error { return nil })
	if err != nil || resp.Text != "late but fine" || api.requests() != 2 {
		t.Fatalf("after a silent attempt: %+v, %v, %d requests", resp, err, api.requests())
	}

	// Slow but steady: each fragment resets the idle timer.
	steady := func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		for i := range 6 {
			time.Sleep(60 * time.Millisecond)
			sse(w, delta(fmt.Sprint(i)))
		}
		sse(w, finish("stop"), "[DONE]")
	}
	api = newFakeAPI(t, steady)
	resp, err = api.provider(func(c *OpenAIConfig) { c.IdleTimeout = 200 * time.Millisecond }).Generate(context.Background(), testReq, func(string) error { return nil })
	if err != nil || resp.Text != "012345" {
		t.Fatalf("steady stream: %+v, %v", resp, err)
	}

	// Steady but endless: the overall timeout ends it.
	endless := func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		for r.Context().Err() == nil {
			sse(w, delta("."))
			time.Sleep(20 * time.Millisecond)
		}
	}
	api = newFakeAPI(t, endless)
	_, err = api.provider(func(c *OpenAIConfig) { c.Timeout = 200 * time.Millisecond }).Generate(context.Background(), testReq, func(string) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "no complete answer within 200ms") {
		t.Fatalf("endless stream: %v", err)
	}
}

func TestOpenAICancel(t *testing.T) {
	started := make(chan struct{})
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		sse(w, delta("a"))
		close(started)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := api.provider(nil).Generate(ctx, testReq, func(string) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

// A delta the caller refuses stops the stream.
func TestOpenAIDeltaError(t *testing.T) {
	api := newFakeAPI(t, answer("a", "b", "c"))
	stop := errors.New("client gone")
	n := 0
	_, err := api.provider(nil).Generate(context.Background(), testReq, func(string) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 2 || api.requests() != 1 {
		t.Fatalf("error %v after %d deltas and %d requests", err, n, api.requests())
	}
}

// Servers that answer a stream request with one JSON body, and NoStream.
func TestOpenAIWhole(t *testing.T) {
	whole := status(200, `{"id":"x","object":"chat.completion","model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"All at once."},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`)
	for _, noStream := range []bool{false, true} {
		api := newFakeAPI(t, whole)
		var c collector
		resp, err := api.provider(func(c *OpenAIConfig) { c.NoStream = noStream }).Generate(context.Background(), testReq, c.add)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != "All at once." || resp.Model != "llama3" || resp.Usage.TotalTokens != 13 || !reflect.DeepEqual(c.got(), []string{"All at once."}) {
			t.Errorf("noStream=%v: %+v, deltas %q", noStream, resp, c.got())
		}
		if api.bodies[0]["stream"] != !noStream || (api.bodies[0]["stream_options"] != nil) == noStream {
			t.Errorf("noStream=%v: request %v", noStream, api.bodies[0])
		}
	}
}

// Without usage in the stream (NoStreamUsage, or a server that sends
// none), usage is estimated.
func TestOpenAIEstimatedUsage(t *testing.T) {
	api := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		streamHeaders(w)
		sse(w, delta("12345678"), finish("stop"), "[DONE]")
	})
	resp, err := api.provider(func(c *OpenAIConfig) { c.NoStreamUsage = true }).Generate(context.Background(), testReq, func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := api.bodies[0]["stream_options"]; ok {
		t.Errorf("stream_options sent: %v", api.bodies[0])
	}
	// "Be brief." 3+4, "Hi" 1+4, "Hello!" 2+4, "What is MCP?" 3+4 = 25.
	if resp.Usage != (Usage{PromptTokens: 25, CompletionTokens: 2, TotalTokens: 27, Estimated: true}) {
		t.Errorf("usage %+v", resp.Usage)
	}
}
