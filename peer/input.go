package peer

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Input is one request for input from the client: a sampling, elicitation
// or roots request.
type Input struct {
	Method string       // mcp.MethodCreateMessage, mcp.MethodElicit, mcp.MethodListRoots
	Params wire.Encoder // their params
}

// Asker is implemented by peers that can ask several inputs in one round:
// under 2026-07-28 the server answers with an input-required result naming
// every missing input, and the client retries the request with the answers.
type Asker interface {
	Ask(ctx context.Context, inputs map[string]Input) (map[string]wire.Encoder, error)
}

// ErrInputRequired is returned by Ask and the request helpers under a
// stateless revision when the client has not answered yet. The server turns
// the call into an input-required result, whatever the method returns
// afterwards; the method just returns.
var ErrInputRequired = errors.New("peer: waiting for the client's input; the request will be retried with it")

// Ask asks the client for several inputs, keyed by names the method
// chooses, and returns the results by key (decoded by method: e.g. an
// *mcp.ElicitResult for an elicitation). Over a session the requests go out
// one by one; under 2026-07-28 they go out together in an input-required
// result. A method written against Ask works the same under both.
func Ask(ctx context.Context, inputs map[string]Input) (map[string]wire.Encoder, error) {
	p := From(ctx)
	if p == nil {
		return nil, ErrNoPeer
	}
	if a, ok := p.(Asker); ok {
		return a.Ask(ctx, inputs)
	}
	keys := make([]string, 0, len(inputs))
	for k := range inputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]wire.Encoder, len(inputs))
	for _, k := range keys {
		r, err := p.Call(ctx, inputs[k].Method, inputs[k].Params)
		if err != nil {
			return out, fmt.Errorf("input %q: %w", k, err)
		}
		out[k] = r
	}
	return out, nil
}

// MissingCapability is the error for a request that needs a client
// capability the client did not declare (-32021 in 2026-07-28; a server may
// send it under any revision). required names the capabilities, e.g.
// &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}.
func MissingCapability(required *mcp.ClientCapabilities) *wire.Error {
	return &wire.Error{
		Code:    wire.CodeMissingRequiredClientCapability,
		Message: "Missing required client capability",
		Data:    map[string]any{"requiredCapabilities": required.EncodeValue(wire.AllRevisions)},
	}
}
