package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/mcphttp/websocket"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// TestMain lets the test binary be the stdio server of the stdio tests
// (stdio: ours; endless-line: one that writes a line without end; deaf:
// one that never reads its stdin; mute: one that closes its stdout and
// runs on).
func TestMain(m *testing.M) {
	if mode := os.Getenv("MCPSTACK_CLIENT_TEST_SERVER"); strings.HasPrefix(mode, "endless-line") {
		endlessLine(mode == "endless-line-after-initialize")
	}
	if os.Getenv("MCPSTACK_CLIENT_TEST_SERVER") == "deaf" { // reads nothing; Close kills it
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if os.Getenv("MCPSTACK_CLIENT_TEST_SERVER") == "mute" { // closes its stdout at once and runs on; Close kills it
		os.Stdout.Close()
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if os.Getenv("MCPSTACK_CLIENT_TEST_SERVER") == "stdio" {
		srv := server.New(conformance.New(conformance.WithStepDelay(0)), server.WithStrict(true))
		if err := stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fixtures serves the conformance fixtures over every HTTP transport, in
// strict mode (the server checks what it sends too).
func fixtures(t *testing.T) string {
	t.Helper()
	f := conformance.New(conformance.WithStepDelay(0))
	srv := server.New(f, server.WithStrict(true))
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0), mcphttp.WithTransport(websocket.Transport()))
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		shutdown(context.Background())
		hs.Close()
		srv.Close()
	})
	return hs.URL
}

func transports(t *testing.T, base string) map[string]func() client.Transport {
	ws := "ws" + strings.TrimPrefix(base, "http")
	return map[string]func() client.Transport{
		"streamable": func() client.Transport { return &client.StreamableHTTP{URL: base + "/mcp"} },
		"sse":        func() client.Transport { return &client.SSE{URL: base + "/sse"} },
		"websocket":  func() client.Transport { return &client.WebSocket{URL: ws + "/mcp/ws"} },
		"stdio": func() client.Transport {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "MCPSTACK_CLIENT_TEST_SERVER=stdio")
			return &client.Command{Cmd: cmd}
		},
	}
}

// newClient answers sampling and elicitation like a user would.
func newClient(rev string, opts ...client.Option) *client.Client {
	return client.New("client-test", "1.0.0", append([]client.Option{
		client.WithProtocolVersion(rev),
		client.WithSampling(func(_ context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test-model",
				Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: "sampled"}}}, nil
		}),
		client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada", "email": "ada@example.com", "name": "Ada", "ok": true}}, nil
		}),
		client.WithViolationHandler(func(v *client.Violation) { panic(v) }), // our server breaks no rule
	}, opts...)...)
}

func text(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if len(r.Content) != 1 {
		t.Fatalf("content %v", r.Content)
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T", r.Content[0])
	}
	return tc.Text
}

// Our client against our server: every revision over every transport that
// serves it, with the server's requests (sampling, elicitation), progress,
// resources and prompts, everything validated on both sides.
func TestAgainstOurServer(t *testing.T) {
	base := fixtures(t)
	for name, transport := range transports(t, base) {
		for _, spec := range generated.Specs {
			rev := spec.Revision
			if spec.Stateless() && name == "sse" {
				continue // HTTP+SSE is a transport of session revisions
			}
			t.Run(name+"/"+rev, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				s, err := newClient(rev).Connect(ctx, transport())
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if s.Revision() != rev || s.ServerInfo() == nil || s.ServerInfo().Name != "mcpstack-conformance" {
					t.Fatalf("negotiated %s with %+v", s.Revision(), s.ServerInfo())
				}
				n := 0
				for tool, err := range s.Tools(ctx) {
					if err != nil {
						t.Fatal(err)
					}
					if tool.Name == "" {
						t.Errorf("a tool without a name")
					}
					n++
				}
				if n < 10 {
					t.Errorf("%d tools", n)
				}
				r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolSimpleText})
				if err != nil || text(t, r) != conformance.SimpleText {
					t.Fatalf("simple text: %v %v", r, err)
				}
				r, err = s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolSampling, Arguments: map[string]any{"prompt": "hi"}})
				if err != nil || text(t, r) != "LLM response: sampled" {
					t.Fatalf("sampling: %v %v", r, err)
				}
				var mu sync.Mutex
				var progress []float64
				pctx := client.WithProgress(ctx, func(p *mcp.ProgressNotificationParams) {
					mu.Lock()
					progress = append(progress, p.Progress)
					mu.Unlock()
				})
				if r, err = s.CallTool(pctx, &mcp.CallToolRequestParams{Name: conformance.ToolWithProgress}); err != nil || text(t, r) != conformance.ProgressDoneText {
					t.Fatalf("progress: %v %v", r, err)
				}
				mu.Lock()
				if fmt.Sprint(progress) != fmt.Sprint(conformance.ProgressSteps) {
					t.Errorf("progress %v, want %v", progress, conformance.ProgressSteps)
				}
				mu.Unlock()
				rr, err := s.ReadResource(ctx, &mcp.ReadResourceRequestParams{URI: conformance.URIStaticText})
				if err != nil || len(rr.Contents) != 1 {
					t.Fatalf("read: %v %v", rr, err)
				}
				pr, err := s.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: conformance.PromptWithArguments, Arguments: map[string]string{"arg1": "a", "arg2": "b"}})
				if err != nil || len(pr.Messages) != 1 {
					t.Fatalf("prompt: %v %v", pr, err)
				}
				// A JSON-RPC error is a *wire.Error, not a violation.
				if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "no-such-tool"}); err == nil || !strings.Contains(err.Error(), "-32602") {
					t.Errorf("unknown tool: %v", err)
				}
			})
		}
	}
}

// An accepted form gets the defaults of the fields the user left out
// (SEP-1034): the server sees what the form showed.
func TestElicitationDefaults(t *testing.T) {
	a := app.New("forms", "1")
	a.AddRawTool(app.Tool{Name: "form"}, func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		r, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{Message: "Your details", RequestedSchema: mcp.ElicitRequestFormParamsRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{
				"name":     map[string]any{"type": "string", "default": "John Doe"},
				"age":      map[string]any{"type": "integer", "default": 30},
				"status":   map[string]any{"type": "string", "enum": []any{"active", "inactive"}, "default": "active"},
				"verified": map[string]any{"type": "boolean", "default": true},
			},
		}})
		if err != nil {
			return nil, err
		}
		return app.Structured(r.Content)
	})
	srv := app.NewServer(a, server.WithStrict(true))
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := client.New("t", "1", client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}))
	s, err := c.Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "form"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := text(t, r), `{"age":30,"name":"Ada","status":"active","verified":true}`; got != want {
		t.Errorf("the server got %s, want %s", got, want)
	}
}

// The client sends the Mcp-Param headers of the arguments a tool marks
// x-mcp-header (learnt from tools/list), Base64 where a value needs it:
// our server, which checks them, accepts its calls.
func TestParamHeadersSent(t *testing.T) {
	base := fixtures(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := client.New("t", "1", client.WithProtocolVersion("2026-07-28")).Connect(ctx, &client.StreamableHTTP{URL: base + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, err := range s.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, region := range []string{"eu-west", "Zürich", " padded "} {
		r, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolHeader, Arguments: map[string]any{"region": region}})
		if err != nil || text(t, r) != "Region: "+region {
			t.Errorf("%q: %v %v", region, r, err)
		}
	}
}
