// Package bench holds the handler that `mcpstack bench` and the server
// benchmarks load: one cheap tool, so that what is measured is the stack
// (transport, framing, validation, dispatch) and not the method.
package bench

import (
	"context"
	"fmt"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/wire"
)

// ToolEcho is the name of the one tool.
const ToolEcho = "echo"

// Echo serves the tool echo {text}, which answers its text unchanged. It
// declares only the tools capability: the other list methods answer empty
// lists, and what needs a resource, prompt or completion is an error.
type Echo struct {
	base.Lifecycle
}

var _ mcp.Handler = (*Echo)(nil)

// echoTools is built once: tools/list is on the benchmarks' hot path. The
// server only reads results.
var echoTools = []*mcp.Tool{echoTool()}

func echoTool() *mcp.Tool {
	return &mcp.Tool{
		Name:        ToolEcho,
		Description: "Answers the text it is given, unchanged.",
		InputSchema: mcp.ToolInputSchema{
			Properties: map[string]map[string]any{
				"text": {"type": "string", "description": "The text to answer with."},
			},
			Required: []string{"text"},
		},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: ptr(true), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
	}
}

func ptr[T any](v T) *T { return &v }

// Initialize declares the tools capability.
func (Echo) Initialize(context.Context, *mcp.InitializeRequestParams) (*mcp.InitializeResult, error) {
	return &mcp.InitializeResult{
		Capabilities: mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{ListChanged: ptr(false)}},
		ServerInfo:   mcp.Implementation{Name: "mcpstack-bench", Version: "dev"},
	}, nil
}

// Discover declares the tools capability (2026-07-28); the server fills
// supportedVersions.
func (Echo) Discover(context.Context, *mcp.RequestParams) (*mcp.DiscoverResult, error) {
	return &mcp.DiscoverResult{
		Meta:         &mcp.ResultMetaObject{ServerInfo: &mcp.Implementation{Name: "mcpstack-bench", Version: "dev"}},
		Capabilities: mcp.ServerCapabilities{Tools: &mcp.ServerCapabilitiesTools{ListChanged: ptr(false)}},
		ResultType:   "complete",
		CacheScope:   "public",
	}, nil
}

// ListTools lists echo.
func (Echo) ListTools(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
	return &mcp.ListToolsResult{Tools: echoTools}, nil
}

// CallTool runs echo. An unknown tool is -32602; a text argument that is
// missing or not a string is a tool error.
func (Echo) CallTool(_ context.Context, p *mcp.CallToolRequestParams) (*mcp.CallToolResult, error) {
	if p.Name != ToolEcho {
		return nil, wire.NewError(wire.CodeInvalidParams, "unknown tool %q", p.Name)
	}
	text, ok := p.Arguments["text"].(string)
	if !ok {
		yes := true
		msg := `Argument "text" is required and must be a string.`
		if v, present := p.Arguments["text"]; present {
			msg = fmt.Sprintf(`Argument "text" must be a string, got %T.`, v)
		}
		return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: msg}}, IsError: &yes}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: text}}}, nil
}

// ListResources answers an empty list.
func (Echo) ListResources(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	return &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}, nil
}

// ListResourceTemplates answers an empty list.
func (Echo) ListResourceTemplates(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}}, nil
}

// ListPrompts answers an empty list.
func (Echo) ListPrompts(context.Context, *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	return &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}}, nil
}

// ReadResource answers -32002: there are no resources.
func (Echo) ReadResource(_ context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	return nil, &wire.Error{Code: wire.CodeResourceNotFound, Message: "Resource not found", Data: map[string]any{"uri": p.URI}}
}

// Subscribe answers -32601: the resources capability is not declared.
func (Echo) Subscribe(context.Context, *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	return nil, wire.ErrMethodNotFound
}

// Unsubscribe answers -32601: the resources capability is not declared.
func (Echo) Unsubscribe(context.Context, *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	return nil, wire.ErrMethodNotFound
}

// GetPrompt answers -32602: there are no prompts.
func (Echo) GetPrompt(_ context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	return nil, wire.NewError(wire.CodeInvalidParams, "unknown prompt %q", p.Name)
}

// Complete answers -32601: the completions capability is not declared.
func (Echo) Complete(context.Context, *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	return nil, wire.ErrMethodNotFound
}
