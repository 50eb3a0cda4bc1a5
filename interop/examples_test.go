package interop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildExample builds one program of examples/ once per test run.
var buildExample = func() func(t *testing.T, name string) string {
	var mu sync.Mutex
	built := map[string]string{}
	return func(t *testing.T, name string) string {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		if bin, ok := built[name]; ok {
			return bin
		}
		bin := filepath.Join(buildDir, name)
		cmd := exec.Command("go", "build", "-o", bin, "./examples/"+name)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./examples/%s: %v\n%s", name, err, out)
		}
		built[name] = bin
		return bin
	}
}()

// TestExamplesWithGoSDK drives examples/hello and examples/weather with the
// official go-sdk client, over stdio and (weather) Streamable HTTP.
func TestExamplesWithGoSDK(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcpstack-interop", Version: "test"}, nil)

	t.Run("hello/stdio", func(t *testing.T) {
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(buildExample(t, "hello"))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
		if err != nil || res.IsError || textOf(res) != "Hello, Ada!" {
			t.Fatalf("greet: %v %v", res, err)
		}
	})

	weather := func(t *testing.T, cs *mcp.ClientSession) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo", "days": 2}})
		if err != nil || res.IsError {
			t.Fatalf("forecast: %v %v", res, err)
		}
		var out struct {
			City string `json:"city"`
			Days []struct {
				Date string `json:"date"`
			} `json:"days"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(b, &out) != nil || out.City != "Oslo" || len(out.Days) != 2 || out.Days[0].Date != "2026-07-28" {
			t.Errorf("forecast structured content %s", b)
		}
		for args, pointer := range map[string]string{`{"city":"Oslo","days":9}`: "/days", `{"city":5}`: "/city"} {
			var a map[string]any
			_ = json.Unmarshal([]byte(args), &a)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: a})
			if err != nil || !res.IsError || !strings.Contains(textOf(res), pointer) {
				t.Errorf("forecast %s: %v %v, want a tool error naming %s", args, res, err, pointer)
			}
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Atlantis"}}); err != nil || !res.IsError {
			t.Errorf("an unknown city: %v %v, want a tool error", res, err)
		}
		rd, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weather://cities"})
		if err != nil || len(rd.Contents) != 1 || !strings.Contains(rd.Contents[0].Text, "Lisbon") {
			t.Errorf("weather://cities: %v %v", rd, err)
		}
		rd, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "weather://city/Rome"})
		if err != nil || len(rd.Contents) != 1 || !strings.Contains(rd.Contents[0].Text, `"city":"Rome"`) {
			t.Errorf("weather://city/Rome: %v %v", rd, err)
		}
		pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "plan_trip", Arguments: map[string]string{"city": "Paris"}})
		if err != nil || len(pr.Messages) != 1 || !strings.Contains(fmt.Sprint(pr.Messages[0].Content), "3-day trip to Paris") {
			t.Errorf("plan_trip: %v %v", pr, err)
		}
		cr, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "plan_trip"},
			Argument: mcp.CompleteParamsArgument{Name: "city", Value: "l"}})
		if err != nil || fmt.Sprint(cr.Completion.Values) != "[Lisbon]" {
			t.Errorf("completion: %v %v", cr, err)
		}
	}
	t.Run("weather/stdio", func(t *testing.T) {
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(buildExample(t, "weather"))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		weather(t, cs)
	})
	t.Run("weather/http", func(t *testing.T) {
		addr := freeAddr(t)
		cmd := exec.Command(buildExample(t, "weather"), "--http", addr)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
		var cs *mcp.ClientSession
		var err error
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}, nil); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		weather(t, cs)
	})
}

func textOf(res *mcp.CallToolResult) string {
	if len(res.Content) != 1 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
