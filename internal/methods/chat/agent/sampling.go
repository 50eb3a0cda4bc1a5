package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
)

// SamplingName names the sampling provider.
const SamplingName = "sampling"

// DefaultSamplingMaxTokens is the maxTokens of a sampling request whose
// Request sets none.
const DefaultSamplingMaxTokens = 1024

// Sampling asks the connected client's model, through
// sampling/createMessage. It needs no key: the client pays, and its user
// may review or refuse each request. It is unavailable when the call has
// no client that declared the sampling capability.
//
// Sampling is not streamed: the answer arrives whole and is passed on as
// one delta. Clients report no token usage, so usage is estimated.
type Sampling struct {
	// MaxTokens caps the answer (DefaultSamplingMaxTokens when 0 and the
	// Request sets none).
	MaxTokens int64
	// ModelHints are model name hints for the client ("claude", "gpt-4o").
	ModelHints []string
	// Temperature, when set, is passed on.
	Temperature *float64
}

// Name is "sampling".
func (*Sampling) Name() string { return SamplingName }

// Generate sends the conversation to the client's model.
func (s *Sampling) Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error) {
	p := peer.From(ctx)
	if p == nil {
		return nil, unavailable("no client connection to ask")
	}
	if c := p.ClientCapabilities(); c == nil || c.Sampling == nil {
		return nil, unavailable("the client did not declare the sampling capability")
	}
	params := &mcp.CreateMessageRequestParams{
		SystemPrompt: req.System,
		MaxTokens:    req.MaxTokens,
		Temperature:  s.Temperature,
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = s.MaxTokens
	}
	if params.MaxTokens <= 0 {
		params.MaxTokens = DefaultSamplingMaxTokens
	}
	if len(s.ModelHints) > 0 {
		prefs := &mcp.ModelPreferences{}
		for _, h := range s.ModelHints {
			prefs.Hints = append(prefs.Hints, &mcp.ModelHint{Name: h})
		}
		params.ModelPreferences = prefs
	}
	for _, m := range req.Messages {
		role := mcp.RoleUser
		if m.Role == RoleAssistant {
			role = mcp.RoleAssistant
		}
		params.Messages = append(params.Messages, &mcp.SamplingMessage{
			Role:    role,
			Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: m.Content}},
		})
	}
	r, err := peer.CreateMessage(ctx, params)
	if errors.Is(err, peer.ErrNotSupported) || errors.Is(err, peer.ErrNoPeer) {
		return nil, unavailable("%v", err)
	}
	if err != nil {
		return nil, err
	}
	text, err := samplingText(r.Content)
	if err != nil {
		return nil, err
	}
	if err := onDelta(text); err != nil {
		return nil, err
	}
	return &Response{Text: text, Provider: SamplingName, Model: r.Model, StopReason: r.StopReason, Usage: estimateUsage(req, text)}, nil
}

// samplingText joins the text blocks of a sampling result. An answer
// without text is an error.
func samplingText(content []mcp.SamplingMessageContentBlock) (string, error) {
	var parts, kinds []string
	for _, b := range content {
		if t, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
			continue
		}
		kinds = append(kinds, blockKind(b))
	}
	if len(parts) == 0 {
		return "", errors.New("the client's model answered without text (" + strings.Join(kinds, ", ") + ")")
	}
	return strings.Join(parts, "\n"), nil
}

// blockKind names a content block by its type tag.
func blockKind(b mcp.SamplingMessageContentBlock) string {
	if m, ok := b.EncodeValue(-1).(map[string]any); ok {
		if t, ok := m["type"].(string); ok {
			return t
		}
	}
	return "unknown"
}
