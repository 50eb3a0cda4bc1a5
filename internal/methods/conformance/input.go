package conformance

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// The fixtures of the input-required scenarios (SEP-2322, 2026-07-28): tools
// and a prompt that need the client's input. They ask through peer.Ask, so
// over a session each input is a request to the client, and under
// 2026-07-28 the server answers with an input-required result naming every
// missing input, then calls the fixture again when the client retries with
// the answers (and the requestState the server keeps them in).

// Tool and prompt names, as the suite calls them.
const (
	ToolInputElicitation   = "test_input_required_result_elicitation"
	ToolInputSampling      = "test_input_required_result_sampling"
	ToolInputListRoots     = "test_input_required_result_list_roots"
	ToolInputMultiRound    = "test_input_required_result_multi_round"
	ToolInputMultiple      = "test_input_required_result_multiple_inputs"
	ToolInputRequestState  = "test_input_required_result_request_state"
	ToolInputTamperedState = "test_input_required_result_tampered_state"
	ToolInputCapabilities  = "test_input_required_result_capabilities"
	PromptInputRequired    = "test_input_required_result_prompt"
)

// Keys of the inputs, as the suite's descriptions name them.
const (
	KeyUserName        = "user_name"        // elicitation: {name}
	KeyCapitalQuestion = "capital_question" // sampling
	KeyClientRoots     = "client_roots"     // roots/list
	KeyStep1           = "step1"            // elicitation: {name}
	KeyStep2           = "step2"            // elicitation: {color}
	KeyGreeting        = "greeting"         // sampling
	KeyConfirm         = "confirm"          // elicitation: {ok}
	KeyUserContext     = "user_context"     // elicitation: {context}
)

// Messages and prompts of the inputs.
const (
	NameQuestion      = "What is your name?"
	CapitalQuestion   = "What is the capital of France?"
	Step1Question     = "Step 1: What is your name?"
	Step2Question     = "Step 2: What is your favorite color?"
	GreetingPrompt    = "Generate a greeting"
	ConfirmQuestion   = "Please confirm"
	ContextQuestion   = "What context should the prompt use?"
	CapitalMaxTokens  = 100
	GreetingMaxTokens = 50
)

// formInput asks the user for one required field of type typ.
func formInput(message, field, typ string) peer.Input {
	return peer.Input{Method: mcp.MethodElicit, Params: &mcp.ElicitRequestFormParams{
		Message: message,
		RequestedSchema: mcp.ElicitRequestFormParamsRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{field: map[string]any{"type": typ}},
			Required:   []string{field},
		},
	}}
}

// askField asks the user one question of one form field and returns the
// answer; a result or an error ends the call (as of ask and formValue).
func askField[T string | bool](ctx context.Context, key, question, field string) (v T, res *mcp.CallToolResult, err error) {
	typ := "string"
	if _, isBool := any(v).(bool); isBool {
		typ = "boolean"
	}
	answers, res, err := ask(ctx, "elicitation", map[string]peer.Input{key: formInput(question, field, typ)})
	if res != nil || err != nil {
		return v, res, err
	}
	v, res = formValue[T](answers, key, field)
	return v, res, nil
}

// samplingInput asks the client's model to answer prompt.
func samplingInput(prompt string, maxTokens int64) peer.Input {
	return peer.Input{Method: mcp.MethodCreateMessage, Params: &mcp.CreateMessageRequestParams{
		Messages: []*mcp.SamplingMessage{{
			Role:    mcp.RoleUser,
			Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: prompt}},
		}},
		MaxTokens: maxTokens,
	}}
}

// rootsInput asks the client for its roots.
func rootsInput() peer.Input {
	return peer.Input{Method: mcp.MethodListRoots, Params: &mcp.RequestParams{}}
}

func inputTools() []*tool {
	none := objectSchema(nil)
	return []*tool{
		{def: app.Tool{Name: ToolInputElicitation, InputSchema: none,
			Description: "Asks the user for their name (elicitation, input user_name) and greets them."},
			run: (*Fixtures).runInputElicitation},
		{def: app.Tool{Name: ToolInputSampling, InputSchema: none,
			Description: "Asks the client's model for the capital of France (sampling, input capital_question) and returns the answer."},
			run: (*Fixtures).runInputSampling},
		{def: app.Tool{Name: ToolInputListRoots, InputSchema: none,
			Description: "Asks the client for its roots (roots/list, input client_roots) and lists them."},
			run: (*Fixtures).runInputListRoots},
		{def: app.Tool{Name: ToolInputMultiRound, InputSchema: none,
			Description: "Asks for the user's name (step1), then, once it has it, for their favorite color (step2): two rounds of input."},
			run: (*Fixtures).runInputMultiRound},
		{def: app.Tool{Name: ToolInputMultiple, InputSchema: none,
			Description: "Asks at once for the user's name (user_name), a greeting from the model (greeting) and the client's roots (client_roots)."},
			run: (*Fixtures).runInputMultiple},
		{def: app.Tool{Name: ToolInputRequestState, InputSchema: none,
			Description: "Asks the user to confirm (input confirm); under 2026-07-28 the retry must carry the requestState back, and the answer says state-ok."},
			run: (*Fixtures).runInputRequestState},
		{def: app.Tool{Name: ToolInputTamperedState, InputSchema: none,
			Description: "Asks the user to confirm (input confirm); under 2026-07-28 a retry whose requestState was altered is rejected."},
			run: (*Fixtures).runInputTamperedState},
		{def: app.Tool{Name: ToolInputCapabilities, InputSchema: none,
			Description: "Asks the client for what it declared it can give: sampling, elicitation and roots, each only when declared."},
			run: (*Fixtures).runInputCapabilities},
	}
}

// missingCapabilities returns the capabilities that inputs need and caps
// lacks, or nil when caps has them all.
func missingCapabilities(caps *mcp.ClientCapabilities, inputs map[string]peer.Input) *mcp.ClientCapabilities {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	var miss mcp.ClientCapabilities
	missing := false
	for _, in := range inputs {
		switch {
		case in.Method == mcp.MethodCreateMessage && caps.Sampling == nil:
			miss.Sampling, missing = &mcp.ClientCapabilitiesSampling{}, true
		case in.Method == mcp.MethodElicit && caps.Elicitation == nil:
			miss.Elicitation, missing = &mcp.ClientCapabilitiesElicitation{}, true
		case in.Method == mcp.MethodListRoots && caps.Roots == nil:
			miss.Roots, missing = &mcp.ClientCapabilitiesRoots{}, true
		}
	}
	if !missing {
		return nil
	}
	return &miss
}

// clientCaps returns what the client of the call declared (never nil).
func clientCaps(ctx context.Context) *mcp.ClientCapabilities {
	if p := peer.From(ctx); p != nil && p.ClientCapabilities() != nil {
		return p.ClientCapabilities()
	}
	return &mcp.ClientCapabilities{}
}

// ask asks the client for inputs through peer.Ask, once it has checked that
// the client declared the capabilities they need: a missing one is the
// -32021 error (peer.MissingCapability). When res or err is not nil the tool
// returns them as they are: a tool error for a client that refused, or the
// error of a call that waits for the client's input (peer.ErrInputRequired).
func ask(ctx context.Context, what string, inputs map[string]peer.Input) (answers map[string]wire.Encoder, res *mcp.CallToolResult, err error) {
	p := peer.From(ctx)
	if p == nil {
		res, err = askFailed(ctx, what, peer.ErrNoPeer)
		return nil, res, err
	}
	if miss := missingCapabilities(p.ClientCapabilities(), inputs); miss != nil {
		return nil, nil, peer.MissingCapability(miss)
	}
	answers, err = peer.Ask(ctx, inputs)
	if err != nil {
		res, err = askFailed(ctx, what, err)
		return nil, res, err
	}
	return answers, nil, nil
}

// answer returns the answer to key, decoded by its method (e.g. an
// *mcp.ElicitResult); a missing or other answer is a tool error.
func answer[T wire.Encoder](answers map[string]wire.Encoder, key string) (T, *mcp.CallToolResult) {
	r, ok := answers[key].(T)
	if !ok {
		var zero T
		return zero, app.ToolError(fmt.Sprintf("The client's answer to %q is missing or of the wrong kind.", key))
	}
	return r, nil
}

// formValue reads field of the form the user answered under key. When the
// user declined or cancelled, res is what the tool answers instead (not an
// error: the user chose); a form without the field, or with a value of
// another type, is a tool error.
func formValue[T any](answers map[string]wire.Encoder, key, field string) (v T, res *mcp.CallToolResult) {
	r, res := answer[*mcp.ElicitResult](answers, key)
	if res != nil {
		return v, res
	}
	if r.Action != "accept" {
		return v, result(text(fmt.Sprintf("The user did not answer %s (action=%s).", key, r.Action)))
	}
	v, ok := r.Content[field].(T)
	if !ok {
		return v, app.ToolError(fmt.Sprintf("The answer to %s has no %T field %q: %s", key, v, field, jsonText(r.Content)))
	}
	return v, nil
}

// rootsText lists roots as "uri (name)", comma-separated.
func rootsText(r *mcp.ListRootsResult) string {
	if len(r.Roots) == 0 {
		return "none"
	}
	parts := make([]string, len(r.Roots))
	for i, root := range r.Roots {
		parts[i] = root.URI
		if root.Name != "" {
			parts[i] += " (" + root.Name + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func (f *Fixtures) runInputElicitation(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	name, res, err := askField[string](ctx, KeyUserName, NameQuestion, "name")
	if res != nil || err != nil {
		return res, err
	}
	return result(text("Hello, " + name + "!")), nil
}

func (f *Fixtures) runInputSampling(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	answers, res, err := ask(ctx, "sampling", map[string]peer.Input{KeyCapitalQuestion: samplingInput(CapitalQuestion, CapitalMaxTokens)})
	if res != nil || err != nil {
		return res, err
	}
	r, res := answer[*mcp.CreateMessageResult](answers, KeyCapitalQuestion)
	if res != nil {
		return res, nil
	}
	return result(text(samplingReplyPrefix + samplingText(r.Content))), nil
}

func (f *Fixtures) runInputListRoots(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	answers, res, err := ask(ctx, "roots", map[string]peer.Input{KeyClientRoots: rootsInput()})
	if res != nil || err != nil {
		return res, err
	}
	r, res := answer[*mcp.ListRootsResult](answers, KeyClientRoots)
	if res != nil {
		return res, nil
	}
	return result(text("Client roots: " + rootsText(r))), nil
}

// runInputMultiRound asks for step2 only once it has the answer to step1:
// under 2026-07-28 that is a second input-required result, the answer to
// step1 travelling in the requestState.
func (f *Fixtures) runInputMultiRound(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	name, res, err := askField[string](ctx, KeyStep1, Step1Question, "name")
	if res != nil || err != nil {
		return res, err
	}
	color, res, err := askField[string](ctx, KeyStep2, Step2Question, "color")
	if res != nil || err != nil {
		return res, err
	}
	return result(text(fmt.Sprintf("Hello, %s! Your favorite color is %s.", name, color))), nil
}

// runInputMultiple asks for three inputs of three kinds in one round.
func (f *Fixtures) runInputMultiple(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	answers, res, err := ask(ctx, "input", map[string]peer.Input{
		KeyUserName:    formInput(NameQuestion, "name", "string"),
		KeyGreeting:    samplingInput(GreetingPrompt, GreetingMaxTokens),
		KeyClientRoots: rootsInput(),
	})
	if res != nil || err != nil {
		return res, err
	}
	name, res := formValue[string](answers, KeyUserName, "name")
	if res != nil {
		return res, nil
	}
	greeting, res := answer[*mcp.CreateMessageResult](answers, KeyGreeting)
	if res != nil {
		return res, nil
	}
	roots, res := answer[*mcp.ListRootsResult](answers, KeyClientRoots)
	if res != nil {
		return res, nil
	}
	return result(text(fmt.Sprintf("Name: %s\nGreeting: %s\nRoots: %s", name, samplingText(greeting.Content), rootsText(roots)))), nil
}

// confirm asks the user to confirm and returns the ok they gave.
func confirm(ctx context.Context) (bool, *mcp.CallToolResult, error) {
	return askField[bool](ctx, KeyConfirm, ConfirmQuestion, "ok")
}

// runInputRequestState answers "state-ok" once it has the confirmation:
// under 2026-07-28 the server only calls the tool again when the
// requestState the client echoes passed its integrity check (a tampered
// one is -32602 before any fixture runs).
func (f *Fixtures) runInputRequestState(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	ok, res, err := confirm(ctx)
	if res != nil || err != nil {
		return res, err
	}
	return result(text(fmt.Sprintf("state-ok: confirmed ok=%t", ok))), nil
}

func (f *Fixtures) runInputTamperedState(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	ok, res, err := confirm(ctx)
	if res != nil || err != nil {
		return res, err
	}
	return result(text(fmt.Sprintf("Confirmed ok=%t", ok))), nil
}

// runInputCapabilities asks only for what the client declared: sampling,
// elicitation and roots, each when declared.
func (f *Fixtures) runInputCapabilities(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
	caps := clientCaps(ctx)
	inputs := map[string]peer.Input{}
	if caps.Elicitation != nil {
		inputs[KeyUserName] = formInput(NameQuestion, "name", "string")
	}
	if caps.Sampling != nil {
		inputs[KeyCapitalQuestion] = samplingInput(CapitalQuestion, CapitalMaxTokens)
	}
	if caps.Roots != nil {
		inputs[KeyClientRoots] = rootsInput()
	}
	if len(inputs) == 0 {
		return result(text("The client declared none of sampling, elicitation and roots: there is nothing to ask.")), nil
	}
	answers, res, err := ask(ctx, "input", inputs)
	if res != nil || err != nil {
		return res, err
	}
	var lines []string
	if _, asked := inputs[KeyUserName]; asked {
		name, res := formValue[string](answers, KeyUserName, "name")
		if res != nil {
			return res, nil
		}
		lines = append(lines, "Name: "+name)
	}
	if _, asked := inputs[KeyCapitalQuestion]; asked {
		r, res := answer[*mcp.CreateMessageResult](answers, KeyCapitalQuestion)
		if res != nil {
			return res, nil
		}
		lines = append(lines, "Capital: "+samplingText(r.Content))
	}
	if _, asked := inputs[KeyClientRoots]; asked {
		r, res := answer[*mcp.ListRootsResult](answers, KeyClientRoots)
		if res != nil {
			return res, nil
		}
		lines = append(lines, "Roots: "+rootsText(r))
	}
	return result(text(strings.Join(lines, "\n"))), nil
}

// ContextPromptText is how test_input_required_result_prompt uses the
// context the user gave.
const ContextPromptText = "Answer using this context: "

// inputPrompt renders test_input_required_result_prompt: it asks the user
// for the context it uses. A prompt has no tool errors: a client that
// refused, or an answer without the context, is a protocol error.
func inputPrompt(ctx context.Context, _ struct{}) (*mcp.GetPromptResult, error) {
	answers, res, err := ask(ctx, "elicitation", map[string]peer.Input{KeyUserContext: formInput(ContextQuestion, "context", "string")})
	if err != nil {
		return nil, err
	}
	if res != nil {
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: resultText(res)}
	}
	r, res := answer[*mcp.ElicitResult](answers, KeyUserContext)
	if res != nil {
		return nil, &wire.Error{Code: wire.CodeInternalError, Message: resultText(res)}
	}
	if r.Action != "accept" {
		return messages(user(text(fmt.Sprintf("Answer without any particular context: the user gave none (action=%s).", r.Action)))), nil
	}
	given, ok := r.Content["context"].(string)
	if !ok {
		return nil, wire.NewError(wire.CodeInvalidParams, "the answer to %s has no string field \"context\": %s", KeyUserContext, jsonText(r.Content))
	}
	return messages(user(text(ContextPromptText + given))), nil
}

// resultText is the text of a one-block tool result.
func resultText(r *mcp.CallToolResult) string {
	if len(r.Content) == 1 {
		if t, ok := r.Content[0].(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "the client's input is missing"
}
