package agent

import (
	"context"
	"fmt"
	"strings"
)

// EchoName names the echo provider, in configuration and in answers.
const EchoName = "echo"

// EchoBanner starts every answer of the echo provider, so nobody mistakes
// it for a model's.
const EchoBanner = "[echo provider: offline demo, no language model was asked]"

// Echo is the offline provider: it answers every question by repeating it,
// deterministically, streaming word by word. For demos and tests.
type Echo struct{}

// Name is "echo".
func (Echo) Name() string { return EchoName }

// Generate echoes the last user message and says how much history it was
// given.
func (Echo) Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error) {
	earlier := len(req.Messages) - 1
	if earlier < 0 {
		earlier = 0
	}
	answer := fmt.Sprintf("%s You said: %s", EchoBanner, req.Query())
	if earlier > 0 {
		answer += fmt.Sprintf(" (%d earlier messages in this conversation.)", earlier)
	}
	for _, w := range splitWords(answer) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := onDelta(w); err != nil {
			return nil, err
		}
	}
	return &Response{Text: answer, Provider: EchoName, Model: EchoName, StopReason: "endTurn", Usage: estimateUsage(req, answer)}, nil
}

// splitWords cuts s after each run of spaces, so the pieces join back to s.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		j := i
		for j < len(s) && s[j] == ' ' {
			j++
		}
		out = append(out, s[:j])
		s = s[j:]
	}
	return out
}
