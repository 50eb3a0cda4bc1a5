package conformance

import (
	"context"
	"fmt"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
)

// The diagnostic tools of the stateless scenario (server-stateless,
// SEP-2575, 2026-07-28): a tool that needs a capability, one that asks for
// input while it streams, one that logs, and the hooks that change the tool
// and prompt lists.

// Tool and prompt names, as the suite calls them.
const (
	ToolMissingCapability    = "test_missing_capability"
	ToolStreamingElicitation = "test_streaming_elicitation"
	ToolLogging              = "test_logging_tool"
	ToolTriggerToolChange    = "test_trigger_tool_change"
	ToolTriggerPromptChange  = "test_trigger_prompt_change"
	// ToolDynamic and PromptDynamic come and go with the triggers.
	ToolDynamic   = "test_dynamic_tool"
	PromptDynamic = "test_dynamic_prompt"
)

// Inputs and texts of the diagnostic tools.
const (
	KeyProbe            = "probe" // test_missing_capability's sampling
	ProbePrompt         = "Reply with one word: ready?"
	ProbeMaxTokens      = 10
	DynamicToolText     = "This tool comes and goes with test_trigger_tool_change."
	DynamicPromptText   = "This prompt comes and goes with test_trigger_prompt_change."
	StreamingTotal      = 1
	streamingAskMessage = "Asking the user for their name"
	streamingGotMessage = "The user answered"
)

// LogLine is one message test_logging_tool logs.
type LogLine struct {
	Level mcp.LoggingLevel
	Text  string
}

// LoggingToolLines are what test_logging_tool logs, in order, one per
// level, so that the client's level decides how many it receives.
var LoggingToolLines = []LogLine{
	{mcp.LoggingLevelDebug, "test_logging_tool: a debug message"},
	{mcp.LoggingLevelInfo, "test_logging_tool: an info message"},
	{mcp.LoggingLevelWarning, "test_logging_tool: a warning message"},
}

func diagnosticTools() []*tool {
	none := objectSchema(nil)
	return []*tool{
		{def: app.Tool{Name: ToolMissingCapability, InputSchema: none,
			Description: "Needs sampling: asks the client's model for one word. A client that did not declare sampling gets the missing-capability error (-32021)."},
			run: (*Fixtures).runMissingCapability},
		{def: app.Tool{Name: ToolStreamingElicitation, InputSchema: none,
			Description: "Reports progress while it asks the user for their name (elicitation, input user_name), then greets them. Under 2026-07-28 the question is an input-required result, never a request on the response stream."},
			run: (*Fixtures).runStreamingElicitation},
		{def: app.Tool{Name: ToolLogging, InputSchema: none,
			Description: "Logs a debug, an info and a warning message; the client receives those at or above the level it set, and none when it set no level."},
			run: (*Fixtures).runLoggingTool},
		{def: app.Tool{Name: ToolTriggerToolChange, InputSchema: none,
			Description: "Adds test_dynamic_tool to the tool list, or removes it, and announces notifications/tools/list_changed."},
			run: (*Fixtures).runTriggerToolChange},
		{def: app.Tool{Name: ToolTriggerPromptChange, InputSchema: none,
			Description: "Adds test_dynamic_prompt to the prompt list, or removes it, and announces notifications/prompts/list_changed."},
			run: (*Fixtures).runTriggerPromptChange},
	}
}

var dynamicTool = &tool{
	def: app.Tool{Name: ToolDynamic, InputSchema: objectSchema(nil),
		Description: "A tool that test_trigger_tool_change adds and removes."},
	run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return result(text(DynamicToolText)), nil
	},
}

func addDynamicPrompt(a *app.App) {
	app.AddPrompt(a, app.Prompt{Name: PromptDynamic, Title: "Dynamic prompt",
		Description: "A prompt that test_trigger_prompt_change adds and removes."},
		func(context.Context, struct{}) (*mcp.GetPromptResult, error) {
			return messages(user(text(DynamicPromptText))), nil
		})
}

// runMissingCapability needs sampling: ask answers -32021 to a client that
// did not declare it, before anything is asked.
func (f *Fixtures) runMissingCapability(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	answers, res, err := ask(ctx, "sampling", map[string]peer.Input{KeyProbe: samplingInput(ProbePrompt, ProbeMaxTokens)})
	if res != nil || err != nil {
		return res, err
	}
	r, res := answer[*mcp.CreateMessageResult](answers, KeyProbe)
	if res != nil {
		return res, nil
	}
	return result(text("Sampling is available. " + samplingReplyPrefix + samplingText(r.Content))), nil
}

// runStreamingElicitation reports progress around a question to the user.
// Under 2026-07-28 the first round streams the progress and ends with the
// input-required result; the retry streams it again and completes.
func (f *Fixtures) runStreamingElicitation(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	total := float64(StreamingTotal)
	if err := peer.Progress(ctx, 0, &total, streamingAskMessage); err != nil {
		return nil, err
	}
	answers, res, err := ask(ctx, "elicitation", map[string]peer.Input{KeyUserName: formInput(NameQuestion, "name", "string")})
	if res != nil || err != nil {
		return res, err
	}
	if err := peer.Progress(ctx, StreamingTotal, &total, streamingGotMessage); err != nil {
		return nil, err
	}
	name, res := formValue[string](answers, KeyUserName, "name")
	if res != nil {
		return res, nil
	}
	return result(text("Hello, " + name + "!")), nil
}

func (f *Fixtures) runLoggingTool(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	sent := 0
	for _, l := range LoggingToolLines {
		if peer.Enabled(ctx, l.Level) {
			sent++
		}
		if err := peer.Log(ctx, l.Level, LoggerName, l.Text); err != nil {
			return nil, err
		}
	}
	return result(text(fmt.Sprintf("Logged %d messages; %d of them went to the client.", len(LoggingToolLines), sent))), nil
}

// runTriggerToolChange adds or removes test_dynamic_tool; the layer
// announces notifications/tools/list_changed before the trigger answers.
func (f *Fixtures) runTriggerToolChange(context.Context, map[string]any) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dynTool = !f.dynTool
	if f.dynTool {
		f.addTool(dynamicTool)
	} else {
		f.RemoveTools(ToolDynamic)
	}
	return result(text(changeText("tool", ToolDynamic, f.dynTool))), nil
}

func (f *Fixtures) runTriggerPromptChange(context.Context, map[string]any) (*mcp.CallToolResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dynPrompt = !f.dynPrompt
	if f.dynPrompt {
		addDynamicPrompt(f.App)
	} else {
		f.RemovePrompts(PromptDynamic)
	}
	return result(text(changeText("prompt", PromptDynamic, f.dynPrompt))), nil
}

func changeText(kind, name string, added bool) string {
	if added {
		return fmt.Sprintf("Added the %s %s: the %s list has changed.", kind, name, kind)
	}
	return fmt.Sprintf("Removed the %s %s: the %s list has changed.", kind, name, kind)
}
