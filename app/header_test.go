package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
)

// A 2026-07-28 request repeats the arguments a tool marks x-mcp-header in
// Mcp-Param headers; the layer holds the two to each other (SEP-2243).
func TestParamHeaders(t *testing.T) {
	a := app.New("headers", "1")
	a.AddRawTool(app.Tool{Name: "deploy", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region":  map[string]any{"type": "string", "x-mcp-header": "Region"},
			"replica": map[string]any{"type": "integer", "x-mcp-header": "Replica"},
			"note":    map[string]any{"type": "string"},
		},
		"required": []any{"region"},
	}}, func(_ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		return app.Structured(map[string]any{"region": args["region"]})
	})
	srv := app.NewServer(a)
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithRateLimit(0, 0), mcphttp.WithByteRateLimit(0, 0))
	hs := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); hs.Close(); srv.Close() }()

	call := func(args map[string]any, headers map[string]string) (int, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
			"name": "deploy", "arguments": args,
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		}})
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(string(body)))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "deploy"} {
			req.Header.Set(k, v)
		}
		for k, v := range headers {
			req.Header.Add(k, v) // two spellings of one name: two values
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if i := strings.Index(string(b), "data: "); i >= 0 { // an event stream: its one message
			b = []byte(strings.TrimSpace(strings.SplitN(string(b[i+6:]), "\n", 2)[0]))
		}
		var msg map[string]any
		_ = json.Unmarshal(b, &msg)
		return resp.StatusCode, msg
	}
	hello := "=?base64?SGVsbG8=?="
	tests := []struct {
		name    string
		args    map[string]any
		headers map[string]string
		ok      bool
	}{
		{"plain", map[string]any{"region": "eu-west"}, map[string]string{"Mcp-Param-Region": "eu-west"}, true},
		{"Base64", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": hello}, true},
		{"Base64 of non-ASCII", map[string]any{"region": "Zürich"}, map[string]string{"Mcp-Param-Region": "=?base64?WsO8cmljaA==?="}, true},
		{"an integer", map[string]any{"region": "x", "replica": 3}, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Replica": "3"}, true},
		{"a name in another case", map[string]any{"region": "x"}, map[string]string{"mcp-param-region": "x"}, true},
		{"no wrapper end: a literal", map[string]any{"region": "=?base64?SGVsbG8="}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8="}, true},
		{"bad padding", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVsbG8?="}, false},
		{"bad characters", map[string]any{"region": "Hello"}, map[string]string{"Mcp-Param-Region": "=?base64?SGVs!!!bG8=?="}, false},
		{"another value", map[string]any{"region": "eu-west"}, map[string]string{"Mcp-Param-Region": "us-east"}, false},
		{"the header missing", map[string]any{"region": "eu-west"}, nil, false},
		{"the body missing", map[string]any{"region": "x"}, map[string]string{"Mcp-Param-Region": "x", "Mcp-Param-Replica": "3"}, false},
		{"sent twice", map[string]any{"region": "eu"}, map[string]string{"Mcp-Param-Region": "eu", "mcp-param-region": "us"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, msg := call(tc.args, tc.headers)
			errObj, _ := msg["error"].(map[string]any)
			switch {
			case tc.ok && (status != http.StatusOK || msg["result"] == nil):
				t.Errorf("status %d, %v; want a result", status, msg)
			case !tc.ok && (status != http.StatusBadRequest || errObj == nil || errObj["code"] != -32020.0):
				t.Errorf("status %d, %v; want 400 and -32020", status, msg)
			}
		})
	}
}

// The layer refuses the annotations the spec forbids, at registration.
func TestParamHeaderAnnotationsChecked(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props map[string]any
		extra map[string]any
		want  string
	}{
		{"an object", map[string]any{"a": map[string]any{"type": "object", "x-mcp-header": "A"}}, nil, "a string, integer or boolean"},
		{"a number", map[string]any{"a": map[string]any{"type": "number", "x-mcp-header": "A"}}, nil, "a string, integer or boolean"},
		{"names equal ignoring case", map[string]any{"a": map[string]any{"type": "string", "x-mcp-header": "Zone"}, "b": map[string]any{"type": "string", "x-mcp-header": "zone"}}, nil, "ignoring case"},
		{"not a header name", map[string]any{"a": map[string]any{"type": "string", "x-mcp-header": "a b"}}, nil, "not a header name"},
		{"nested", map[string]any{"a": map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"type": "string", "x-mcp-header": "B"}}}}, nil, "below a property's top level"},
		{"in $defs", map[string]any{}, map[string]any{"$defs": map[string]any{"d": map[string]any{"type": "string", "x-mcp-header": "D"}}}, "outside properties"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			schema := map[string]any{"type": "object", "properties": tc.props}
			for k, v := range tc.extra {
				schema[k] = v
			}
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), tc.want) {
					t.Errorf("panic %v, want one saying %q", r, tc.want)
				}
			}()
			app.New("x", "1").AddRawTool(app.Tool{Name: "t", InputSchema: schema}, nil)
		})
	}
}
