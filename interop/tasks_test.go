package interop

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// A 2025-11-25 task end to end over Streamable HTTP, with our client: the
// call starts as a task, asks the user for input while it runs (the
// question comes on the response of the open tasks/result, else on the
// session's GET stream; the answer goes back as a POST), and its result is
// fetched with tasks/result; the status notifications reach the client.
func TestTaskEndToEnd(t *testing.T) {
	a := app.New("tasks", "1")
	a.AddRawTool(app.Tool{Name: "greet_later", TaskSupport: "required"}, func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		time.Sleep(50 * time.Millisecond) // long enough to be followed
		r, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{Message: "Your name?", RequestedSchema: mcp.ElicitRequestFormParamsRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, err
		}
		name, _ := r.Content["name"].(string)
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: "Hello, " + name + "!"}}}, nil
	})
	srv := app.NewServer(a, server.WithStrict(true))
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var statuses []string
	c := client.New("interop", "1",
		client.WithProtocolVersion("2025-11-25"),
		client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
		}),
		client.WithNotificationHandler(func(_ context.Context, method string, p wire.Encoder) {
			if st, ok := p.(*mcp.TaskStatusNotificationParams); ok && method == mcp.MethodTaskStatus {
				mu.Lock()
				statuses = append(statuses, string(st.Status))
				mu.Unlock()
			}
		}),
		client.WithViolationHandler(func(v *client.Violation) { t.Errorf("violation: %v", v) }))
	s, err := c.Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if caps := s.ServerCapabilities(); caps.Tasks == nil || caps.Tasks.Requests == nil {
		t.Fatalf("no tasks capability: %+v", caps)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet_later"}); err == nil {
		t.Error("a required task tool answered a plain call")
	}
	task, err := s.StartTool(ctx, &mcp.CallToolRequestParams{Name: "greet_later"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if task.Status != "working" || task.TaskID == "" {
		t.Fatalf("started %+v", task)
	}
	got, err := s.GetTask(ctx, &mcp.GetTaskRequestParams{TaskID: task.TaskID})
	if err != nil || got.TaskID != task.TaskID {
		t.Fatalf("tasks/get: %+v %v", got, err)
	}
	res, err := s.ToolResult(ctx, task.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if tc, _ := res.Content[0].(*mcp.TextContent); tc == nil || tc.Text != "Hello, Ada!" {
		t.Errorf("result %+v", res.Content)
	}
	list, err := s.ListTasks(ctx, nil)
	if err != nil || len(list.Tasks) != 1 || list.Tasks[0].Status != "completed" {
		t.Errorf("tasks/list: %+v %v", list, err)
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		n := len(statuses)
		last := ""
		if n > 0 {
			last = statuses[n-1]
		}
		mu.Unlock()
		if last == "completed" {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(statuses) < 2 || statuses[0] != "input_required" || statuses[len(statuses)-1] != "completed" {
		t.Errorf("status notifications %v, want input_required ... completed", statuses)
	}
}

// tapped keeps what the server sends.
type tapped struct {
	mu   sync.Mutex
	sent []string
}

func (t *tapped) Message(_ string, dir server.Direction, msg []byte) {
	if dir == server.ServerToClient {
		t.mu.Lock()
		t.sent = append(t.sent, string(msg))
		t.mu.Unlock()
	}
}

func (t *tapped) count(substr string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, m := range t.sent {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// The 2026-07-28 tasks extension end to end over Streamable HTTP, with our
// client: a client that follows tasks (client.WithTasks) gets from CallTool
// the final result of a call the server ran as a task, its question
// answered on the way (tasks/update), a tool error as a result with
// isError, a crash as its JSON-RPC error; a client without the extension
// is refused a tool that runs only as a task (-32021).
func TestTaskExtensionEndToEnd(t *testing.T) {
	tap := &tapped{}
	srv := server.New(conformance.New(conformance.WithStepDelay(5*time.Millisecond)), server.WithStrict(true), server.WithTap(tap), server.WithTaskDelay(20*time.Millisecond))
	h, shutdown := mcphttp.Handler(srv)
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func(opts ...client.Option) *client.Session {
		c := client.New("interop", "1", append([]client.Option{client.WithProtocolVersion("2026-07-28"),
			client.WithElicitation(func(context.Context, mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}),
			client.WithViolationHandler(func(v *client.Violation) { t.Errorf("violation: %v", v) })}, opts...)...)
		s, err := c.Connect(ctx, &client.StreamableHTTP{URL: hs.URL + "/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := connect(client.WithTasks())
	if _, ok := s.ServerCapabilities().Extensions[mcp.ExtensionTasks]; !ok {
		t.Fatalf("server/discover declares no tasks extension: %+v", s.ServerCapabilities())
	}
	res, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolConfirmDelete, Arguments: map[string]any{"filename": "x.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	if txt, _ := res.Content[0].(*mcp.TextContent); txt == nil || txt.Text != "Deleted x.txt." {
		t.Errorf("confirm_delete: %+v", res.Content)
	}
	if tap.count(`"resultType":"task"`) != 1 || tap.count(`"inputRequests"`) == 0 {
		t.Errorf("the server sent %d tasks and %d input requests, want the call to have run as a task that asked", tap.count(`"resultType":"task"`), tap.count(`"inputRequests"`))
	}
	res, err = s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolFailingJob})
	if err != nil || res.IsError == nil || !*res.IsError {
		t.Errorf("failing_job: %+v, %v: want a result with isError", res, err)
	}
	var e *wire.Error
	_, err = s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolProtocolErrorJob})
	if !errors.As(err, &e) || e.Code != wire.CodeInternalError {
		t.Errorf("protocol_error_job: %v, want its -32603", err)
	}
	_, err = connect().CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolFailingJob})
	if !errors.As(err, &e) || e.Code != wire.CodeMissingRequiredClientCapability {
		t.Errorf("failing_job without the extension: %v, want -32021", err)
	}
}
