package interop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/internal/transport/sse"
	"github.com/mcpstack/mcpstack/internal/transport/streamable"
	"github.com/mcpstack/mcpstack/interop"
	gen "github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// revisions are the revisions the Go SDK client speaks: the four session
// revisions it negotiates with initialize, and 2026-07-28, which it
// discovers with server/discover and speaks without a session.
var revisions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", statelessRevision}

// statelessRevision has no session: no Mcp-Session-Id, no ping, no
// logging/setLevel, and a missing resource is -32602 rather than -32002.
const statelessRevision = "2026-07-28"

// elicitationSince is the first revision with elicitation/create.
const elicitationSince = "2025-06-18"

// titleSince is the first revision with BaseMetadata.title (serverInfo.title).
const titleSince = "2025-06-18"

// completionsSince is the first revision with the completions capability.
const completionsSince = "2025-03-26"

// Values the client side of the scenarios uses.
const (
	samplingPrompt = "What is 2+2?"
	samplingAnswer = "Four."
	samplingModel  = "interop-test-model"
	blockPrompt    = "block until cancelled" // the sampling handler waits for cancellation
	elicitMessage  = "Please tell us who you are"
	elicitUser     = "octocat"
	elicitEmail    = "octocat@example.com"
	promptArg1     = "alpha-value"
	promptArg2     = "beta-value"
	slowStep       = 500 * time.Millisecond // step of the HTTP cancellation server
	callTimeout    = 15 * time.Second
)

// mcpstackBin is the binary TestMain builds (or MCPSTACK_BIN names) for the
// tests that run mcpstack as a process.
var mcpstackBin string

func TestMain(m *testing.M) { os.Exit(runTests(m)) }

// buildDir holds what the tests build (mcpstack, the examples); TestMain
// removes it.
var buildDir string

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "mcpstack-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	defer interop.RemoveBuilds()
	buildDir = dir
	if bin := os.Getenv("MCPSTACK_BIN"); bin != "" { // a binary built elsewhere (a release, an older commit)
		mcpstackBin = bin
		return m.Run()
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		fmt.Fprintln(os.Stderr, "interop: the go command is needed to build mcpstack:", err)
		return 1
	}
	bin := filepath.Join(dir, "mcpstack")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir = ".." // the repository root: package main
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "interop: go build -o %s . failed: %v\n%s", bin, err, out)
		return 1
	}
	mcpstackBin = bin
	return m.Run()
}

// TestGoSDK runs every scenario for each revision over each transport, with
// the official Go SDK as the client.
func TestGoSDK(t *testing.T) {
	for _, rev := range revisions {
		t.Run(rev, func(t *testing.T) {
			t.Parallel()
			for _, tr := range []string{"http", "stdio", "sse"} {
				if tr == "sse" && rev == statelessRevision {
					continue // HTTP+SSE serves the session revisions only
				}
				t.Run(tr, func(t *testing.T) {
					t.Parallel()
					runScenarios(t, rev, tr)
				})
			}
		})
	}
}

func runScenarios(t *testing.T, rev, transport string) {
	rec := newRecorder()
	var cs *mcp.ClientSession
	switch transport {
	case "http":
		url := startHTTP(t, conformance.New(conformance.WithStepDelay(0)))
		cs = connectHTTP(t, url, rev, rec)
	case "stdio":
		cs = connectStdio(t, rev, rec)
	case "sse":
		url := startSSE(t, conformance.New(conformance.WithStepDelay(0)))
		cs = connectSSE(t, url, rev, rec)
	}

	t.Run("initialize", func(t *testing.T) { checkInitialize(t, cs, rev, transport) })
	t.Run("tools", func(t *testing.T) { checkTools(t, cs) })
	t.Run("resources", func(t *testing.T) { checkResources(t, cs, rev) })
	t.Run("prompts", func(t *testing.T) { checkPrompts(t, cs) })
	t.Run("sampling", func(t *testing.T) { checkSampling(t, cs, rec) })
	t.Run("elicitation", func(t *testing.T) { checkElicitation(t, cs, rec, rev) })
	t.Run("progress", func(t *testing.T) { checkProgress(t, cs, rec) })
	t.Run("logging", func(t *testing.T) {
		if rev == statelessRevision {
			// logging/setLevel is gone; the level travels in each request's
			// _meta, which the SDK's CallTool does not set. The server side
			// is covered by server/testdata/transcripts.
			t.Skip("2026-07-28 has no logging/setLevel")
		}
		checkLogging(t, cs, rec)
	})
	t.Run("cancellation", func(t *testing.T) {
		switch transport {
		case "http":
			// A server whose progress tool takes 2*slowStep, observed from
			// inside: the tool must end with the cancellation.
			obs := &observed{Fixtures: conformance.New(conformance.WithStepDelay(slowStep)), ends: make(chan toolEnd, 16)}
			slowRec := newRecorder()
			slow := connectHTTP(t, startHTTP(t, obs), rev, slowRec)
			checkCancelProgress(t, slow, slowRec, obs)
		case "sse":
			obs := &observed{Fixtures: conformance.New(conformance.WithStepDelay(slowStep)), ends: make(chan toolEnd, 16)}
			slowRec := newRecorder()
			slow := connectSSE(t, startSSE(t, obs), rev, slowRec)
			checkCancelProgress(t, slow, slowRec, obs)
		case "stdio":
			// The binary's progress tool takes 100ms; what the server does
			// with the cancellation is seen through cancellation_sampling.
			checkCancelProgress(t, cs, rec, nil)
		}
	})
	t.Run("cancellation_sampling", func(t *testing.T) { checkCancelSampling(t, cs, rec) })
}

// ---------------------------------------------------------------------------
// Transports

// startHTTP serves h at /mcp of a loopback httptest server, stopped at the
// end of the test.
func startHTTP(t *testing.T, h gen.Handler) string {
	t.Helper()
	srv := server.New(h, server.WithStrict(true))
	endpoint := streamable.New(srv)
	mux := http.NewServeMux()
	mux.Handle("/mcp", endpoint)
	ts := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(ts.Close)           // runs last: every request has ended by then
	t.Cleanup(func() {
		endpoint.Shutdown() // GET streams end
		srv.Close()         // sessions end, calls in flight are cancelled
	})
	return ts.URL + "/mcp"
}

// startSSE serves h over HTTP+SSE (/sse and /messages) of a loopback
// httptest server, stopped at the end of the test; it returns the /sse URL.
func startSSE(t *testing.T, h gen.Handler) string {
	t.Helper()
	srv := server.New(h, server.WithStrict(true))
	endpoint := sse.New(srv)
	mux := http.NewServeMux()
	mux.Handle("/sse", endpoint.Stream())
	mux.Handle("/messages", endpoint.Messages())
	ts := httptest.NewServer(mux) // listens on 127.0.0.1
	t.Cleanup(ts.Close)           // runs last: every request has ended by then
	t.Cleanup(func() {
		endpoint.Shutdown()
		srv.Close() // sessions end, so do their streams
	})
	return ts.URL + "/sse"
}

// connectSSE connects the SDK's HTTP+SSE client. The GET stream lives in
// Connect's context, so that context must outlast Connect.
func connectSSE(t *testing.T, url, rev string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	timer := time.AfterFunc(callTimeout, cancel) // bounds the connection only
	cs, err := newClient(rec).Connect(ctx, &mcp.SSEClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	timer.Stop()
	if err != nil {
		t.Fatalf("connect over HTTP+SSE proposing %s: %v", rev, err)
	}
	t.Cleanup(func() { _ = cs.Close() }) // runs first: the GET ends
	return cs
}

func newClient(rec *recorder) *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "mcpstack-interop", Version: "test"}, &mcp.ClientOptions{
		CreateMessageHandler:        rec.sample,
		ElicitationHandler:          rec.elicit,
		LoggingMessageHandler:       rec.log,
		ProgressNotificationHandler: rec.progress,
	})
}

func connectHTTP(t *testing.T, url, rev string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	transport := &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := newClient(rec).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		t.Fatalf("connect over http proposing %s: %v", rev, err)
	}
	t.Cleanup(func() { _ = cs.Close() }) // runs first: DELETE the session
	return cs
}

// connectStdio runs the mcpstack binary as a child process; the cleanup
// closes its stdin and requires it to exit by itself, with status 0.
func connectStdio(t *testing.T, rev string, rec *recorder) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(mcpstackBin, "serve", "--stdio", "--profile", "conformance", "--strict", "--log-level", "debug")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	transport := &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := newClient(rec).Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: rev})
	if err != nil {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		t.Fatalf("connect over stdio proposing %s: %v\nserver stderr:\n%s", rev, err, stderr)
	}
	t.Cleanup(func() {
		start := time.Now()
		err := cs.Close() // closes stdin, waits for the exit (SIGTERM/SIGKILL after TerminateDuration)
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			t.Errorf("mcpstack did not exit after its stdin closed: %v", err)
		} else if !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("mcpstack ended with %v after %v (want exit status 0 on EOF): close: %v", cmd.ProcessState, time.Since(start).Round(time.Millisecond), err)
		}
		if t.Failed() {
			t.Logf("mcpstack stderr:\n%s", stderr)
		}
	})
	return cs
}

type lockedBuffer = syncbuf.Buffer

// observed is the conformance fixtures with tools/call watched from the
// server side: every call's end (its error, how long it ran) is reported.
type observed struct {
	*conformance.Fixtures
	ends chan toolEnd
}

type toolEnd struct {
	name string
	err  error
	took time.Duration
}

func (o *observed) CallTool(ctx context.Context, p *gen.CallToolRequestParams) (*gen.CallToolResult, error) {
	start := time.Now()
	r, err := o.Fixtures.CallTool(ctx, p)
	select {
	case o.ends <- toolEnd{name: p.Name, err: err, took: time.Since(start)}:
	default:
	}
	return r, err
}

// ---------------------------------------------------------------------------
// The client side: what the handlers saw

type progressEvent struct {
	progress, total float64
	message         string
	at              time.Time
}

type recorder struct {
	mu       sync.Mutex
	progs    map[string][]progressEvent // by progress token
	logs     []*mcp.LoggingMessageParams
	sampled  []*mcp.CreateMessageParams
	elicited []*mcp.ElicitParams

	blockStarted   chan struct{} // a sampling request with blockPrompt arrived
	blockCancelled chan struct{} // ... and its context was cancelled
	unblock        chan struct{} // closed when the test no longer waits for that
	unblockOnce    sync.Once
}

func newRecorder() *recorder {
	return &recorder{
		progs:          map[string][]progressEvent{},
		blockStarted:   make(chan struct{}, 1),
		blockCancelled: make(chan struct{}, 1),
		unblock:        make(chan struct{}),
	}
}

func (r *recorder) sample(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	r.mu.Lock()
	r.sampled = append(r.sampled, req.Params)
	r.mu.Unlock()
	if len(req.Params.Messages) > 0 {
		if tc, ok := req.Params.Messages[0].Content.(*mcp.TextContent); ok && tc.Text == blockPrompt {
			r.blockStarted <- struct{}{}
			select {
			case <-ctx.Done():
				r.blockCancelled <- struct{}{}
				return nil, ctx.Err()
			case <-r.unblock:
				return nil, errors.New("interop: the blocked sampling request was never cancelled")
			case <-time.After(callTimeout):
				return nil, errors.New("interop: the blocked sampling request was never cancelled")
			}
		}
	}
	return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: samplingAnswer}, Model: samplingModel, Role: "assistant"}, nil
}

func (r *recorder) elicit(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	r.mu.Lock()
	r.elicited = append(r.elicited, req.Params)
	r.mu.Unlock()
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": elicitUser, "email": elicitEmail}}, nil
}

func (r *recorder) log(_ context.Context, req *mcp.LoggingMessageRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, req.Params)
}

func (r *recorder) progress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	r.mu.Lock()
	defer r.mu.Unlock()
	key := fmt.Sprint(p.ProgressToken)
	r.progs[key] = append(r.progs[key], progressEvent{progress: p.Progress, total: p.Total, message: p.Message, at: time.Now()})
}

func (r *recorder) progressOf(token string) []progressEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.progs[token])
}

func (r *recorder) logCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.logs)
}

// eventually polls cond until it holds or d passes.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func callCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return ctx
}

// texts returns the text of each text block, and fails on any other kind.
func texts(t *testing.T, content []mcp.Content) []string {
	t.Helper()
	var out []string
	for i, c := range content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("content[%d] is %T, want text", i, c)
		}
		out = append(out, tc.Text)
	}
	return out
}

// oneText calls a tool and returns the text of its single text block; the
// result must not be an error.
func oneText(t *testing.T, ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) string {
	t.Helper()
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		t.Fatalf("tools/call %s: %v", params.Name, err)
	}
	got := texts(t, res.Content)
	if res.IsError || len(got) != 1 {
		t.Fatalf("tools/call %s: isError=%v content=%q, want one text block and no error", params.Name, res.IsError, got)
	}
	return got[0]
}

// ---------------------------------------------------------------------------
// Scenarios

func checkInitialize(t *testing.T, cs *mcp.ClientSession, rev, transport string) {
	res := cs.InitializeResult()
	if res == nil {
		t.Fatal("no initialize result")
	}
	if res.ProtocolVersion != rev {
		t.Errorf("negotiated protocolVersion %q, proposed %q", res.ProtocolVersion, rev)
	}
	if res.ServerInfo == nil {
		t.Fatal("initialize result without serverInfo")
	}
	if res.ServerInfo.Name != "mcpstack-conformance" || res.ServerInfo.Version != "dev" {
		t.Errorf("serverInfo = %+v, want name mcpstack-conformance, version dev", *res.ServerInfo)
	}
	// title exists from 2025-06-18 on; the server projects it away before.
	if wantTitle := rev >= titleSince; (res.ServerInfo.Title != "") != wantTitle {
		t.Errorf("serverInfo.title = %q in %s (want it present: %v)", res.ServerInfo.Title, rev, wantTitle)
	}
	if res.Instructions != conformance.Instructions {
		t.Errorf("instructions = %q, want %q", res.Instructions, conformance.Instructions)
	}
	c := res.Capabilities
	if c == nil {
		t.Fatal("initialize result without capabilities")
	}
	if c.Tools == nil || !c.Tools.ListChanged {
		t.Errorf("capabilities.tools = %+v, want listChanged", c.Tools)
	}
	if c.Resources == nil || !c.Resources.Subscribe || !c.Resources.ListChanged {
		t.Errorf("capabilities.resources = %+v, want subscribe and listChanged", c.Resources)
	}
	if c.Prompts == nil || !c.Prompts.ListChanged {
		t.Errorf("capabilities.prompts = %+v, want listChanged", c.Prompts)
	}
	if c.Logging == nil {
		t.Error("capabilities.logging missing")
	}
	if wantCompl := rev >= completionsSince; (c.Completions != nil) != wantCompl {
		t.Errorf("capabilities.completions = %+v in %s (want it present: %v)", c.Completions, rev, wantCompl)
	}
	if rev == statelessRevision {
		if cs.ID() != "" {
			t.Errorf("Mcp-Session-Id %q in a stateless revision", cs.ID())
		}
		return
	}
	if transport == "http" && cs.ID() == "" {
		t.Error("no Mcp-Session-Id over http")
	}
	if err := cs.Ping(callCtx(t), nil); err != nil {
		t.Errorf("ping: %v", err)
	}
}

func checkTools(t *testing.T, cs *mcp.ClientSession) {
	ctx := callCtx(t)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	for _, name := range []string{
		conformance.ToolSimpleText, conformance.ToolImageContent, conformance.ToolAudioContent,
		conformance.ToolEmbeddedResource, conformance.ToolMultipleContentTypes, conformance.ToolWithLogging,
		conformance.ToolWithProgress, conformance.ToolErrorHandling, conformance.ToolSampling,
		conformance.ToolElicitation, conformance.ToolElicitationDefaults, conformance.ToolElicitationEnums,
	} {
		tool, ok := byName[name]
		if !ok {
			t.Errorf("tools/list lacks %s", name)
			continue
		}
		if tool.Description == "" {
			t.Errorf("tool %s has no description", name)
		}
		schema, err := json.Marshal(tool.InputSchema)
		if err != nil || !strings.Contains(string(schema), `"type":"object"`) {
			t.Errorf("tool %s inputSchema = %s (%v), want an object schema", name, schema, err)
		}
	}
	if s, _ := json.Marshal(byName[conformance.ToolSampling].InputSchema); !strings.Contains(string(s), `"prompt"`) {
		t.Errorf("test_sampling inputSchema = %s, want a prompt property", s)
	}
	if got := oneText(t, ctx, cs, &mcp.CallToolParams{Name: conformance.ToolSimpleText}); got != conformance.SimpleText {
		t.Errorf("test_simple_text = %q, want %q", got, conformance.SimpleText)
	}
	// A tool failure is a result with isError, not a JSON-RPC error.
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: conformance.ToolErrorHandling})
	if err != nil {
		t.Fatalf("tools/call test_error_handling: %v", err)
	}
	if got := texts(t, r.Content); !r.IsError || !slices.Equal(got, []string{conformance.ErrorText}) {
		t.Errorf("test_error_handling: isError=%v content=%q, want isError and %q", r.IsError, got, conformance.ErrorText)
	}
}

func checkResources(t *testing.T, cs *mcp.ClientSession, rev string) {
	ctx := callCtx(t)
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatalf("resources/list: %v", err)
	}
	names := map[string]string{}
	for _, r := range list.Resources {
		names[r.URI] = r.Name
	}
	for uri, name := range map[string]string{
		conformance.URIStaticText: "static-text", conformance.URIStaticBinary: "static-binary", conformance.URIWatched: "watched-resource",
	} {
		if names[uri] != name {
			t.Errorf("resources/list: %s has name %q, want %q (listed: %v)", uri, names[uri], name, names)
		}
	}
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatalf("resources/templates/list: %v", err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != conformance.URITemplate {
		t.Errorf("resources/templates/list = %+v, want only %s", tmpl.ResourceTemplates, conformance.URITemplate)
	}

	rd, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: conformance.URIStaticText})
	if err != nil {
		t.Fatalf("resources/read %s: %v", conformance.URIStaticText, err)
	}
	if len(rd.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents, want 1", conformance.URIStaticText, len(rd.Contents))
	}
	if c := rd.Contents[0]; c.URI != conformance.URIStaticText || c.MIMEType != "text/plain" || c.Text != conformance.StaticText || c.Blob != nil {
		t.Errorf("resources/read %s = %+v, want text %q (text/plain)", conformance.URIStaticText, *c, conformance.StaticText)
	}

	const templated = "test://template/123/data"
	rd, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: templated})
	if err != nil {
		t.Fatalf("resources/read %s: %v", templated, err)
	}
	if len(rd.Contents) != 1 || rd.Contents[0].URI != templated || !strings.Contains(rd.Contents[0].Text, "123") {
		t.Fatalf("resources/read %s = %+v, want one text content containing 123", templated, rd.Contents)
	}
	var data struct {
		ID   string `json:"id"`
		Data string `json:"data"`
	}
	if err := json.Unmarshal([]byte(rd.Contents[0].Text), &data); err != nil || data.ID != "123" || data.Data != "Data for ID: 123" {
		t.Errorf("resources/read %s text = %s (%v), want id 123 and data %q", templated, rd.Contents[0].Text, err, "Data for ID: 123")
	}

	// A missing resource is -32002 up to 2025-11-25, -32602 after.
	want := wire.CodeResourceNotFound
	if rev == statelessRevision {
		want = wire.CodeInvalidParams
	}
	_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://no-such-resource"})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != int64(want) {
		t.Errorf("resources/read of a missing resource: err = %v, want a JSON-RPC error %d", err, want)
	}
}

func checkPrompts(t *testing.T, cs *mcp.ClientSession) {
	ctx := callCtx(t)
	list, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatalf("prompts/list: %v", err)
	}
	var names []string
	for _, p := range list.Prompts {
		names = append(names, p.Name)
		if p.Name == conformance.PromptWithArguments {
			var args []string
			for _, a := range p.Arguments {
				if a.Required {
					args = append(args, a.Name)
				}
			}
			if !slices.Equal(args, []string{"arg1", "arg2"}) {
				t.Errorf("%s required arguments = %v, want [arg1 arg2]", p.Name, args)
			}
		}
	}
	for _, want := range []string{conformance.PromptSimple, conformance.PromptWithArguments, conformance.PromptEmbeddedResource, conformance.PromptWithImage} {
		if !slices.Contains(names, want) {
			t.Errorf("prompts/list lacks %s (has %v)", want, names)
		}
	}
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: conformance.PromptWithArguments, Arguments: map[string]string{"arg1": promptArg1, "arg2": promptArg2}})
	if err != nil {
		t.Fatalf("prompts/get %s: %v", conformance.PromptWithArguments, err)
	}
	var all []string
	for _, m := range res.Messages {
		if m.Role != "user" {
			t.Errorf("prompt message role %q, want user", m.Role)
		}
		tc, ok := m.Content.(*mcp.TextContent)
		if !ok {
			t.Fatalf("prompt message content is %T, want text", m.Content)
		}
		all = append(all, tc.Text)
	}
	joined := strings.Join(all, "\n")
	if !strings.Contains(joined, promptArg1) || !strings.Contains(joined, promptArg2) {
		t.Errorf("prompts/get %s messages %q lack %q or %q", conformance.PromptWithArguments, all, promptArg1, promptArg2)
	}
	want := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", promptArg1, promptArg2)
	if !slices.Equal(all, []string{want}) {
		t.Errorf("prompts/get %s messages = %q, want [%q]", conformance.PromptWithArguments, all, want)
	}
}

func checkSampling(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	got := oneText(t, callCtx(t), cs, &mcp.CallToolParams{Name: conformance.ToolSampling, Arguments: map[string]any{"prompt": samplingPrompt}})
	if !strings.Contains(got, samplingAnswer) {
		t.Errorf("test_sampling = %q, want it to contain %q", got, samplingAnswer)
	}
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
	if p.MaxTokens != conformance.SamplingMaxTokens || len(p.Messages) != 1 {
		t.Fatalf("sampling/createMessage maxTokens=%d with %d messages, want %d and 1", p.MaxTokens, len(p.Messages), conformance.SamplingMaxTokens)
	}
	tc, ok := p.Messages[0].Content.(*mcp.TextContent)
	if !ok || p.Messages[0].Role != "user" || tc.Text != samplingPrompt {
		t.Errorf("sampling/createMessage message = %s %#v, want user text %q", p.Messages[0].Role, p.Messages[0].Content, samplingPrompt)
	}
}

func checkElicitation(t *testing.T, cs *mcp.ClientSession, rec *recorder, rev string) {
	ctx := callCtx(t)
	params := &mcp.CallToolParams{Name: conformance.ToolElicitation, Arguments: map[string]any{"message": elicitMessage}}
	if rev < elicitationSince {
		// elicitation/create does not exist in this revision: the server must
		// not send it (the client declared the capability anyway: the SDK
		// adds it whenever a handler is set); the tool reports a failure.
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			t.Fatalf("tools/call test_elicitation: %v", err)
		}
		got := texts(t, res.Content)
		if !res.IsError {
			t.Errorf("test_elicitation in %s = %q without isError; elicitation does not exist in this revision", rev, got)
		}
		rec.mu.Lock()
		n := len(rec.elicited)
		rec.mu.Unlock()
		if n != 0 {
			t.Errorf("the server sent elicitation/create %d times in %s", n, rev)
		}
		t.Logf("%s (no elicitation): %q", rev, got)
		return
	}
	got := oneText(t, ctx, cs, params)
	want := fmt.Sprintf(`User response: action=accept, content={"email":%q,"username":%q}`, elicitEmail, elicitUser)
	if got != want {
		t.Errorf("test_elicitation = %q, want %q", got, want)
	}
	rec.mu.Lock()
	elicited := slices.Clone(rec.elicited)
	rec.mu.Unlock()
	if len(elicited) != 1 {
		t.Fatalf("the elicitation handler ran %d times, want 1", len(elicited))
	}
	p := elicited[0]
	if p.Message != elicitMessage {
		t.Errorf("elicitation/create message = %q, want %q", p.Message, elicitMessage)
	}
	raw, _ := json.Marshal(p.RequestedSchema)
	var schema struct {
		Type       string                    `json:"type"`
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		t.Fatalf("requestedSchema %s: %v", raw, err)
	}
	slices.Sort(schema.Required)
	if schema.Type != "object" || schema.Properties["username"]["type"] != "string" || schema.Properties["email"]["type"] != "string" ||
		!slices.Equal(schema.Required, []string{"email", "username"}) {
		t.Errorf("elicitation/create requestedSchema = %s, want an object with string username and email, both required", raw)
	}
}

func checkProgress(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	const token = "progress-1"
	params := &mcp.CallToolParams{Name: conformance.ToolWithProgress}
	params.SetProgressToken(token)
	if got := oneText(t, callCtx(t), cs, params); got != conformance.ProgressDoneText {
		t.Errorf("test_tool_with_progress = %q, want %q", got, conformance.ProgressDoneText)
	}
	// Notifications may reach the SDK's handler after the response does.
	eventually(2*time.Second, func() bool { return len(rec.progressOf(token)) >= len(conformance.ProgressSteps) })
	events := rec.progressOf(token)
	if len(events) < 3 {
		t.Fatalf("progress handler saw %d notifications for %q, want >= 3", len(events), token)
	}
	var values []float64
	for i, e := range events {
		values = append(values, e.progress)
		if e.total != conformance.ProgressTotal {
			t.Errorf("progress[%d].total = %v, want %d", i, e.total, conformance.ProgressTotal)
		}
		if i > 0 && e.progress < events[i-1].progress {
			t.Errorf("progress decreased: %v", values)
		}
	}
	if !slices.Equal(values, conformance.ProgressSteps) {
		t.Errorf("progress values = %v, want %v", values, conformance.ProgressSteps)
	}
}

func checkLogging(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	ctx := callCtx(t)
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatalf("logging/setLevel debug: %v", err)
	}
	before := rec.logCount()
	if got := oneText(t, ctx, cs, &mcp.CallToolParams{Name: conformance.ToolWithLogging}); got != conformance.LoggingDoneText {
		t.Errorf("test_tool_with_logging = %q, want %q", got, conformance.LoggingDoneText)
	}
	want := len(conformance.LogMessages)
	eventually(2*time.Second, func() bool { return rec.logCount()-before >= want })
	rec.mu.Lock()
	logs := slices.Clone(rec.logs[before:])
	rec.mu.Unlock()
	if len(logs) < 3 {
		t.Fatalf("logging handler saw %d messages, want >= 3", len(logs))
	}
	var data []string
	for i, l := range logs {
		s, ok := l.Data.(string)
		if !ok {
			t.Errorf("log[%d].data is %T (%v), want a string", i, l.Data, l.Data)
		}
		data = append(data, s)
		if l.Level != "info" || l.Logger != conformance.LoggerName {
			t.Errorf("log[%d] level=%q logger=%q, want info/%s", i, l.Level, l.Logger, conformance.LoggerName)
		}
	}
	if !slices.Equal(data, conformance.LogMessages) {
		t.Errorf("log messages = %q, want %q", data, conformance.LogMessages)
	}
}

// checkCancelProgress cancels test_tool_with_progress after its first
// progress notification. The call must return a context error at once and
// the session must go on serving. With obs (an in-process server), the tool
// itself must have ended with the cancellation, without further progress.
func checkCancelProgress(t *testing.T, cs *mcp.ClientSession, rec *recorder, obs *observed) {
	const token = "cancel-1"
	params := &mcp.CallToolParams{Name: conformance.ToolWithProgress}
	params.SetProgressToken(token)
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	type outcome struct {
		res *mcp.CallToolResult
		err error
		at  time.Time
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		res, err := cs.CallTool(ctx, params)
		done <- outcome{res, err, time.Now()}
	}()
	if !eventually(5*time.Second, func() bool { return len(rec.progressOf(token)) >= 1 }) {
		t.Fatal("no progress notification within 5s")
	}
	select {
	case o := <-done:
		t.Fatalf("test_tool_with_progress ended before it could be cancelled (after %v): %v %v", o.at.Sub(start), o.res, o.err)
	default:
	}
	cancelled := time.Now()
	cancel()
	select {
	case o := <-done:
		if !errors.Is(o.err, context.Canceled) {
			t.Errorf("cancelled tools/call returned res=%+v err=%v, want context.Canceled", o.res, o.err)
		}
		if d := o.at.Sub(cancelled); d > time.Second {
			t.Errorf("cancelled tools/call returned %v after the cancellation, want promptly", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled tools/call did not return within 5s")
	}

	if obs != nil {
		select {
		case e := <-obs.ends:
			if e.name != conformance.ToolWithProgress || !errors.Is(e.err, context.Canceled) {
				t.Errorf("server side: %s ended with %v after %v, want context.Canceled", e.name, e.err, e.took)
			}
			if e.took >= 2*slowStep {
				t.Errorf("server side: the tool ran %v, as long as uncancelled (%v)", e.took, 2*slowStep)
			}
			t.Logf("server side: %s ended %v after its start with %v", e.name, e.took, e.err)
		case <-time.After(2 * slowStep):
			t.Error("server side: the tool did not end within a step after the cancellation")
		}
		// The next step would have come slowStep after the first.
		time.Sleep(slowStep / 5)
		if got := rec.progressOf(token); len(got) != 1 {
			t.Errorf("progress after the cancellation: %v, want only the first", got)
		}
	} else {
		// The binary's steps are 50ms: later notifications may have been
		// on their way; report what came.
		time.Sleep(200 * time.Millisecond)
		var vals []float64
		for _, e := range rec.progressOf(token) {
			vals = append(vals, e.progress)
		}
		t.Logf("progress values seen for the cancelled call: %v (of %v)", vals, conformance.ProgressSteps)
	}

	// The session goes on.
	if got := oneText(t, callCtx(t), cs, &mcp.CallToolParams{Name: conformance.ToolSimpleText}); got != conformance.SimpleText {
		t.Errorf("test_simple_text after the cancellation = %q, want %q", got, conformance.SimpleText)
	}
}

// checkCancelSampling cancels test_sampling while the server waits for the
// client's sampling answer: the server must stop waiting and tell the
// client, whose sampling handler then sees its context cancelled.
func checkCancelSampling(t *testing.T, cs *mcp.ClientSession, rec *recorder) {
	ctx, cancel := context.WithCancel(callCtx(t))
	defer cancel()
	defer rec.unblockOnce.Do(func() { close(rec.unblock) }) // so that a failure does not hold the session's close
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
	cancelled := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled tools/call returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled tools/call did not return within 5s")
	}
	select {
	case <-rec.blockCancelled:
		t.Logf("the client's sampling handler was cancelled %v after the tools/call", time.Since(cancelled).Round(time.Millisecond))
	case <-time.After(3 * time.Second):
		t.Error("the server did not cancel its sampling/createMessage (notifications/cancelled) within 3s of the tools/call's cancellation")
	}
	if got := oneText(t, callCtx(t), cs, &mcp.CallToolParams{Name: conformance.ToolSimpleText}); got != conformance.SimpleText {
		t.Errorf("test_simple_text after the cancellation = %q, want %q", got, conformance.SimpleText)
	}
}
