package conformance

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/wire"
)

// Prompt names, as the suite gets them.
const (
	PromptSimple           = "test_simple_prompt"
	PromptWithArguments    = "test_prompt_with_arguments"
	PromptEmbeddedResource = "test_prompt_with_embedded_resource"
	PromptWithImage        = "test_prompt_with_image"
)

// Texts of the prompts.
const (
	SimplePromptText   = "This is a simple prompt for testing."
	EmbeddedPromptText = "Embedded resource content for testing."
	EmbeddedAskText    = "Please process the embedded resource above."
	ImageAskText       = "Please analyze the image above."
)

type prompt struct {
	def mcp.Prompt
	get func(ctx context.Context, args map[string]string) ([]*mcp.PromptMessage, error)
	// complete lists the completion candidates of each argument.
	complete map[string][]string
}

func required(name, description string) *mcp.PromptArgument {
	yes := true
	return &mcp.PromptArgument{Name: name, Description: description, Required: &yes}
}

func user(c mcp.ContentBlock) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c}
}

// fixed is the get of a prompt that only renders its arguments.
func fixed(get func(args map[string]string) []*mcp.PromptMessage) func(context.Context, map[string]string) ([]*mcp.PromptMessage, error) {
	return func(_ context.Context, args map[string]string) ([]*mcp.PromptMessage, error) { return get(args), nil }
}

func prompts() []*prompt {
	return []*prompt{
		{def: mcp.Prompt{Name: PromptSimple, Title: "Simple prompt", Description: "A prompt without arguments."},
			get: fixed(func(map[string]string) []*mcp.PromptMessage {
				return []*mcp.PromptMessage{user(text(SimplePromptText))}
			})},
		{def: mcp.Prompt{Name: PromptWithArguments, Title: "Prompt with arguments", Description: "A prompt that repeats its two arguments.",
			Arguments: []*mcp.PromptArgument{required("arg1", "First test argument"), required("arg2", "Second test argument")}},
			get: fixed(func(a map[string]string) []*mcp.PromptMessage {
				return []*mcp.PromptMessage{user(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])))}
			}),
			complete: map[string][]string{
				"arg1": {"paris", "park", "party", "test", "testValue1"},
				"arg2": {"hello", "help", "world", "testValue2"},
			}},
		{def: mcp.Prompt{Name: PromptEmbeddedResource, Title: "Prompt with an embedded resource", Description: "A prompt that embeds the resource it is given.",
			Arguments: []*mcp.PromptArgument{required("resourceUri", "URI of the resource to embed")}},
			get: fixed(func(a map[string]string) []*mcp.PromptMessage {
				return []*mcp.PromptMessage{
					user(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: a["resourceUri"], MIMEType: "text/plain", Text: EmbeddedPromptText}}),
					user(text(EmbeddedAskText)),
				}
			}),
			complete: map[string][]string{"resourceUri": {URIStaticText, URIStaticBinary, URIWatched}}},
		{def: mcp.Prompt{Name: PromptWithImage, Title: "Prompt with an image", Description: "A prompt that shows an image (a 1x1 red PNG)."},
			get: fixed(func(map[string]string) []*mcp.PromptMessage {
				return []*mcp.PromptMessage{
					user(&mcp.ImageContent{Data: redPixelPNG, MIMEType: "image/png"}),
					user(text(ImageAskText)),
				}
			})},
		{def: mcp.Prompt{Name: PromptInputRequired, Title: "Prompt that asks for input",
			Description: "A prompt that asks the user, through the client, for the context it uses (elicitation, input user_context)."},
			get: inputPrompt},
	}
}

// ListPrompts lists the prompts, one page at a time.
func (f *Fixtures) ListPrompts(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
	page, next, err := base.Paginate(f.pager, "prompts", f.promptList(), cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.Prompt, len(page))
	for i, pr := range page {
		d := pr.def
		defs[i] = &d
	}
	scope, ttl := f.cache()
	return &mcp.ListPromptsResult{Prompts: defs, NextCursor: next, CacheScope: scope, TTLMs: ttl}, nil
}

// GetPrompt renders a prompt. An unknown prompt or a missing required
// argument is -32602.
func (f *Fixtures) GetPrompt(ctx context.Context, p *mcp.GetPromptRequestParams) (*mcp.GetPromptResult, error) {
	pr, ok := f.lookupPrompt(p.Name)
	if !ok {
		return nil, unknownPrompt(p.Name)
	}
	for _, a := range pr.def.Arguments {
		if a.Required != nil && *a.Required {
			if _, ok := p.Arguments[a.Name]; !ok {
				e := wire.NewError(wire.CodeInvalidParams, "prompt %q needs argument %q", p.Name, a.Name)
				e.Data = map[string]any{"field": "/params/arguments/" + a.Name, "reason": "missing required argument"}
				return nil, e
			}
		}
	}
	msgs, err := pr.get(ctx, p.Arguments)
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Description: pr.def.Description, Messages: msgs}, nil
}

func unknownPrompt(name string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "unknown prompt %q", name)
	e.Data = map[string]any{"field": "/params/name", "reason": fmt.Sprintf("no prompt named %q", name)}
	return e
}

// templateCompletions are the candidates for {id} of the resource template.
var templateCompletions = []string{"1", "2", "3", "123"}

// Complete suggests values for an argument of a prompt or of the resource
// template: the candidates that start with what the user typed (ignoring
// case). An unknown prompt or template is -32602; an argument without
// candidates has none.
func (f *Fixtures) Complete(_ context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	var candidates []string
	switch ref := p.Ref.(type) {
	case *mcp.PromptReference:
		pr, ok := f.lookupPrompt(ref.Name)
		if !ok {
			return nil, unknownPrompt(ref.Name)
		}
		candidates = pr.complete[p.Argument.Name]
	case *mcp.ResourceTemplateReference:
		if ref.URI != URITemplate {
			e := wire.NewError(wire.CodeInvalidParams, "unknown resource template %q", ref.URI)
			e.Data = map[string]any{"field": "/params/ref/uri", "reason": "no such resource template"}
			return nil, e
		}
		if p.Argument.Name == templateArgument {
			candidates = templateCompletions
		}
	default:
		return nil, wire.NewError(wire.CodeInvalidParams, "unsupported completion reference %T", p.Ref)
	}
	values := []string{}
	prefix := strings.ToLower(p.Argument.Value)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), prefix) {
			values = append(values, c)
		}
	}
	sort.Strings(values)
	total := int64(len(values))
	more := false
	return &mcp.CompleteResult{Completion: mcp.CompleteResultCompletion{Values: values, Total: &total, HasMore: &more}}, nil
}
