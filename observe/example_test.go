package observe_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http/httptest"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/observe"
	"github.com/mcpstack/mcpstack/server"
)

// An app served over HTTP, observed: its requests are in the Prometheus text at
// /metrics (served here with Metrics), labelled by the registered tool.
func Example() {
	a := app.New("hello", "1")
	app.AddTool(a, app.Tool{Name: "greet", Description: "Greets someone."}, func(ctx context.Context, in struct {
		Name string `json:"name"`
	}) (string, error) {
		return "Hello, " + in.Name + "!", nil
	})
	o := observe.New(observe.WithNames(a.Registered))
	srv := app.NewServer(a, server.WithObserver(o))
	defer srv.Close()

	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	h, shutdown := mcphttp.Handler(srv)
	defer shutdown(context.Background())
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "greet")
	h.ServeHTTP(httptest.NewRecorder(), req)

	rec := httptest.NewRecorder()
	o.Metrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "mcp_server_operation_duration_seconds_count") {
			fmt.Println(line)
		}
	}
	// Output:
	// mcp_server_operation_duration_seconds_count{error_type="",gen_ai_prompt_name="",gen_ai_tool_name="greet",mcp_method_name="tools/call",mcp_protocol_version="2026-07-28",network_transport="tcp"} 1
}
