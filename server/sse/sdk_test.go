package sse_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/methods/conformance"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/sse"
)

// Values the client side of the scenario uses.
const (
	samplingPrompt = "What is 2+2?"
	samplingAnswer = "Four."
	samplingModel  = "sse-test-model"
	blockPrompt    = "block until cancelled" // the sampling handler waits for cancellation
	promptArg1     = "alpha-value"
	promptArg2     = "beta-value"
	callTimeout    = 10 * time.Second
)

// TestGoSDKClient runs the scenario with the official Go SDK's HTTP+SSE
// client (SSEClientTransport) for each revision a client can negotiate: the
// transport is the 2024-11-05 one, the session's revision is the client's
// choice.
func TestGoSDKClient(t *testing.T) {
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"} {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			base := startServer(t)
			rec := newRecorder()
			cs := connectSDK(t, base+"/sse", rev, rec)
			if got := cs.InitializeResult(); got == nil || got.ProtocolVersion != rev || got.ServerInfo == nil || got.ServerInfo.Name != "mcpstack-conformance" {
				t.Fatalf("initialize result %+v, want protocolVersion %s and serverInfo mcpstack-conformance", got, rev)
			}
			t.Run("tools", func(t *testing.T) { checkTools(t, cs) })
			t.Run("resources", func(t *testing.T) { checkResources(t, cs) })
			t.Run("prompts", func(t *testing.T) { checkPrompts(t, cs) })
			t.Run("progress", func(t *testing.T) { checkProgress(t, cs, rec) })
			t.Run("logging", func(t *testing.T) { checkLogging(t, cs, rec) })
			t.Run("sampling", func(t *testing.T) { checkSampling(t, cs, rec) })
			t.Run("cancellation", func(t *testing.T) { checkCancellation(t, cs, rec) })
		})
	}
}

// startServer serves the conformance fixtures at /sse and /messages of a
// loopback httptest server, stopped at the end of the test.
func startServer(t *testing.T, opts ...sse.Option) string {
	t.Helper()
	srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
	h := sse.New(srv, opts...)
	mux := http.NewServeMux()
	mux.Handle("/sse", h.Stream())
	mux.Handle("/messages", h.Messages())
	ts := httptest.NewServer(mux) // 127.0.0.1
	t.Cleanup(ts.Close)           // last: every request has ended by then
	t.Cleanup(func() {
		h.Shutdown()
		srv.Close() // sessions end, so do their streams
	})
	return ts.URL
}

func connectSDK(t *testing.T, url, rev string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "sse-test", Version: "test"}, &mcp.ClientOptions{
		CreateMessageHandler:        rec.sample,
		LoggingMessageHandler:       rec.log,
		ProgressNotificationHandler: rec.progress,
	})
	// The GET stream lives in Connect's context: it must outlast Connect.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	timer := time.AfterFunc(callTimeout, cancel) // bounds the connection only
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	timer.Stop()
	if err != nil {
		t.Fatalf("connect over HTTP+SSE proposing %s: %v", rev, err)
	}
	t.Cleanup(func() { _ = cs.Close() }) // first: the GET ends
	return cs
}

// recorder is the client side: what its handlers saw.
type recorder struct {
	mu      sync.Mutex
	progs   map[string][]*mcp.ProgressNotificationParams
	logs    []*mcp.LoggingMessageParams
	sampled []*mcp.CreateMessageParams

	blockStarted   chan struct{}
	blockCancelled chan struct{}
}

func newRecorder() *recorder {
	return &recorder{
		progs:          map[string][]*mcp.ProgressNotificationParams{},
		blockStarted:   make(chan struct{}, 1),
		blockCancelled: make(chan struct{}, 1),
	}
}

func (r *recorder) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	if len(req.Params.Messages) > 0 {
		if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok && tc.Text == blockPrompt {
			r.blockStarted <- struct{}{}
			select {
			case <-ctx.Done():
				r.blockCancelled <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(callTimeout):
				return nil, errors.New("the blocked sampling request was never cancelled")
			}
		}
	}
	r.mu.Lock()
	r.sampled = append(r.sampled, req.Params)
	r.mu.Unlock()
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: samplingAnswer}, Model: samplingModel, Role: "assistant"}, nil
}

func (r *recorder) log(_ context.Context, req *mcp.LoggingMessageRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, req.Params)
}

func (r *recorder) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := fmt.Sprint(req.Params.ProgressToken)
	r.progs[key] = append(r.progs[key], req.Params)
}

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// oneText calls a tool and returns the text of its single text block.
func oneText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) string {
	t.Helper()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("tools/call %s: %v", params.Name, err)
	}
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("tools/call %s: isError=%v, %d content blocks, want one text block", params.Name, res.IsError, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("tools/call %s: content is %T, want text", params.Name, res.Content[0])
	}
	return tc.Text
}

func checkTools(t *testing.T, cs *mcp.ClientSession) {
	ctx := callCtx(t)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{conformance.ToolSimpleText, conformance.ToolWithProgress, conformance.ToolWithLogging, conformance.ToolSampling} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s (has %v)", want, names)
		}
	}
	if got := oneText(t, ctx, cs, &mcp.CallToolParams{Name: conformance.ToolSimpleText}); got != conformance.SimpleText {
		t.Errorf("test_simple_text = %q, want %q", got, conformance.SimpleText)
	}
}

func checkResources(t *testing.T, cs *mcp.ClientSession) {
	ctx := callCtx(t)
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	found := false
	for _, r := range list.Resources {
		if r.URI == conformance.URIStaticText {
			found = r.Name == "static-text" && r.MIMEType == "text/plain"
		}
	}
	if !found {
		t.Errorf("resources/list lacks %s (static-text, text/plain)", conformance.URIStaticText)
	}
	rd, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: conformance.URIStaticText})
	if err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	if len(rd.Contents) != 1 || rd.Contents[0].URI != conformance.URIStaticText || rd.Contents[0].Text != conformance.StaticText || rd.Contents[0].MIMEType != "text/plain" {
		t.Errorf("resources/read %s = %+v, want text %q", conformance.URIStaticText, rd.Contents, conformance.StaticText)
	}
}

func checkPrompts(t *testing.T, cs *mcp.ClientSession) {
	ctx := callCtx(t)
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: conformance.PromptWithArguments, Arguments: map[string]string{"arg1": promptArg1, "arg2": promptArg2}})
	if err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	want := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", promptArg1, promptArg2)
	if len(res.Messages) != 1 || res.Messages[0].Role != "user" {
		t.Fatalf("prompts/get: %d messages, want one user message", len(res.Messages))
	}
	if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != want {
		t.Errorf("prompts/get content %#v, want text %q", res.Messages[0].Content, want)
	}
}

func checkProgress(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	const token = "progress-1"
	params := &mcp.CallToolParams{Name: conformance.ToolWithProgress}
	params.SetProgressToken(token)
	if got := oneText(t, callCtx(t), cs, params); got != conformance.ProgressDoneText {
		t.Errorf("test_tool_with_progress = %q, want %q", got, conformance.ProgressDoneText)
	}
	get := func() []*mcp.ProgressNotificationParams {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.progs[token])
	}
	eventually(2*time.Second, func() bool { return len(get()) >= len(conformance.ProgressSteps) })
	var values []float64
	for _, p := range get() {
		values = append(values, p.Progress)
		if p.Total != conformance.ProgressTotal {
			t.Errorf("progress total %v, want %d", p.Total, conformance.ProgressTotal)
		}
	}
	if !slices.Equal(values, conformance.ProgressSteps) {
		t.Errorf("progress values %v, want %v", values, conformance.ProgressSteps)
	}
}

func checkLogging(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	ctx := callCtx(t)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	if got := oneText(t, ctx, cs, &mcp.CallToolParams{Name: conformance.ToolWithLogging}); got != conformance.LoggingDoneText {
		t.Errorf("test_tool_with_logging = %q, want %q", got, conformance.LoggingDoneText)
	}
	get := func() []*mcp.LoggingMessageParams {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return slices.Clone(rec.logs)
	}
	eventually(2*time.Second, func() bool { return len(get()) >= len(conformance.LogMessages) })
	var data []any
	for _, l := range get() {
		data = append(data, l.Data)
		if l.Level != "info" || l.Logger != conformance.LoggerName {
			t.Errorf("log level %q logger %q, want info, %s", l.Level, l.Logger, conformance.LoggerName)
		}
	}
	var want []any
	for _, m := range conformance.LogMessages {
		want = append(want, m)
	}
	if !slices.Equal(data, want) {
		t.Errorf("log data %v, want %v", data, want)
	}
}

func checkSampling(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	got := oneText(t, callCtx(t), cs, &mcp.CallToolParams{Name: conformance.ToolSampling, Arguments: map[string]any{"prompt": samplingPrompt}})
	if want := "LLM response: " + samplingAnswer; got != want {
		t.Errorf("test_sampling = %q, want %q", got, want)
	}
	rec.mu.Lock()
	sampled := slices.Clone(rec.sampled)
	rec.mu.Unlock()
	if len(sampled) != 1 {
		t.Fatalf("the sampling handler ran %d times, want 1", len(sampled))
	}
	p := sampled[0]
	tc, ok := p.Messages[0].Content.(*mcp.TextContent)
	if p.MaxTokens != conformance.SamplingMaxTokens || len(p.Messages) != 1 || !ok || tc.Text != samplingPrompt || p.Messages[0].Role != "user" {
		t.Errorf("sampling/createMessage params %+v, want one user text %q and maxTokens %d", p, samplingPrompt, conformance.SamplingMaxTokens)
	}
}

// checkCancellation cancels test_sampling while the server waits for the
// sampling answer: the client's notifications/cancelled must reach the
// call, which cancels its own sampling request (the client's handler sees
// its context end), and the session goes on.
func checkCancellation(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: conformance.ToolSampling, Arguments: map[string]any{"prompt": blockPrompt}})
		done <- err
	}()
	select {
	case <-rec.blockStarted:
	case err := <-done:
		t.Fatalf("test_sampling ended before its sampling request arrived: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("no sampling/createMessage within 5s")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled tools/call returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled tools/call did not return")
	}
	select {
	case <-rec.blockCancelled:
	case <-time.After(5 * time.Second):
		t.Error("the server did not cancel its sampling/createMessage after the tools/call was cancelled")
	}
	if got := oneText(t, callCtx(t), cs, &mcp.CallToolParams{Name: conformance.ToolSimpleText}); got != conformance.SimpleText {
		t.Errorf("test_simple_text after the cancellation = %q", got)
	}
}
