package conformance

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/png"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// fast is the fixtures with short pauses, for tests.
func fast(opts ...Option) *Fixtures {
	return New(append([]Option{WithStepDelay(time.Millisecond)}, opts...)...)
}

func num(t testing.TB, v any) float64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	f, err := n.Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func obj(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v (%T) is not an object", v, v)
	}
	return m
}

// content returns the content blocks of a wire result.
func content(t testing.TB, tree map[string]any) []map[string]any {
	t.Helper()
	arr, ok := tree["content"].([]any)
	if !ok {
		t.Fatalf("content is %T", tree["content"])
	}
	out := make([]map[string]any, len(arr))
	for i, b := range arr {
		out[i] = obj(t, b)
	}
	return out
}

func onlyText(t testing.TB, tree map[string]any) string {
	t.Helper()
	c := content(t, tree)
	if len(c) != 1 || c[0]["type"] != "text" {
		t.Fatalf("content %s, want one text block", mustJSON(tree["content"]))
	}
	s, _ := c[0]["text"].(string)
	return s
}

func isError(tree map[string]any) bool { b, _ := tree["isError"].(bool); return b }

func checkPNG(t testing.TB, b64 string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("image data is not base64: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("image data is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("image is %v, want 1x1", b)
	}
	r, g, bl, a := img.At(0, 0).RGBA()
	if r != 0xffff || g != 0 || bl != 0 || a != 0xffff {
		t.Fatalf("pixel is %v, want opaque red", img.At(0, 0))
	}
}

func checkWAV(t testing.TB, b64 string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("audio data is not base64: %v", err)
	}
	if len(raw) < 44 || string(raw[0:4]) != "RIFF" || string(raw[8:12]) != "WAVE" || string(raw[12:16]) != "fmt " || string(raw[36:40]) != "data" {
		t.Fatalf("audio data is not a WAV file: % x", raw[:min(len(raw), 44)])
	}
	if len(raw) != 44+wavSamples*2 {
		t.Fatalf("WAV is %d bytes, want %d", len(raw), 44+wavSamples*2)
	}
}

// call runs a tool through the Handler interface and returns its result as
// a 2025-11-25 client receives it.
func call(t testing.TB, h mcp.Handler, ctx context.Context, name string, args map[string]any) map[string]any {
	t.Helper()
	r, err := h.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for _, rev := range []string{"2025-06-18", "2026-07-28"} {
		wireResult(t, mcp.MethodCallTool, rev, r)
	}
	return wireResult(t, mcp.MethodCallTool, testRev, r)
}

func TestContentTools(t *testing.T) {
	f := fast()
	tests := []struct {
		tool  string
		args  map[string]any // nil: no arguments member at all
		check func(t *testing.T, tree map[string]any)
	}{
		{ToolSimpleText, nil, func(t *testing.T, tree map[string]any) {
			if got := onlyText(t, tree); got != SimpleText {
				t.Errorf("text %q, want %q", got, SimpleText)
			}
		}},
		{ToolImageContent, map[string]any{}, func(t *testing.T, tree map[string]any) {
			c := content(t, tree)
			if len(c) != 1 || c[0]["type"] != "image" || c[0]["mimeType"] != "image/png" {
				t.Fatalf("content %s, want one image/png block", mustJSON(c))
			}
			checkPNG(t, c[0]["data"].(string))
		}},
		{ToolAudioContent, map[string]any{}, func(t *testing.T, tree map[string]any) {
			c := content(t, tree)
			if len(c) != 1 || c[0]["type"] != "audio" || c[0]["mimeType"] != "audio/wav" {
				t.Fatalf("content %s, want one audio block of audio/wav", mustJSON(c))
			}
			checkWAV(t, c[0]["data"].(string))
		}},
		{ToolEmbeddedResource, map[string]any{}, func(t *testing.T, tree map[string]any) {
			c := content(t, tree)
			if len(c) != 1 || c[0]["type"] != "resource" {
				t.Fatalf("content %s, want one resource block", mustJSON(c))
			}
			res := obj(t, c[0]["resource"])
			want := map[string]any{"uri": "test://embedded-resource", "mimeType": "text/plain", "text": EmbeddedText}
			if mustJSON(res) != mustJSON(want) {
				t.Errorf("resource %s, want %s", mustJSON(res), mustJSON(want))
			}
		}},
		{ToolMultipleContentTypes, map[string]any{}, func(t *testing.T, tree map[string]any) {
			c := content(t, tree)
			var types []string
			for _, b := range c {
				types = append(types, b["type"].(string))
			}
			if !slices.Equal(types, []string{"text", "image", "resource"}) {
				t.Fatalf("content types %v, want text, image, resource", types)
			}
			if c[0]["text"] != MixedText {
				t.Errorf("text %q", c[0]["text"])
			}
			checkPNG(t, c[1]["data"].(string))
			res := obj(t, c[2]["resource"])
			if res["uri"] != "test://mixed-content-resource" || res["mimeType"] != "application/json" {
				t.Errorf("resource %s", mustJSON(res))
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(res["text"].(string)), &v); err != nil || v["test"] != "data" || v["value"] != 123.0 {
				t.Errorf("resource text %q (%v), want {test:data, value:123}", res["text"], err)
			}
		}},
		{ToolErrorHandling, map[string]any{}, func(t *testing.T, tree map[string]any) {
			if !isError(tree) {
				t.Errorf("isError %v, want true", tree["isError"])
			}
			if got := onlyText(t, tree); got != ErrorText {
				t.Errorf("text %q, want %q", got, ErrorText)
			}
		}},
		{ToolJSONSchema202012, map[string]any{"name": "Ada", "address": map[string]any{"city": "London"}, "contactMethod": "email", "email": "ada@example.com"}, func(t *testing.T, tree map[string]any) {
			got := onlyText(t, tree)
			if !strings.Contains(got, `"name":"Ada"`) || !strings.Contains(got, `"city":"London"`) {
				t.Errorf("text %q does not show the arguments", got)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			p := newPeer(t)
			tc.check(t, call(t, f, p.Ctx(), tc.tool, tc.args))
			if n := len(p.Notifications()) + len(p.Requests()); n != 0 {
				t.Errorf("%s sent %d messages to the client, want none", tc.tool, n)
			}
		})
	}
}

func TestLoggingTool(t *testing.T) {
	tests := []struct {
		level mcp.LoggingLevel
		want  []string
	}{
		{mcp.LoggingLevelDebug, LogMessages},
		{mcp.LoggingLevelInfo, LogMessages},
		{mcp.LoggingLevelWarning, nil}, // info is below what the client wants
		{"", nil},                      // the client set no level
	}
	for _, tc := range tests {
		t.Run(string(tc.level), func(t *testing.T) {
			p := newPeer(t)
			p.Level = tc.level
			tree := call(t, fast(), p.Ctx(), ToolWithLogging, map[string]any{})
			if got := onlyText(t, tree); got != LoggingDoneText {
				t.Errorf("text %q", got)
			}
			var got []string
			for _, n := range p.Notifications() {
				if n.Method != mcp.MethodLoggingMessage {
					t.Fatalf("unexpected %s", n.Method)
				}
				if n.Params["level"] != "info" || n.Params["logger"] != LoggerName {
					t.Errorf("log %s, want level info, logger %q", mustJSON(n.Params), LoggerName)
				}
				got = append(got, n.Params["data"].(string))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("log messages %q, want %q", got, tc.want)
			}
		})
	}
}

func TestProgressTool(t *testing.T) {
	tests := []struct {
		name  string
		token wire.ID
		want  []float64
	}{
		{"string token", wire.StringID("progress-test-1"), ProgressSteps},
		{"integer token", wire.IntID(7), ProgressSteps},
		{"no token", wire.ID{}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t)
			p.Token = tc.token
			tree := call(t, fast(), p.Ctx(), ToolWithProgress, map[string]any{})
			if got := onlyText(t, tree); got != ProgressDoneText {
				t.Errorf("text %q", got)
			}
			var got []float64
			for _, n := range p.Notifications() {
				if n.Method != mcp.MethodProgress {
					t.Fatalf("unexpected %s", n.Method)
				}
				if tok, err := wire.IDFromValue(n.Params["progressToken"]); err != nil || tok != tc.token {
					t.Errorf("progressToken %v, want %v", n.Params["progressToken"], tc.token)
				}
				if num(t, n.Params["total"]) != ProgressTotal {
					t.Errorf("total %v", n.Params["total"])
				}
				got = append(got, num(t, n.Params["progress"]))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("progress %v, want %v", got, tc.want)
			}
			if !slices.IsSorted(got) {
				t.Errorf("progress %v decreases", got)
			}
		})
	}
}

// A cancelled call stops between steps and reports the cancellation.
func TestStepsStopOnCancel(t *testing.T) {
	for _, tool := range []string{ToolWithProgress, ToolWithLogging, ToolReconnection} {
		t.Run(tool, func(t *testing.T) {
			p := newPeer(t)
			p.Token = wire.StringID("tok")
			ctx, cancel := context.WithCancel(p.Ctx())
			defer cancel()
			p.OnNotify = func(string) { cancel() }
			if tool == ToolReconnection {
				cancel()
			}
			start := time.Now()
			_, err := New(WithStepDelay(time.Hour)).CallTool(ctx, &mcp.CallToolRequestParams{Name: tool})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("took %v to stop", d)
			}
			if n := len(p.Notifications()); n > 1 {
				t.Errorf("%d notifications after the cancel", n)
			}
		})
	}
}

const samplingReply = `{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model","stopReason":"endTurn"}`

func TestSamplingTool(t *testing.T) {
	tests := []struct {
		name      string
		args      map[string]any
		noCap     bool
		answer    string
		answerErr error
		wantCalls int
		wantErr   bool
		wantText  string
	}{
		{name: "text answer", args: map[string]any{"prompt": "Test prompt for sampling"}, answer: samplingReply,
			wantCalls: 1, wantText: "LLM response: This is a test response from the client"},
		{name: "array answer", args: map[string]any{"prompt": "two blocks"},
			answer:    `{"role":"assistant","content":[{"type":"text","text":"one"},{"type":"image","data":"AA==","mimeType":"image/png"}],"model":"m"}`,
			wantCalls: 1, wantText: "LLM response: one\n[image content]"},
		{name: "client refuses", args: map[string]any{"prompt": "no"}, answerErr: &wire.Error{Code: -1, Message: "User rejected sampling request"},
			wantCalls: 1, wantErr: true, wantText: "The client refused the sampling request: User rejected sampling request (code -1)."},
		{name: "no sampling capability", args: map[string]any{"prompt": "x"}, noCap: true,
			wantErr: true, wantText: "The client does not support sampling."},
		{name: "missing prompt", args: map[string]any{},
			wantErr: true, wantText: `Invalid arguments: at /prompt: missing property 'prompt'`},
		{name: "prompt not a string", args: map[string]any{"prompt": 3.0},
			wantErr: true, wantText: `Invalid arguments: at /prompt: got number, want string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t)
			if tc.noCap {
				p.Caps = &mcp.ClientCapabilities{}
			}
			p.Answer = func(string, map[string]any) (string, error) { return tc.answer, tc.answerErr }
			tree := call(t, fast(), p.Ctx(), ToolSampling, tc.args)
			if isError(tree) != tc.wantErr {
				t.Errorf("isError %v, want %v", isError(tree), tc.wantErr)
			}
			if got := onlyText(t, tree); got != tc.wantText {
				t.Errorf("text %q, want %q", got, tc.wantText)
			}
			reqs := p.Requests()
			if len(reqs) != tc.wantCalls {
				t.Fatalf("%d requests to the client, want %d", len(reqs), tc.wantCalls)
			}
			if tc.wantCalls == 0 {
				return
			}
			r := reqs[0]
			if r.Method != mcp.MethodCreateMessage || num(t, r.Params["maxTokens"]) != SamplingMaxTokens {
				t.Errorf("request %s %s", r.Method, mustJSON(r.Params))
			}
			msgs := r.Params["messages"].([]any)
			want := map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": tc.args["prompt"]}}
			if len(msgs) != 1 || mustJSON(msgs[0]) != mustJSON(want) {
				t.Errorf("messages %s, want [%s]", mustJSON(msgs), mustJSON(want))
			}
		})
	}
}

// Outside a call with a client (a stateless server), sampling is a tool error.
func TestSamplingWithoutPeer(t *testing.T) {
	tree := call(t, fast(), context.Background(), ToolSampling, map[string]any{"prompt": "x"})
	if !isError(tree) || onlyText(t, tree) != "The client cannot be asked for sampling on this connection." {
		t.Errorf("result %s", mustJSON(tree))
	}
}

// A sampling request that is cancelled with the call is the call's error.
func TestSamplingCancelled(t *testing.T) {
	p := newPeer(t)
	ctx, cancel := context.WithCancel(p.Ctx())
	p.Answer = func(string, map[string]any) (string, error) { cancel(); return "", context.Canceled }
	_, err := fast().CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolSampling, Arguments: map[string]any{"prompt": "x"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestElicitationTool(t *testing.T) {
	tests := []struct {
		name     string
		answer   string
		wantText string
	}{
		{"accept", `{"action":"accept","content":{"username":"testuser","email":"test@example.com"}}`,
			`User response: action=accept, content={"email":"test@example.com","username":"testuser"}`},
		{"decline", `{"action":"decline"}`, `User response: action=decline, content={}`},
		{"cancel", `{"action":"cancel"}`, `User response: action=cancel, content={}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newPeer(t)
			p.Answer = func(string, map[string]any) (string, error) { return tc.answer, nil }
			tree := call(t, fast(), p.Ctx(), ToolElicitation, map[string]any{"message": "Please provide your information"})
			if got := onlyText(t, tree); got != tc.wantText || isError(tree) {
				t.Errorf("text %q (isError %v), want %q", got, isError(tree), tc.wantText)
			}
			reqs := p.Requests()
			if len(reqs) != 1 || reqs[0].Method != mcp.MethodElicit {
				t.Fatalf("requests %v", reqs)
			}
			params := reqs[0].Params
			if params["message"] != "Please provide your information" {
				t.Errorf("message %q", params["message"])
			}
			schema := obj(t, params["requestedSchema"])
			props := obj(t, schema["properties"])
			for _, k := range []string{"username", "email"} {
				if obj(t, props[k])["type"] != "string" {
					t.Errorf("property %s: %s", k, mustJSON(props[k]))
				}
			}
			if schema["type"] != "object" || mustJSON(schema["required"]) != `["username","email"]` {
				t.Errorf("schema %s", mustJSON(schema))
			}
		})
	}
}

func TestElicitationWithoutCapability(t *testing.T) {
	p := newPeer(t)
	p.Caps = &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}
	tree := call(t, fast(), p.Ctx(), ToolElicitationDefaults, nil)
	if !isError(tree) || onlyText(t, tree) != "The client does not support elicitation." || len(p.Requests()) != 0 {
		t.Errorf("result %s, %d requests", mustJSON(tree), len(p.Requests()))
	}
}

// The SEP-1034 form carries a default for every primitive type, and the
// tool reports what the user answered.
func TestElicitationDefaults(t *testing.T) {
	p := newPeer(t)
	p.Answer = func(string, map[string]any) (string, error) {
		return `{"action":"accept","content":{"name":"Jane Smith","age":25,"score":88,"status":"inactive","verified":false}}`, nil
	}
	tree := call(t, fast(), p.Ctx(), ToolElicitationDefaults, map[string]any{})
	want := `Elicitation completed: action=accept, content={"age":25,"name":"Jane Smith","score":88,"status":"inactive","verified":false}`
	if got := onlyText(t, tree); got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	props := obj(t, obj(t, p.Requests()[0].Params["requestedSchema"])["properties"])
	tests := []struct {
		field, typ string
		def        any
	}{
		{"name", "string", "John Doe"},
		{"age", "integer", json.Number("30")},
		{"score", "number", json.Number("95.5")},
		{"status", "string", "active"},
		{"verified", "boolean", true},
	}
	for _, tc := range tests {
		s := obj(t, props[tc.field])
		if s["type"] != tc.typ || s["default"] != tc.def {
			t.Errorf("%s: %s, want type %s default %v", tc.field, mustJSON(s), tc.typ, tc.def)
		}
	}
	if len(props) != len(tests) {
		t.Errorf("%d properties, want %d", len(props), len(tests))
	}
	if enum := obj(t, props["status"])["enum"].([]any); !slices.Contains(enum, any("active")) || len(enum) != 3 {
		t.Errorf("status enum %v", enum)
	}
}

// The SEP-1330 form has the five enum variants, each in its own shape.
func TestElicitationEnums(t *testing.T) {
	p := newPeer(t)
	p.Answer = func(string, map[string]any) (string, error) {
		return `{"action":"accept","content":{"untitledSingle":"option1","titledSingle":"value1","legacyEnum":"opt1","untitledMulti":["option1","option2"],"titledMulti":["value1","value2"]}}`, nil
	}
	tree := call(t, fast(), p.Ctx(), ToolElicitationEnums, map[string]any{})
	if got := onlyText(t, tree); !strings.HasPrefix(got, "Elicitation completed: action=accept, content={") || !strings.Contains(got, `"titledMulti":["value1","value2"]`) {
		t.Errorf("text %q", got)
	}
	props := obj(t, obj(t, p.Requests()[0].Params["requestedSchema"])["properties"])
	titled := func(list any) bool {
		arr, ok := list.([]any)
		if !ok || len(arr) != 3 {
			return false
		}
		for _, e := range arr {
			m, _ := e.(map[string]any)
			if _, ok := m["const"].(string); !ok {
				return false
			}
			if _, ok := m["title"].(string); !ok {
				return false
			}
		}
		return true
	}
	tests := []struct {
		field string
		ok    func(s map[string]any) bool
	}{
		{"untitledSingle", func(s map[string]any) bool {
			return s["type"] == "string" && s["enum"] != nil && s["oneOf"] == nil && s["enumNames"] == nil
		}},
		{"titledSingle", func(s map[string]any) bool {
			return s["type"] == "string" && titled(s["oneOf"]) && s["enum"] == nil
		}},
		{"legacyEnum", func(s map[string]any) bool {
			e, _ := s["enum"].([]any)
			n, _ := s["enumNames"].([]any)
			return s["type"] == "string" && len(e) == 3 && len(n) == len(e)
		}},
		{"untitledMulti", func(s map[string]any) bool {
			items, _ := s["items"].(map[string]any)
			return s["type"] == "array" && items["type"] == "string" && items["enum"] != nil && items["anyOf"] == nil
		}},
		{"titledMulti", func(s map[string]any) bool {
			items, _ := s["items"].(map[string]any)
			return s["type"] == "array" && titled(items["anyOf"]) && items["enum"] == nil
		}},
	}
	for _, tc := range tests {
		if s := obj(t, props[tc.field]); !tc.ok(s) {
			t.Errorf("%s: %s", tc.field, mustJSON(s))
		}
	}
}

func TestReconnectionTool(t *testing.T) {
	p := &streamClosingPeer{Peer: newPeer(t)}
	tree := call(t, fast(), peer.With(context.Background(), p), ToolReconnection, nil)
	if got := onlyText(t, tree); got != ReconnectionDoneText || p.closed != 1 {
		t.Errorf("text %q, stream closed %d times; want %q, once", got, p.closed, ReconnectionDoneText)
	}
	// Without a transport that can close the stream, the tool just answers.
	if got := onlyText(t, call(t, fast(), newPeer(t).Ctx(), ToolReconnection, nil)); got != ReconnectionDoneText {
		t.Errorf("text %q", got)
	}
}

func TestUnknownTool(t *testing.T) {
	_, err := fast().CallTool(context.Background(), &mcp.CallToolRequestParams{Name: "no_such_tool"})
	we := wireError(t, err, wire.CodeInvalidParams)
	if !strings.Contains(we.Message, `"no_such_tool"`) {
		t.Errorf("message %q does not name the tool", we.Message)
	}
}

var allTools = []string{
	ToolSimpleText, ToolImageContent, ToolAudioContent, ToolEmbeddedResource, ToolMultipleContentTypes,
	ToolWithLogging, ToolWithProgress, ToolErrorHandling, ToolSampling, ToolElicitation,
	ToolElicitationDefaults, ToolElicitationEnums, ToolJSONSchema202012, ToolHeader, ToolReconnection,
	ToolInputElicitation, ToolInputSampling, ToolInputListRoots, ToolInputMultiRound, ToolInputMultiple,
	ToolInputRequestState, ToolInputTamperedState, ToolInputCapabilities,
	ToolMissingCapability, ToolStreamingElicitation, ToolLogging, ToolTriggerToolChange, ToolTriggerPromptChange,
	ToolGreet, ToolSlowCompute, ToolFailingJob, ToolProtocolErrorJob, ToolConfirmDelete, ToolMultiInput, ToolTaskAfterInput,
}

func listTools(t *testing.T, h mcp.Handler, rev string) []map[string]any {
	t.Helper()
	var out []map[string]any
	cursor := ""
	for range 100 {
		r, err := h.ListTools(context.Background(), &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		tree := wireResult(t, mcp.MethodListTools, rev, r)
		for _, tl := range tree["tools"].([]any) {
			out = append(out, obj(t, tl))
		}
		cursor = r.NextCursor
		if cursor == "" {
			return out
		}
	}
	t.Fatal("the pages never end")
	return nil
}

func TestListTools(t *testing.T) {
	for _, rev := range revisionsOf(mcp.MethodListTools) {
		t.Run(rev, func(t *testing.T) {
			var names []string
			for _, tl := range listTools(t, fast(), rev) {
				names = append(names, tl["name"].(string))
				if d, _ := tl["description"].(string); d == "" {
					t.Errorf("%s has no description", tl["name"])
				}
				schema := obj(t, tl["inputSchema"])
				if schema["type"] != "object" {
					t.Errorf("%s: inputSchema %s", tl["name"], mustJSON(schema))
				}
				// Every revision lists the arguments, 2026-07-28 included, where
				// inputSchema is an open object; there a tool without
				// arguments has no properties member.
				props, ok := schema["properties"].(map[string]any)
				if !ok && rev != statelessRev {
					t.Errorf("%s: inputSchema without properties: %s", tl["name"], mustJSON(schema))
				}
				switch tl["name"] {
				case ToolSampling, ToolElicitation:
					arg := map[any]string{ToolSampling: "prompt", ToolElicitation: "message"}[tl["name"]]
					if obj(t, props[arg])["type"] != "string" || mustJSON(schema["required"]) != `["`+arg+`"]` {
						t.Errorf("%s: inputSchema %s, want a required string %q", tl["name"], mustJSON(schema), arg)
					}
				}
			}
			if !slices.Equal(names, allTools) {
				t.Errorf("tools %v, want %v", names, allTools)
			}
		})
	}
}

// suiteSchema202012 is json_schema_2020_12_tool's inputSchema as the suite
// (0.2.0) shows it.
const suiteSchema202012 = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {"address": {"$anchor": "addressDef", "type": "object",
    "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
}`

// The tool's inputSchema keeps its 2020-12 keywords (SEP-1613) and the
// SEP-2106 vocabulary ($anchor, allOf/anyOf, if/then/else) in every
// revision's listing, and so does the canonical type when it decodes it.
func TestJSONSchema202012Listing(t *testing.T) {
	want := canon(t, suiteSchema202012)
	for _, rev := range []string{"2025-11-25", statelessRev} {
		found := false
		for _, tl := range listTools(t, fast(), rev) {
			if tl["name"] != ToolJSONSchema202012 {
				continue
			}
			found = true
			if got := mustJSON(tl["inputSchema"]); got != want {
				t.Errorf("%s: inputSchema\n%s\nwant\n%s", rev, got, want)
			}
			if tl["description"] != "Tool with JSON Schema 2020-12 features" {
				t.Errorf("%s: description %q", rev, tl["description"])
			}
			// Decoded into the canonical type and encoded again, nothing is lost.
			spec := generated.Lookup(rev)
			var tool mcp.Tool
			if err := tool.DecodeValue(tl, spec.Index); err != nil {
				t.Fatalf("%s: decode: %v", rev, err)
			}
			if got := mustJSON(reparse(t, spec.Project(&tool.InputSchema))); got != want {
				t.Errorf("%s: inputSchema after a decode\n%s\nwant\n%s", rev, got, want)
			}
		}
		if !found {
			t.Errorf("%s: json_schema_2020_12_tool not listed", rev)
		}
	}
}

func TestListToolsPages(t *testing.T) {
	f := fast(WithPageSize(4))
	var pages [][]string
	cursor := ""
	for {
		r, err := f.ListTools(context.Background(), &mcp.PaginatedRequestParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range r.Tools {
			names = append(names, tl.Name)
		}
		pages = append(pages, names)
		if cursor = r.NextCursor; cursor == "" {
			break
		}
	}
	if want := (len(allTools) + 3) / 4; len(pages) != want || len(pages[0]) != 4 || len(pages[want-1]) != len(allTools)-4*(want-1) || !slices.Equal(slices.Concat(pages...), allTools) {
		t.Errorf("pages %v", pages)
	}
	// A cursor of another list, or garbage, is -32602.
	pr, err := fast(WithPageSize(1)).ListPrompts(context.Background(), nil)
	if err != nil || pr.NextCursor == "" {
		t.Fatalf("prompts: %v, next %q", err, pr.NextCursor)
	}
	for _, bad := range []string{pr.NextCursor, "garbage!", "djE6dG9vbHM6LTE"} {
		_, err := f.ListTools(context.Background(), &mcp.PaginatedRequestParams{Cursor: bad})
		wireError(t, err, wire.CodeInvalidParams)
	}
}

// Calls from many sessions at once share the fixtures safely.
func TestConcurrentCalls(t *testing.T) {
	f := fast()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := newPeer(t)
			p.Token = wire.IntID(int64(i))
			p.Session = "s" + string(rune('a'+i))
			p.Answer = func(string, map[string]any) (string, error) { return samplingReply, nil }
			ctx := p.Ctx()
			for _, tool := range []string{ToolWithProgress, ToolWithLogging, ToolSampling} {
				if _, err := f.CallTool(ctx, &mcp.CallToolRequestParams{Name: tool, Arguments: map[string]any{"prompt": "p"}}); err != nil {
					t.Error(err)
				}
			}
			if _, err := f.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: URIWatched}); err != nil {
				t.Error(err)
			}
			if n := len(p.Notifications()); n != 6 {
				t.Errorf("session %s: %d notifications, want 6", p.Session, n)
			}
		}()
	}
	wg.Wait()
}
