package conformance

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// test_streaming_elicitation streams progress around its question. Under
// 2026-07-28 the first round reports the start and ends with the
// input-required result (never a request of its own); the retry reports
// both steps and completes.
func TestStreamingElicitation(t *testing.T) {
	progress := func(p *peertest.Peer) []string {
		var out []string
		for _, n := range p.Notifications() {
			if n.Method != mcp.MethodProgress {
				t.Fatalf("unexpected %s", n.Method)
			}
			if n.Params["progressToken"] != "stream-1" || num(t, n.Params["total"]) != StreamingTotal {
				t.Errorf("progress %s", mustJSON(n.Params))
			}
			out = append(out, mustJSON(n.Params["progress"])+" "+n.Params["message"].(string))
		}
		return out
	}
	f := fast()
	r, err, peers := mrtr(t, allCaps(), respond, func(ctx context.Context) (*mcp.CallToolResult, error) {
		p := peerOf(ctx)
		p.Token = wire.StringID("stream-1")
		return f.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolStreamingElicitation})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyText(t, wireResult(t, mcp.MethodCallTool, statelessRev, r)); got != "Hello, Alice!" {
		t.Errorf("text %q", got)
	}
	if len(peers) != 2 {
		t.Fatalf("%d rounds, want 2", len(peers))
	}
	if got, want := progress(peers[0].Peer), []string{"0 " + streamingAskMessage}; !slices.Equal(got, want) {
		t.Errorf("round 1 progress %q, want %q", got, want)
	}
	if got, want := progress(peers[1].Peer), []string{"0 " + streamingAskMessage, "1 " + streamingGotMessage}; !slices.Equal(got, want) {
		t.Errorf("round 2 progress %q, want %q", got, want)
	}
	for _, p := range peers {
		if n := len(p.Requests()); n != 0 {
			t.Errorf("%d requests on the stream", n)
		}
	}

	// Over a session: progress, the question as a request, progress.
	p := newPeer(t)
	p.Token = wire.StringID("stream-1")
	p.Answer = func(method string, params map[string]any) (string, error) {
		if got := progress(p); len(got) != 1 {
			t.Errorf("progress before the answer: %q", got)
		}
		return respond(asked{Method: method, Params: params}), nil
	}
	if got := onlyText(t, call(t, fast(), p.Ctx(), ToolStreamingElicitation, nil)); got != "Hello, Alice!" {
		t.Errorf("text %q", got)
	}
	if got := progress(p); len(got) != 2 || len(p.Requests()) != 1 {
		t.Errorf("progress %q, %d requests", got, len(p.Requests()))
	}
}

// peerOf returns the askingPeer an mrtr call runs with.
func peerOf(ctx context.Context) *askingPeer {
	return peer.From(ctx).(*askingPeer)
}

// test_logging_tool logs through peer.Log: the client receives what its
// level lets through, nothing when it set no level.
func TestLoggingToolLevels(t *testing.T) {
	tests := []struct {
		level mcp.LoggingLevel
		want  []string // levels received
		text  string
	}{
		{"", nil, "Logged 3 messages; 0 of them went to the client."},
		{mcp.LoggingLevelDebug, []string{"debug", "info", "warning"}, "Logged 3 messages; 3 of them went to the client."},
		{mcp.LoggingLevelInfo, []string{"info", "warning"}, "Logged 3 messages; 2 of them went to the client."},
		{mcp.LoggingLevelError, nil, "Logged 3 messages; 0 of them went to the client."},
	}
	for _, tc := range tests {
		for _, stateless := range []bool{false, true} {
			p := newPeer(t)
			if stateless {
				p = newAskingPeer(t, allCaps(), nil).Peer
			}
			p.Level = tc.level
			tree := call(t, fast(), p.Ctx(), ToolLogging, nil)
			if got := onlyText(t, tree); got != tc.text {
				t.Errorf("level %q: text %q, want %q", tc.level, got, tc.text)
			}
			var got []string
			for _, n := range p.Notifications() {
				if n.Method != mcp.MethodLoggingMessage || n.Params["logger"] != LoggerName {
					t.Fatalf("unexpected %s %s", n.Method, mustJSON(n.Params))
				}
				lvl := n.Params["level"].(string)
				i := slices.IndexFunc(LoggingToolLines, func(l LogLine) bool { return string(l.Level) == lvl })
				if i < 0 || n.Params["data"] != LoggingToolLines[i].Text {
					t.Errorf("log %s", mustJSON(n.Params))
				}
				got = append(got, lvl)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("level %q (stateless %v): received %v, want %v", tc.level, stateless, got, tc.want)
			}
		}
	}
}

// The triggers add and remove a tool or a prompt (the layer announces the
// change: see app's TestListChanged).
func TestTriggers(t *testing.T) {
	f := fast()
	ctx := newPeer(t).Ctx()
	toolNames := func() []string {
		var out []string
		for _, tl := range listTools(t, f, statelessRev) {
			out = append(out, tl["name"].(string))
		}
		return out
	}
	promptNames := func() []string {
		r, err := f.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range wireResult(t, mcp.MethodListPrompts, statelessRev, r)["prompts"].([]any) {
			out = append(out, obj(t, p)["name"].(string))
		}
		return out
	}

	if got := onlyText(t, call(t, f, ctx, ToolTriggerToolChange, nil)); got != "Added the tool test_dynamic_tool: the tool list has changed." {
		t.Errorf("text %q", got)
	}
	if got := toolNames(); !slices.Equal(got, append(slices.Clone(allTools), ToolDynamic)) {
		t.Errorf("tools %v", got)
	}
	if got := onlyText(t, call(t, f, ctx, ToolDynamic, nil)); got != DynamicToolText {
		t.Errorf("text %q", got)
	}
	if got := onlyText(t, call(t, f, ctx, ToolTriggerToolChange, nil)); got != "Removed the tool test_dynamic_tool: the tool list has changed." {
		t.Errorf("text %q", got)
	}
	if got := toolNames(); !slices.Equal(got, allTools) {
		t.Errorf("tools %v", got)
	}
	_, err := f.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolDynamic})
	wireError(t, err, wire.CodeInvalidParams)

	basePrompts := promptNames()
	if got := onlyText(t, call(t, f, ctx, ToolTriggerPromptChange, nil)); got != "Added the prompt test_dynamic_prompt: the prompt list has changed." {
		t.Errorf("text %q", got)
	}
	if got := promptNames(); !slices.Equal(got, append(slices.Clone(basePrompts), PromptDynamic)) {
		t.Errorf("prompts %v", got)
	}
	r, err := f.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: PromptDynamic})
	if err != nil || mustJSON(wireResult(t, mcp.MethodGetPrompt, testRev, r)["messages"]) != `[{"content":{"text":"`+DynamicPromptText+`","type":"text"},"role":"user"}]` {
		t.Errorf("get %s: %v", PromptDynamic, err)
	}
	call(t, f, ctx, ToolTriggerPromptChange, nil)
	if got := promptNames(); !slices.Equal(got, basePrompts) {
		t.Errorf("prompts %v", got)
	}
	_, err = f.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: PromptDynamic})
	wireError(t, err, wire.CodeInvalidParams)
}

// Triggers, listings and calls from many clients at once are safe.
func TestTriggersConcurrent(t *testing.T) {
	f := fast()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := newPeer(t).Ctx()
			for range 20 {
				trigger := ToolTriggerToolChange
				if i%2 == 1 {
					trigger = ToolTriggerPromptChange
				}
				if _, err := f.CallTool(ctx, &mcp.CallToolRequestParams{Name: trigger}); err != nil {
					t.Error(err)
				}
				if _, err := f.ListTools(ctx, nil); err != nil {
					t.Error(err)
				}
				if _, err := f.ListPrompts(ctx, nil); err != nil {
					t.Error(err)
				}
				_, _ = f.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolDynamic})
				_, _ = f.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: PromptDynamic})
			}
		}()
	}
	wg.Wait()
	// 80 toggles of each: both lists are back as they started.
	r, _ := f.ListTools(context.Background(), nil)
	if len(r.Tools) != len(allTools) {
		t.Errorf("%d tools, want %d", len(r.Tools), len(allTools))
	}
}
