package agent

import (
	"fmt"
	"strings"
)

// DefaultProviders is the provider order when none is configured: the
// client's own model when it offers sampling, then an OpenAI-compatible
// endpoint when one is configured, then the offline echo provider.
const DefaultProviders = "sampling,openai,echo"

// Config chooses the providers and configures them.
type Config struct {
	// Providers is the fallback order: a comma-separated list of
	// sampling, openai and echo, each at most once ("" is
	// DefaultProviders).
	Providers string
	Sampling  Sampling
	OpenAI    OpenAIConfig
}

// ParseProviders checks and splits a provider list.
func ParseProviders(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		s = DefaultProviders
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.ToLower(strings.TrimSpace(p))
		switch p {
		case SamplingName, OpenAIName, EchoName:
		default:
			return nil, fmt.Errorf("unknown provider %q (have sampling, openai, echo)", p)
		}
		if seen[p] {
			return nil, fmt.Errorf("provider %q is listed twice", p)
		}
		seen[p] = true
		out = append(out, p)
	}
	return out, nil
}

// New builds the agent cfg describes: the providers in order, behind
// Fallback.
func New(cfg Config) (Agent, error) {
	names, err := ParseProviders(cfg.Providers)
	if err != nil {
		return nil, err
	}
	agents := make([]Agent, 0, len(names))
	for _, n := range names {
		switch n {
		case SamplingName:
			s := cfg.Sampling
			agents = append(agents, &s)
		case OpenAIName:
			agents = append(agents, NewOpenAI(cfg.OpenAI))
		case EchoName:
			agents = append(agents, Echo{})
		}
	}
	return Fallback(agents...), nil
}
