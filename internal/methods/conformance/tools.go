package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/jsontree"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// Tool names, as the conformance suite calls them.
const (
	ToolSimpleText           = "test_simple_text"
	ToolImageContent         = "test_image_content"
	ToolAudioContent         = "test_audio_content"
	ToolEmbeddedResource     = "test_embedded_resource"
	ToolMultipleContentTypes = "test_multiple_content_types"
	ToolWithLogging          = "test_tool_with_logging"
	ToolWithProgress         = "test_tool_with_progress"
	ToolErrorHandling        = "test_error_handling"
	ToolSampling             = "test_sampling"
	ToolElicitation          = "test_elicitation"
	ToolElicitationDefaults  = "test_elicitation_sep1034_defaults"
	ToolElicitationEnums     = "test_elicitation_sep1330_enums"
	ToolJSONSchema202012     = "json_schema_2020_12_tool"
	ToolReconnection         = "test_reconnection"
	ToolHeader               = "test_x_mcp_header"
)

// Texts the tools answer with.
const (
	SimpleText           = "This is a simple text response for testing."
	EmbeddedText         = "This is an embedded resource content."
	MixedText            = "Multiple content types test:"
	MixedResourceJSON    = `{"test":"data","value":123}`
	ErrorText            = "This tool intentionally returns an error for testing"
	LoggingDoneText      = "Tool with logging executed successfully"
	ProgressDoneText     = "Tool with progress executed successfully"
	ReconnectionDoneText = "Reconnection test completed"
	samplingReplyPrefix  = "LLM response: "
)

// LoggerName is the logger of test_tool_with_logging's messages.
const LoggerName = "conformance"

// SamplingMaxTokens is the maxTokens test_sampling asks for.
const SamplingMaxTokens = 100

// LogMessages are the info messages test_tool_with_logging sends, in order.
var LogMessages = []string{"Tool execution started", "Tool processing data", "Tool execution completed"}

// ProgressSteps are the progress values test_tool_with_progress reports,
// out of ProgressTotal.
var ProgressSteps = []float64{0, 50, 100}

// ProgressTotal is the total of test_tool_with_progress.
const ProgressTotal = 100

// JSONSchema202012 is the $schema of json_schema_2020_12_tool's inputSchema.
const JSONSchema202012 = "https://json-schema.org/draft/2020-12/schema"

// StreamCloser is implemented by a peer whose transport can end the stream
// carrying the current request before its response (Streamable HTTP SSE,
// SEP-1699): the client then reconnects with Last-Event-ID and receives the
// rest, response included, on the new stream. test_reconnection uses it when
// the peer has it; without it the tool just answers.
type StreamCloser interface {
	CloseStream()
}

// tool is a fixture tool: its definition and what it does.
type tool struct {
	def app.Tool
	run func(f *Fixtures, ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)
}

// addTool registers a fixture tool; the layer validates its arguments
// against def.InputSchema before run sees them.
func (f *Fixtures) addTool(t *tool) {
	f.AddRawTool(t.def, func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		return t.run(f, ctx, args)
	})
}

// objectSchema is an object inputSchema with these properties and required
// members.
func objectSchema(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = codec.AnyArray(required)
	}
	return s
}

func stringProp(description string) map[string]any {
	return map[string]any{"type": "string", "description": description}
}

func tools() []*tool {
	readOnly := func() *mcp.ToolAnnotations { t := true; return &mcp.ToolAnnotations{ReadOnlyHint: &t} }
	return slices.Concat([]*tool{
		{def: app.Tool{Name: ToolSimpleText, Description: "Returns a simple text content block.", InputSchema: objectSchema(nil), Annotations: readOnly()},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return result(text(SimpleText)), nil
			}},
		{def: app.Tool{Name: ToolImageContent, Description: "Returns an image content block (a 1x1 red PNG).", InputSchema: objectSchema(nil), Annotations: readOnly()},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return result(&mcp.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"}), nil
			}},
		{def: app.Tool{Name: ToolAudioContent, Description: "Returns an audio content block (a short WAV tone).", InputSchema: objectSchema(nil), Annotations: readOnly()},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return result(audio()), nil
			}},
		{def: app.Tool{Name: ToolEmbeddedResource, Description: "Returns an embedded text resource.", InputSchema: objectSchema(nil), Annotations: readOnly()},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return result(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
					URI: "test://embedded-resource", MIMEType: "text/plain", Text: EmbeddedText,
				}}), nil
			}},
		{def: app.Tool{Name: ToolMultipleContentTypes, Description: "Returns text, image and embedded resource content together.", InputSchema: objectSchema(nil), Annotations: readOnly()},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return result(
					text(MixedText),
					&mcp.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"},
					&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{
						URI: "test://mixed-content-resource", MIMEType: "application/json", Text: MixedResourceJSON,
					}},
				), nil
			}},
		{def: app.Tool{Name: ToolWithLogging, Description: "Sends three info log messages while it runs.", InputSchema: objectSchema(nil)},
			run: (*Fixtures).runLogging},
		{def: app.Tool{Name: ToolWithProgress, Description: "Reports progress 0, 50 and 100 of 100 while it runs, when asked for progress.", InputSchema: objectSchema(nil)},
			run: (*Fixtures).runProgress},
		{def: app.Tool{Name: ToolErrorHandling, Description: "Always fails, reporting the failure in its result (isError).", InputSchema: objectSchema(nil)},
			run: func(*Fixtures, context.Context, map[string]any) (*mcp.CallToolResult, error) {
				return app.ToolError(ErrorText), nil
			}},
		{def: app.Tool{Name: ToolSampling, Description: "Asks the client's model to answer a prompt (sampling/createMessage) and returns the answer.",
			InputSchema: objectSchema(map[string]any{"prompt": stringProp("The prompt to send to the LLM")}, "prompt")},
			run: (*Fixtures).runSampling},
		{def: app.Tool{Name: ToolElicitation, Description: "Asks the user for a username and an email (elicitation/create) and returns the answer.",
			InputSchema: objectSchema(map[string]any{"message": stringProp("The message to show the user")}, "message")},
			run: (*Fixtures).runElicitation},
		{def: app.Tool{Name: ToolElicitationDefaults, Description: "Elicits a form whose fields all have default values (SEP-1034).", InputSchema: objectSchema(nil)},
			run: func(f *Fixtures, ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
				return f.elicitForm(ctx, "Please review and update the form fields with defaults", DefaultsSchema())
			}},
		{def: app.Tool{Name: ToolElicitationEnums, Description: "Elicits a form with every enum variant (SEP-1330).", InputSchema: objectSchema(nil)},
			run: func(f *Fixtures, ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
				return f.elicitForm(ctx, "Please select options from the enum fields", EnumsSchema())
			}},
		{def: app.Tool{Name: ToolJSONSchema202012, Description: "Tool with JSON Schema 2020-12 features", InputSchema: jsonSchema202012()},
			run: func(_ *Fixtures, _ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
				return result(text("JSON Schema 2020-12 tool called with: " + jsonText(args))), nil
			}},
		{def: app.Tool{Name: ToolHeader, Description: "Echoes its region, which a 2026-07-28 request repeats in the Mcp-Param-Region header (x-mcp-header).",
			InputSchema: objectSchema(map[string]any{"region": map[string]any{"type": "string", "description": "Where to run", "x-mcp-header": "Region"}}, "region")},
			run: func(_ *Fixtures, _ context.Context, args map[string]any) (*mcp.CallToolResult, error) {
				region, _ := args["region"].(string)
				return result(text("Region: " + region)), nil
			}},
		{def: app.Tool{Name: ToolReconnection, Description: "Closes its response stream mid-call so that the client must reconnect to get the result (SEP-1699).", InputSchema: objectSchema(nil)},
			run: (*Fixtures).runReconnection},
	}, inputTools(), diagnosticTools(), taskTools())
}

// jsonSchema202012 is the inputSchema of json_schema_2020_12_tool, as the
// suite shows it: $schema, $defs and additionalProperties (SEP-1613), and
// the vocabulary SEP-2106 allows from 2026-07-28 on: an $anchor inside
// $defs, allOf/anyOf, and if/then/else. The layer keeps every member in
// the tool's definition, which every revision encodes as it is.
func jsonSchema202012() map[string]any {
	str := func() map[string]any { return map[string]any{"type": "string"} }
	required := func(names ...string) map[string]any { return map[string]any{"required": codec.AnyArray(names)} }
	return map[string]any{
		"$schema": JSONSchema202012,
		"type":    "object",
		"properties": map[string]any{
			"name":          str(),
			"address":       map[string]any{"$ref": "#/$defs/address"},
			"contactMethod": map[string]any{"type": "string", "enum": []any{"phone", "email"}},
			"phone":         str(),
			"email":         str(),
		},
		"$defs": map[string]any{
			"address": map[string]any{
				"$anchor": "addressDef",
				"type":    "object",
				"properties": map[string]any{
					"street": str(),
					"city":   str(),
				},
			},
		},
		"allOf": []any{map[string]any{"anyOf": []any{required("phone"), required("email")}}},
		"if": map[string]any{
			"properties": map[string]any{"contactMethod": map[string]any{"const": "phone"}},
			"required":   []any{"contactMethod"},
		},
		"then":                 required("phone"),
		"else":                 required("email"),
		"additionalProperties": false,
	}
}

func (f *Fixtures) runLogging(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	for i, msg := range LogMessages {
		if i > 0 {
			if err := sleep(ctx, f.step); err != nil {
				return nil, err
			}
		}
		if err := peer.Log(ctx, mcp.LoggingLevelInfo, LoggerName, msg); err != nil {
			return nil, err
		}
	}
	return result(text(LoggingDoneText)), nil
}

func (f *Fixtures) runProgress(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	total := float64(ProgressTotal)
	for i, v := range ProgressSteps {
		if i > 0 {
			if err := sleep(ctx, f.step); err != nil {
				return nil, err
			}
		}
		if err := peer.Progress(ctx, v, &total, ""); err != nil {
			return nil, err
		}
	}
	return result(text(ProgressDoneText)), nil
}

func (f *Fixtures) runSampling(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	prompt, _ := args["prompt"].(string) // the input schema requires it
	r, err := peer.CreateMessage(ctx, &mcp.CreateMessageRequestParams{
		Messages: []*mcp.SamplingMessage{{
			Role:    mcp.RoleUser,
			Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: prompt}},
		}},
		MaxTokens: SamplingMaxTokens,
	})
	if err != nil {
		return askFailed(ctx, "sampling", err)
	}
	return result(text(samplingReplyPrefix + samplingText(r.Content))), nil
}

// samplingText renders the content of a sampling result: its text blocks,
// or a placeholder per non-text block.
func samplingText(content []mcp.SamplingMessageContentBlock) string {
	var parts []string
	for _, b := range content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
			continue
		}
		typ := "unknown"
		if m, ok := b.EncodeValue(-1).(map[string]any); ok {
			typ, _ = m["type"].(string)
		}
		parts = append(parts, "["+typ+" content]")
	}
	return strings.Join(parts, "\n")
}

func (f *Fixtures) runElicitation(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
	message, _ := args["message"].(string) // the input schema requires it
	r, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{
		Message:         message,
		RequestedSchema: *UserInfoSchema(),
	})
	if err != nil {
		return askFailed(ctx, "elicitation", err)
	}
	return result(text(fmt.Sprintf("User response: action=%s, content=%s", r.Action, jsonText(r.Content)))), nil
}

func (f *Fixtures) elicitForm(ctx context.Context, message string, schema *mcp.ElicitRequestFormParamsRequestedSchema) (*mcp.CallToolResult, error) {
	r, err := peer.Elicit(ctx, &mcp.ElicitRequestFormParams{Message: message, RequestedSchema: *schema})
	if err != nil {
		return askFailed(ctx, "elicitation", err)
	}
	return result(text(fmt.Sprintf("Elicitation completed: action=%s, content=%s", r.Action, jsonText(r.Content)))), nil
}

func (f *Fixtures) runReconnection(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	if err := sleep(ctx, f.step); err != nil {
		return nil, err
	}
	if c, ok := peer.From(ctx).(StreamCloser); ok {
		c.CloseStream()
	}
	if err := sleep(ctx, f.step); err != nil {
		return nil, err
	}
	return result(text(ReconnectionDoneText)), nil
}

// askFailed turns the failure of a request to the client into a tool error
// the model can read; a call that was cancelled or timed out stays an
// error for the server, and so does the wait for the client's input under
// a stateless revision (peer.ErrInputRequired), which the server answers
// with an input-required result.
func askFailed(ctx context.Context, what string, err error) (*mcp.CallToolResult, error) {
	if ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, peer.ErrInputRequired) {
		return nil, err
	}
	switch {
	case errors.Is(err, peer.ErrNotSupported):
		return app.ToolError(fmt.Sprintf("The client does not support %s.", what)), nil
	case errors.Is(err, peer.ErrNoPeer):
		return app.ToolError(fmt.Sprintf("The client cannot be asked for %s on this connection.", what)), nil
	}
	var we *wire.Error
	if errors.As(err, &we) {
		return app.ToolError(fmt.Sprintf("The client refused the %s request: %s (code %d).", what, we.Message, we.Code)), nil
	}
	return app.ToolError(fmt.Sprintf("The %s request failed: %v", what, err)), nil
}

// UserInfoSchema is the form test_elicitation asks for.
func UserInfoSchema() *mcp.ElicitRequestFormParamsRequestedSchema {
	return &mcp.ElicitRequestFormParamsRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"username": map[string]any{"type": "string", "description": "User's response"},
			"email":    map[string]any{"type": "string", "description": "User's email address"},
		},
		Required: []string{"username", "email"},
	}
}

// DefaultsSchema is the SEP-1034 form of test_elicitation_sep1034_defaults:
// a default for every primitive type. Properties are plain JSON trees,
// because PrimitiveSchemaDefinition is an undecided union (any).
func DefaultsSchema() *mcp.ElicitRequestFormParamsRequestedSchema {
	return &mcp.ElicitRequestFormParamsRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"name":     map[string]any{"type": "string", "title": "Name", "description": "User name", "default": "John Doe"},
			"age":      map[string]any{"type": "integer", "title": "Age", "description": "User age", "default": float64(30)},
			"score":    map[string]any{"type": "number", "title": "Score", "description": "User score", "default": 95.5},
			"status":   map[string]any{"type": "string", "title": "Status", "description": "User status", "enum": []any{"active", "inactive", "pending"}, "default": "active"},
			"verified": map[string]any{"type": "boolean", "title": "Verified", "description": "Verification status", "default": true},
		},
	}
}

// EnumsSchema is the SEP-1330 form of test_elicitation_sep1330_enums: the
// five enum variants.
func EnumsSchema() *mcp.ElicitRequestFormParamsRequestedSchema {
	titled := func(prefix string, titles ...string) []any {
		out := make([]any, len(titles))
		for i, t := range titles {
			out[i] = map[string]any{"const": fmt.Sprintf("%s%d", prefix, i+1), "title": t}
		}
		return out
	}
	return &mcp.ElicitRequestFormParamsRequestedSchema{
		Properties: map[string]mcp.PrimitiveSchemaDefinition{
			"untitledSingle": map[string]any{
				"type": "string", "title": "Untitled single-select", "description": "Pick one option",
				"enum": []any{"option1", "option2", "option3"},
			},
			"titledSingle": map[string]any{
				"type": "string", "title": "Titled single-select", "description": "Pick one titled option",
				"oneOf": titled("value", "First Option", "Second Option", "Third Option"),
			},
			"legacyEnum": map[string]any{
				"type": "string", "title": "Legacy titled enum", "description": "Pick one (enumNames, deprecated)",
				"enum":      []any{"opt1", "opt2", "opt3"},
				"enumNames": []any{"Option One", "Option Two", "Option Three"},
			},
			"untitledMulti": map[string]any{
				"type": "array", "title": "Untitled multi-select", "description": "Pick any options",
				"items": map[string]any{"type": "string", "enum": []any{"option1", "option2", "option3"}},
			},
			"titledMulti": map[string]any{
				"type": "array", "title": "Titled multi-select", "description": "Pick any titled options",
				"items": map[string]any{"anyOf": titled("value", "First Choice", "Second Choice", "Third Choice")},
			},
		},
	}
}

func text(s string) *mcp.TextContent { return &mcp.TextContent{Text: s} }

func audio() *mcp.AudioContent {
	return &mcp.AudioContent{Data: toneWAV(), MIMEType: "audio/wav"}
}

func result(blocks ...mcp.ContentBlock) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: blocks}
}

// jsonText renders a plain tree as compact JSON with sorted keys; nil is {}.
func jsonText(v map[string]any) string {
	if v == nil {
		return "{}"
	}
	b, err := jsontree.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
