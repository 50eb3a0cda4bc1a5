// Package agent is the language model behind the chat tool: one Agent
// interface and three providers, tried in a configured order.
//
//   - sampling asks the model of the connected client (sampling/createMessage);
//     it needs no API key, only a client that declared sampling.
//   - openai speaks to any OpenAI-compatible /v1/chat/completions endpoint
//     (OpenAI, Ollama, vLLM, llama.cpp, LiteLLM), streaming.
//   - echo is offline and deterministic, for demos and tests, and says so in
//     every answer.
//
// Fallback tries providers in order: a provider that cannot serve the call
// (ErrUnavailable) or fails before it has streamed anything hands over to
// the next; one that fails midway through its answer ends the call, since
// the client has already seen part of that answer.
package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Roles of a Message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of the conversation sent as context.
type Message struct {
	Role    string // RoleUser or RoleAssistant
	Content string
}

// Request is what the model is asked: the conversation so far, the new
// question last.
type Request struct {
	System    string    // instructions ("" for none)
	Messages  []Message // history, then the new user turn
	MaxTokens int64     // 0: the provider's default
}

// Query is the last user message of the request.
func (r *Request) Query() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleUser {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Usage counts tokens.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	TotalTokens      int64
	// Estimated is set when the provider reported nothing and the counts
	// come from EstimateTokens.
	Estimated bool
}

// Attempt records a provider that was tried and did not answer.
type Attempt struct {
	Provider string
	Err      error
}

// Response is a complete answer.
type Response struct {
	Text       string
	Provider   string // the provider that answered: "sampling", "openai", "echo"
	Model      string // the model the provider named
	StopReason string
	Usage      Usage
	// Skipped lists the providers tried before this one, in order.
	Skipped []Attempt
}

// DeltaFunc receives the answer as it streams, fragment by fragment. An
// error from it aborts the generation.
type DeltaFunc func(delta string) error

// Agent answers requests.
type Agent interface {
	// Name identifies the provider (or the chain).
	Name() string
	// Generate answers req, passing the answer to onDelta as it arrives
	// (the concatenation of the deltas is Response.Text), then returns the
	// complete answer.
	Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error)
}

// ErrUnavailable wraps the reason a provider cannot serve a call at all
// (not configured, the client declared no sampling). Fallback moves on.
var ErrUnavailable = errors.New("provider unavailable")

func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, fmt.Sprintf(format, args...))
}

// PartialError is returned when a provider failed after it had streamed
// part of its answer: the call cannot fall back any more.
type PartialError struct {
	Provider string
	Streamed string // what had been streamed
	Err      error
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%s failed after %d characters of its answer: %v", e.Provider, utf8.RuneCountInString(e.Streamed), e.Err)
}

func (e *PartialError) Unwrap() error { return e.Err }

// EstimateTokens guesses the tokens of s: about four characters a token,
// rounded up, the rule of thumb for English with BPE tokenizers.
func EstimateTokens(s string) int64 {
	return int64((utf8.RuneCountInString(s) + 3) / 4)
}

// estimatePrompt guesses the prompt tokens of a request: every message and
// the system prompt, plus 4 tokens of framing per message.
func estimatePrompt(r *Request) int64 {
	n := int64(0)
	if r.System != "" {
		n += EstimateTokens(r.System) + 4
	}
	for _, m := range r.Messages {
		n += EstimateTokens(m.Content) + 4
	}
	return n
}

// estimateUsage fills a Usage from the texts.
func estimateUsage(r *Request, answer string) Usage {
	p, c := estimatePrompt(r), EstimateTokens(answer)
	return Usage{PromptTokens: p, CompletionTokens: c, TotalTokens: p + c, Estimated: true}
}

// Fallback returns an Agent that tries agents in order (see the package
// documentation for when it moves on). It answers with the first success;
// its Response.Skipped says who failed before. When every provider fails
// the error names each failure.
func Fallback(agents ...Agent) Agent { return &fallback{agents: agents} }

type fallback struct{ agents []Agent }

func (f *fallback) Name() string {
	names := make([]string, len(f.agents))
	for i, a := range f.agents {
		names[i] = a.Name()
	}
	return strings.Join(names, ",")
}

func (f *fallback) Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error) {
	var skipped []Attempt
	for _, a := range f.agents {
		streamed := false
		var got strings.Builder
		resp, err := a.Generate(ctx, req, func(d string) error {
			if d == "" {
				return nil
			}
			streamed = true
			got.WriteString(d)
			return onDelta(d)
		})
		if err == nil {
			resp.Skipped = append(skipped, resp.Skipped...)
			if resp.Provider == "" {
				resp.Provider = a.Name()
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if streamed {
			var pe *PartialError
			if errors.As(err, &pe) {
				return nil, err
			}
			return nil, &PartialError{Provider: a.Name(), Streamed: got.String(), Err: err}
		}
		skipped = append(skipped, Attempt{Provider: a.Name(), Err: err})
	}
	if len(skipped) == 0 {
		return nil, errors.New("agent: no provider configured")
	}
	return nil, &ExhaustedError{Attempts: skipped}
}

// ExhaustedError says that every provider failed.
type ExhaustedError struct{ Attempts []Attempt }

func (e *ExhaustedError) Error() string {
	parts := make([]string, len(e.Attempts))
	for i, a := range e.Attempts {
		parts[i] = a.Provider + ": " + a.Err.Error()
	}
	return "no provider could answer (" + strings.Join(parts, "; ") + ")"
}

// Unwrap lets errors.Is see each provider's error.
func (e *ExhaustedError) Unwrap() []error {
	out := make([]error, len(e.Attempts))
	for i, a := range e.Attempts {
		out[i] = a.Err
	}
	return out
}
