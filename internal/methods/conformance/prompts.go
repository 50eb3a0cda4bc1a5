package conformance

import (
	"context"
	"fmt"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
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

func user(c mcp.ContentBlock) *mcp.PromptMessage {
	return &mcp.PromptMessage{Role: mcp.RoleUser, Content: c}
}

func messages(m ...*mcp.PromptMessage) *mcp.GetPromptResult {
	return &mcp.GetPromptResult{Messages: m}
}

// argumentsPrompt are the arguments of test_prompt_with_arguments.
type argumentsPrompt struct {
	Arg1 string `json:"arg1" jsonschema:"description=First test argument"`
	Arg2 string `json:"arg2" jsonschema:"description=Second test argument"`
}

// embedPrompt is the argument of test_prompt_with_embedded_resource.
type embedPrompt struct {
	ResourceURI string `json:"resourceUri" jsonschema:"description=URI of the resource to embed"`
}

// addPrompts registers the prompts, with completion of their arguments.
func addPrompts(a *app.App) {
	app.AddPrompt(a, app.Prompt{Name: PromptSimple, Title: "Simple prompt", Description: "A prompt without arguments."},
		func(context.Context, struct{}) (*mcp.GetPromptResult, error) {
			return messages(user(text(SimplePromptText))), nil
		})
	app.AddPrompt(a, app.Prompt{Name: PromptWithArguments, Title: "Prompt with arguments", Description: "A prompt that repeats its two arguments.",
		Complete: map[string]app.Completer{
			"arg1": app.Prefixed("paris", "park", "party", "test", "testValue1"),
			"arg2": app.Prefixed("hello", "help", "testValue2", "world"),
		}},
		func(_ context.Context, in argumentsPrompt) (*mcp.GetPromptResult, error) {
			return messages(user(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", in.Arg1, in.Arg2)))), nil
		})
	app.AddPrompt(a, app.Prompt{Name: PromptEmbeddedResource, Title: "Prompt with an embedded resource", Description: "A prompt that embeds the resource it is given.",
		Complete: map[string]app.Completer{"resourceUri": app.Prefixed(URIStaticBinary, URIStaticText, URIWatched)}},
		func(_ context.Context, in embedPrompt) (*mcp.GetPromptResult, error) {
			return messages(
				user(&mcp.EmbeddedResource{Resource: &mcp.TextResourceContents{URI: in.ResourceURI, MIMEType: "text/plain", Text: EmbeddedPromptText}}),
				user(text(EmbeddedAskText)),
			), nil
		})
	app.AddPrompt(a, app.Prompt{Name: PromptWithImage, Title: "Prompt with an image", Description: "A prompt that shows an image (a 1x1 red PNG)."},
		func(context.Context, struct{}) (*mcp.GetPromptResult, error) {
			return messages(user(&mcp.ImageContent{Data: redPixelPNG(), MIMEType: "image/png"}), user(text(ImageAskText))), nil
		})
	app.AddPrompt(a, app.Prompt{Name: PromptInputRequired, Title: "Prompt that asks for input",
		Description: "A prompt that asks the user, through the client, for the context it uses (elicitation, input user_context)."},
		inputPrompt)
}
