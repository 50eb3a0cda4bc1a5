package client

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// resultInputRequired is the resultType of a result that asks the client
// for input (2026-07-28).
const resultInputRequired = "input_required"

// resultTask is the resultType of a task (the tasks extension, SEP-2663).
const resultTask = "task"

// lookupSession is a revision negotiated by initialize, or nil.
func lookupSession(revision string) *protocol.Spec {
	if spec := generated.Lookup(revision); spec != nil && !spec.Stateless() {
		return spec
	}
	return nil
}

// newestKnown is the newest of revisions that this client speaks.
func newestKnown(revisions []string) *protocol.Spec {
	for i := len(generated.Specs) - 1; i >= 0; i-- {
		if slices.Contains(revisions, generated.Specs[i].Revision) {
			return generated.Specs[i]
		}
	}
	return nil
}

// discover asks a server of a stateless revision what it is: its info,
// capabilities and the revisions it serves.
func (s *Session) discover(ctx context.Context) error {
	spec := s.currentSpec()
	res, err := mcp.ServerRequests{Requester: s}.Discover(ctx, &mcp.RequestParams{})
	if err != nil {
		return fmt.Errorf("client: server/discover: %w", err)
	}
	if len(res.SupportedVersions) > 0 && !slices.Contains(res.SupportedVersions, spec.Revision) {
		// Negotiation: the newest revision the server lists that this
		// client speaks; one with sessions is negotiated by initialize.
		agreed := newestKnown(res.SupportedVersions)
		if agreed == nil {
			return fmt.Errorf("client: server/discover: %w", (&Violation{Rule: RuleVersion, Method: mcp.MethodDiscover, Pointer: "/result/supportedVersions",
				Reason: fmt.Sprintf("the server speaks %v, none of which this client knows", res.SupportedVersions)}).bound())
		}
		s.setSpec(agreed)
		if !agreed.Stateless() {
			return s.initialize(ctx)
		}
		return s.discover(ctx)
	}
	s.mu.Lock()
	if res.Meta != nil {
		s.info = res.Meta.ServerInfo
	}
	s.caps, s.instr = &res.Capabilities, res.Instructions
	s.mu.Unlock()
	s.conn.Negotiated(spec.Revision)
	return nil
}

// statelessRequest sends a request that stands alone: its version and the
// client's capabilities in _meta. An input-required result is answered
// with the client's handlers and the request sent again, with the answers
// and the server's requestState, until it completes; a task (WithTasks) is
// followed to its end.
func (s *Session) statelessRequest(ctx context.Context, spec *protocol.Spec, m protocol.Method, params map[string]any) (wire.Encoder, error) {
	tree, task, err := s.statelessRounds(ctx, spec, m, params)
	if err != nil {
		return nil, err
	}
	if task {
		return s.followTask(ctx, spec, m, tree.(map[string]any))
	}
	return s.decodeResult(spec, m, tree)
}

// statelessRounds sends the request, and again with the answers while the
// server asks for input; it returns the final result tree, and whether it
// is a task.
func (s *Session) statelessRounds(ctx context.Context, spec *protocol.Spec, m protocol.Method, params map[string]any) (any, bool, error) {
	for round := 0; ; round++ {
		params = jsontree.WithMeta(params, wire.MetaProtocolVersion, spec.Revision)
		params = jsontree.WithMeta(params, wire.MetaClientCapabilities, s.requestCapabilities(spec))
		r := s.roundTrip(ctx, spec, m, params)
		if r.err != nil {
			return nil, false, r.err
		}
		// An input-required result counts where the revision lets the
		// method answer one (its response schema passed).
		obj, _ := r.result.(map[string]any)
		if obj["resultType"] != resultInputRequired || !r.valid {
			return r.result, r.task, nil
		}
		if round+1 >= s.c.maxRounds {
			return nil, false, fmt.Errorf("client: %s: the server still asks for input after %d rounds", m.Name, round+1)
		}
		answers, err := s.answerInputs(ctx, spec, obj["inputRequests"])
		if err != nil {
			return nil, false, fmt.Errorf("client: %s: %w", m.Name, err)
		}
		params["inputResponses"] = answers
		if state, ok := obj["requestState"].(string); ok {
			params["requestState"] = state
		} else {
			delete(params, "requestState")
		}
	}
}

// requestCapabilities are the client's capabilities in the revision's
// shape, with the extensions of its revision that bring tasks where the
// client follows them (WithTasks).
func (s *Session) requestCapabilities(spec *protocol.Spec) any {
	caps := s.c.capabilities()
	if s.c.tasks {
		for _, x := range spec.Extensions {
			if x.Tasks != nil {
				if caps.Extensions == nil {
					caps.Extensions = map[string]mcp.JSONObject{}
				}
				caps.Extensions[x.ID] = mcp.JSONObject{}
			}
		}
	}
	return spec.Project(caps)
}

// maxInputs bounds the input requests of one round (or one task poll) the
// client answers: each runs a handler (sampling may call a model), and the
// schema bounds them by nothing. A server asks for more in as many rounds.
const maxInputs = maxServing

// answerInputs answers each input request with the client's handlers.
func (s *Session) answerInputs(ctx context.Context, spec *protocol.Spec, requests any) (map[string]any, error) {
	reqs, _ := requests.(map[string]any)
	if len(reqs) > maxInputs {
		return nil, fmt.Errorf("the server asked for %d inputs at once; this client answers at most %d in a round", len(reqs), maxInputs)
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	answers := make(map[string]any, len(reqs))
	for _, key := range keys {
		r, _ := reqs[key].(map[string]any)
		method, _ := r["method"].(string)
		result, err := s.handle(ctx, method, r["params"])
		if err != nil {
			return nil, fmt.Errorf("the server asked for %s (input %q), which this client cannot give: %v", method, key, refusal(err).Message)
		}
		answers[key] = spec.Project(result)
	}
	return answers, nil
}
