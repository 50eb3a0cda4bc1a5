package conformance

import (
	"context"
	"errors"
	"sort"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/wire"
)

// allCaps is what the suite's client declares: sampling, elicitation, roots.
func allCaps() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		Sampling:    &mcp.ClientCapabilitiesSampling{},
		Elicitation: &mcp.ClientCapabilitiesElicitation{},
		Roots:       &mcp.ClientCapabilitiesRoots{},
	}
}

// formValues are what the fake user types, by field.
var formValues = map[string]any{"name": "Alice", "color": "blue", "ok": true, "context": "test context"}

// modelReplies are what the fake model answers, by prompt.
var modelReplies = map[string]string{
	CapitalQuestion: "The capital of France is Paris.",
	GreetingPrompt:  "Hello there!",
	ProbePrompt:     "ready",
}

const testRoots = `{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`

// respond answers an input as the suite's client does: the user accepts
// the form with formValues, the model replies with modelReplies, and the
// client has one root.
func respond(a asked) string {
	switch a.Method {
	case mcp.MethodElicit:
		schema, _ := a.Params["requestedSchema"].(map[string]any)
		props, _ := schema["properties"].(map[string]any)
		content := map[string]any{}
		for field := range props {
			content[field] = formValues[field]
		}
		return mustJSON(map[string]any{"action": "accept", "content": content})
	case mcp.MethodCreateMessage:
		msgs, _ := a.Params["messages"].([]any)
		var prompt string
		if len(msgs) == 1 {
			c, _ := msgs[0].(map[string]any)["content"].(map[string]any)
			prompt, _ = c["text"].(string)
		}
		return mustJSON(map[string]any{"role": "assistant", "model": "test-model", "stopReason": "endTurn",
			"content": map[string]any{"type": "text", "text": modelReplies[prompt]}})
	case mcp.MethodListRoots:
		return testRoots
	}
	return "{}"
}

// The inputs, as the suite's descriptions show them.
const (
	askName     = `"user_name":{"method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	askCapital  = `"capital_question":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}`
	askRoots    = `"client_roots":{"method":"roots/list","params":{}}`
	askStep1    = `"step1":{"method":"elicitation/create","params":{"message":"Step 1: What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	askStep2    = `"step2":{"method":"elicitation/create","params":{"message":"Step 2: What is your favorite color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}}`
	askGreeting = `"greeting":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}}`
	askConfirm  = `"confirm":{"method":"elicitation/create","params":{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}`
	askContext  = `"user_context":{"method":"elicitation/create","params":{"message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}}`
	askProbe    = `"probe":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Reply with one word: ready?"}}],"maxTokens":10}}`
)

var inputToolCases = []struct {
	tool   string
	rounds []string // the inputRequests of each input-required result
	want   string
}{
	{ToolInputElicitation, []string{askName}, "Hello, Alice!"},
	{ToolInputSampling, []string{askCapital}, "LLM response: The capital of France is Paris."},
	{ToolInputListRoots, []string{askRoots}, "Client roots: file:///test/root (Test Root)"},
	{ToolInputMultiRound, []string{askStep1, askStep2}, "Hello, Alice! Your favorite color is blue."},
	{ToolInputMultiple, []string{askName + "," + askGreeting + "," + askRoots},
		"Name: Alice\nGreeting: Hello there!\nRoots: file:///test/root (Test Root)"},
	{ToolInputRequestState, []string{askConfirm}, "state-ok: confirmed ok=true"},
	{ToolInputTamperedState, []string{askConfirm}, "Confirmed ok=true"},
	{ToolInputCapabilities, []string{askName + "," + askCapital + "," + askRoots},
		"Name: Alice\nCapital: The capital of France is Paris.\nRoots: file:///test/root (Test Root)"},
	{ToolMissingCapability, []string{askProbe}, "Sampling is available. LLM response: ready"},
	{ToolStreamingElicitation, []string{askName}, "Hello, Alice!"},
}

// Under 2026-07-28 each tool returns while it waits for input, and the
// input-required results list exactly the inputs the suite expects; the
// retry with the answers completes with a text built from them.
func TestInputToolsStateless(t *testing.T) {
	for _, tc := range inputToolCases {
		t.Run(tc.tool, func(t *testing.T) {
			f := fast()
			r, err, peers := mrtr(t, allCaps(), respond, func(ctx context.Context) (*mcp.CallToolResult, error) {
				return f.CallTool(ctx, &mcp.CallToolRequestParams{Name: tc.tool, Arguments: map[string]any{}})
			})
			if err != nil {
				t.Fatal(err)
			}
			tree := wireResult(t, mcp.MethodCallTool, statelessRev, r)
			if got := onlyText(t, tree); got != tc.want || isError(tree) {
				t.Errorf("text %q (isError %v), want %q", got, isError(tree), tc.want)
			}
			got := rounds(peers)
			if len(got) != len(tc.rounds) {
				t.Fatalf("%d input-required rounds %v, want %d", len(got), got, len(tc.rounds))
			}
			for i, want := range tc.rounds {
				if w := canon(t, "{"+want+"}"); got[i] != w {
					t.Errorf("round %d asks\n%s\nwant\n%s", i+1, got[i], w)
				}
			}
			// Nothing went to the client as a request of its own.
			for _, p := range peers {
				if n := len(p.Requests()); n != 0 {
					t.Errorf("%d requests sent to a stateless client", n)
				}
			}
		})
	}
}

// Over a session the same tools send the same inputs as requests, one by
// one in key order, and complete with the same text.
func TestInputToolsSession(t *testing.T) {
	for _, tc := range inputToolCases {
		t.Run(tc.tool, func(t *testing.T) {
			p := newPeer(t)
			p.Caps = allCaps()
			p.Answer = func(method string, params map[string]any) (string, error) {
				return respond(asked{Method: method, Params: params}), nil
			}
			tree := call(t, fast(), p.Ctx(), tc.tool, nil)
			if got := onlyText(t, tree); got != tc.want || isError(tree) {
				t.Errorf("text %q (isError %v), want %q", got, isError(tree), tc.want)
			}
			var want []string
			for _, round := range tc.rounds {
				reqs := obj(t, reparse(t, mustParse(t, "{"+round+"}")))
				keys := make([]string, 0, len(reqs))
				for k := range reqs {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					want = append(want, mustJSON(reqs[k]))
				}
			}
			reqs := p.Requests()
			if len(reqs) != len(want) {
				t.Fatalf("%d requests, want %d", len(reqs), len(want))
			}
			for i, r := range reqs {
				if got := mustJSON(map[string]any{"method": r.Method, "params": r.Params}); got != want[i] {
					t.Errorf("request %d: %s, want %s", i+1, got, want[i])
				}
			}
		})
	}
}

func mustParse(t testing.TB, s string) any {
	t.Helper()
	v, err := jsontree.Parse([]byte(s))
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

// checkMissingCapability asserts err is the -32021 error naming want (a
// ClientCapabilities JSON), valid in 2026-07-28.
func checkMissingCapability(t testing.TB, err error, want string) {
	t.Helper()
	we := wireError(t, err, wire.CodeMissingRequiredClientCapability)
	msg := reparse(t, map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": we.Code, "message": we.Message, "data": we.Data}})
	if err := generated.Lookup(statelessRev).Validate("MissingRequiredClientCapabilityError", msg); err != nil {
		t.Errorf("invalid error %s: %v", mustJSON(msg), err)
	}
	data := obj(t, obj(t, msg)["error"].(map[string]any)["data"])
	if got := mustJSON(data["requiredCapabilities"]); got != want {
		t.Errorf("requiredCapabilities %s, want %s", got, want)
	}
}

// A tool that needs a capability the client did not declare is -32021
// naming the capabilities, before it asks anything.
func TestMissingCapabilities(t *testing.T) {
	tests := []struct {
		tool string
		caps *mcp.ClientCapabilities
		want string
	}{
		{ToolMissingCapability, &mcp.ClientCapabilities{}, `{"sampling":{}}`},
		{ToolMissingCapability, nil, `{"sampling":{}}`},
		{ToolMissingCapability, &mcp.ClientCapabilities{Elicitation: &mcp.ClientCapabilitiesElicitation{}, Roots: &mcp.ClientCapabilitiesRoots{}}, `{"sampling":{}}`},
		{ToolInputElicitation, &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}, `{"elicitation":{}}`},
		{ToolInputSampling, &mcp.ClientCapabilities{Elicitation: &mcp.ClientCapabilitiesElicitation{}}, `{"sampling":{}}`},
		{ToolInputListRoots, &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}, `{"roots":{}}`},
		{ToolInputMultiple, &mcp.ClientCapabilities{Elicitation: &mcp.ClientCapabilitiesElicitation{}}, `{"roots":{},"sampling":{}}`},
		{ToolInputMultiRound, &mcp.ClientCapabilities{}, `{"elicitation":{}}`},
		{ToolStreamingElicitation, &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}, `{"elicitation":{}}`},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			// 2026-07-28: the capabilities come from _meta.
			sp := newAskingPeer(t, tc.caps, nil)
			_, err := fast().CallTool(sp.Ctx(), &mcp.CallToolRequestParams{Name: tc.tool})
			checkMissingCapability(t, err, tc.want)
			if len(sp.asks) != 0 {
				t.Errorf("asked %v", sp.asks)
			}
			// A session: the capabilities of initialize.
			p := newPeer(t)
			p.Caps = tc.caps
			_, err = fast().CallTool(p.Ctx(), &mcp.CallToolRequestParams{Name: tc.tool})
			checkMissingCapability(t, err, tc.want)
			if n := len(p.Requests()); n != 0 {
				t.Errorf("%d requests", n)
			}
		})
	}
}

// test_input_required_result_capabilities asks only for what the client
// declared.
func TestInputCapabilities(t *testing.T) {
	tests := []struct {
		name   string
		caps   *mcp.ClientCapabilities
		rounds []string
		want   string
	}{
		{"sampling only", &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}, []string{askCapital},
			"Capital: The capital of France is Paris."},
		{"elicitation and roots", &mcp.ClientCapabilities{Elicitation: &mcp.ClientCapabilitiesElicitation{}, Roots: &mcp.ClientCapabilitiesRoots{}},
			[]string{askName + "," + askRoots}, "Name: Alice\nRoots: file:///test/root (Test Root)"},
		{"nothing", &mcp.ClientCapabilities{}, nil, "The client declared none of sampling, elicitation and roots: there is nothing to ask."},
		{"no capabilities member", nil, nil, "The client declared none of sampling, elicitation and roots: there is nothing to ask."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := fast()
			r, err, peers := mrtr(t, tc.caps, respond, func(ctx context.Context) (*mcp.CallToolResult, error) {
				return f.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolInputCapabilities})
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := onlyText(t, wireResult(t, mcp.MethodCallTool, statelessRev, r)); got != tc.want {
				t.Errorf("text %q, want %q", got, tc.want)
			}
			got := rounds(peers)
			if len(got) != len(tc.rounds) {
				t.Fatalf("rounds %v, want %d", got, len(tc.rounds))
			}
			for i, want := range tc.rounds {
				if w := canon(t, "{"+want+"}"); got[i] != w {
					t.Errorf("round %d asks %s, want %s", i+1, got[i], w)
				}
			}
		})
	}
}

// Until every input is answered the tool waits, whatever else the client
// sent: a wrong key asks again; extra keys are ignored.
func TestInputAnswersIncomplete(t *testing.T) {
	f := fast()
	p := newAskingPeer(t, allCaps(), map[string]string{"wrong_key": `{"action":"accept","content":{"data":"wrong"}}`})
	r, err := f.CallTool(p.Ctx(), &mcp.CallToolRequestParams{Name: ToolInputElicitation})
	if !errors.Is(err, peer.ErrInputRequired) || r != nil {
		t.Fatalf("result %v, error %v; want none and peer.ErrInputRequired", r, err)
	}
	if m := p.missingInputs(); len(m) != 1 || m[0].key != KeyUserName {
		t.Errorf("missing %v, want user_name", m)
	}
	p = newAskingPeer(t, allCaps(), map[string]string{
		KeyUserName:          `{"action":"accept","content":{"name":"Alice"}}`,
		"unknown_extra_key":  `{"action":"accept","content":{"foo":"bar"}}`,
		"another_unexpected": `{"action":"accept","content":{"baz":123}}`,
	})
	tree := call(t, f, p.Ctx(), ToolInputElicitation, nil)
	if got := onlyText(t, tree); got != "Hello, Alice!" {
		t.Errorf("text %q", got)
	}
	// Multi-round: the answer to step2 without step1 asks step1 again.
	p = newAskingPeer(t, allCaps(), map[string]string{KeyStep2: `{"action":"accept","content":{"color":"blue"}}`})
	if _, err := f.CallTool(p.Ctx(), &mcp.CallToolRequestParams{Name: ToolInputMultiRound}); !errors.Is(err, peer.ErrInputRequired) {
		t.Fatalf("error %v", err)
	}
	if m := p.missingInputs(); len(m) != 1 || m[0].key != KeyStep1 {
		t.Errorf("missing %v, want step1", m)
	}
}

// What the user or the client answers other than an accepted form ends the
// tool with a text saying so.
func TestInputAnswersDeclined(t *testing.T) {
	tests := []struct {
		name, tool, key, answer string
		want                    string
		wantErr                 bool
	}{
		{"decline", ToolInputElicitation, KeyUserName, `{"action":"decline"}`, "The user did not answer user_name (action=decline).", false},
		{"cancel", ToolInputRequestState, KeyConfirm, `{"action":"cancel"}`, "The user did not answer confirm (action=cancel).", false},
		{"no field", ToolInputElicitation, KeyUserName, `{"action":"accept","content":{}}`, `The answer to user_name has no string field "name": {}`, true},
		{"wrong type", ToolInputRequestState, KeyConfirm, `{"action":"accept","content":{"ok":"yes"}}`, `The answer to confirm has no bool field "ok": {"ok":"yes"}`, true},
		{"no roots", ToolInputListRoots, KeyClientRoots, `{"roots":[]}`, "Client roots: none", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newAskingPeer(t, allCaps(), map[string]string{tc.key: tc.answer})
			tree := call(t, fast(), p.Ctx(), tc.tool, nil)
			if got := onlyText(t, tree); got != tc.want || isError(tree) != tc.wantErr {
				t.Errorf("text %q (isError %v), want %q (%v)", got, isError(tree), tc.want, tc.wantErr)
			}
		})
	}
}

// Over a session a client that refuses a request makes the tool fail with a
// tool error the model can read.
func TestInputRefusedOverSession(t *testing.T) {
	p := newPeer(t)
	p.Caps = allCaps()
	p.Answer = func(string, map[string]any) (string, error) {
		return "", &wire.Error{Code: -1, Message: "User rejected the request"}
	}
	tree := call(t, fast(), p.Ctx(), ToolInputMultiple, nil)
	if !isError(tree) || onlyText(t, tree) != "The client refused the input request: User rejected the request (code -1)." {
		t.Errorf("result %s", mustJSON(tree))
	}
	if n := len(p.Requests()); n != 1 {
		t.Errorf("%d requests, want 1: the first refusal ends the tool", n)
	}
	// Outside a call there is nobody to ask.
	tree = call(t, fast(), context.Background(), ToolInputElicitation, nil)
	if !isError(tree) || onlyText(t, tree) != "The client cannot be asked for elicitation on this connection." {
		t.Errorf("result %s", mustJSON(tree))
	}
}

// The tools written for sessions (peer.CreateMessage, peer.Elicit) work the
// same under 2026-07-28: the server's stateless peer turns their requests
// into inputs, and the tool waits instead of failing.
func TestSessionToolsStateless(t *testing.T) {
	f := fast()
	r, err, peers := mrtr(t, allCaps(), respond, func(ctx context.Context) (*mcp.CallToolResult, error) {
		return f.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolSampling, Arguments: map[string]any{"prompt": CapitalQuestion}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := onlyText(t, wireResult(t, mcp.MethodCallTool, statelessRev, r)); got != "LLM response: The capital of France is Paris." {
		t.Errorf("text %q", got)
	}
	if len(peers) != 2 {
		t.Errorf("%d rounds, want 2", len(peers))
	}
}

func TestInputPrompt(t *testing.T) {
	wantMsgs := `[{"content":{"text":"Answer using this context: test context","type":"text"},"role":"user"}]`
	check := func(t *testing.T, r *mcp.GetPromptResult) {
		t.Helper()
		for _, rev := range revisionsOf(mcp.MethodGetPrompt) {
			wireResult(t, mcp.MethodGetPrompt, rev, r)
		}
		if got := mustJSON(wireResult(t, mcp.MethodGetPrompt, statelessRev, r)["messages"]); got != wantMsgs {
			t.Errorf("messages %s, want %s", got, wantMsgs)
		}
	}
	t.Run("stateless", func(t *testing.T) {
		f := fast()
		r, err, peers := mrtr(t, allCaps(), respond, func(ctx context.Context) (*mcp.GetPromptResult, error) {
			return f.GetPrompt(ctx, &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		})
		if err != nil {
			t.Fatal(err)
		}
		check(t, r)
		if got, want := rounds(peers), canon(t, "{"+askContext+"}"); len(got) != 1 || got[0] != want {
			t.Errorf("rounds %v, want [%s]", got, want)
		}
	})
	t.Run("session", func(t *testing.T) {
		p := newPeer(t)
		p.Answer = func(method string, params map[string]any) (string, error) {
			return respond(asked{Method: method, Params: params}), nil
		}
		r, err := fast().GetPrompt(p.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		if err != nil {
			t.Fatal(err)
		}
		check(t, r)
		if reqs := p.Requests(); len(reqs) != 1 || mustJSON(map[string]any{"method": reqs[0].Method, "params": reqs[0].Params}) != mustJSON(obj(t, mustParse(t, "{"+askContext+"}"))[KeyUserContext]) {
			t.Errorf("requests %v", reqs)
		}
	})
	t.Run("declined", func(t *testing.T) {
		p := newAskingPeer(t, allCaps(), map[string]string{KeyUserContext: `{"action":"decline"}`})
		r, err := fast().GetPrompt(p.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		if err != nil {
			t.Fatal(err)
		}
		want := `[{"content":{"text":"Answer without any particular context: the user gave none (action=decline).","type":"text"},"role":"user"}]`
		if got := mustJSON(wireResult(t, mcp.MethodGetPrompt, statelessRev, r)["messages"]); got != want {
			t.Errorf("messages %s", got)
		}
	})
	t.Run("errors", func(t *testing.T) {
		p := newAskingPeer(t, &mcp.ClientCapabilities{Sampling: &mcp.ClientCapabilitiesSampling{}}, nil)
		_, err := fast().GetPrompt(p.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		checkMissingCapability(t, err, `{"elicitation":{}}`)

		p = newAskingPeer(t, allCaps(), map[string]string{KeyUserContext: `{"action":"accept","content":{"context":1}}`})
		_, err = fast().GetPrompt(p.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		wireError(t, err, wire.CodeInvalidParams)

		s := newPeer(t)
		s.Answer = func(string, map[string]any) (string, error) { return "", &wire.Error{Code: -1, Message: "no"} }
		_, err = fast().GetPrompt(s.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		if we := wireError(t, err, wire.CodeInternalError); we.Message != "The client refused the elicitation request: no (code -1)." {
			t.Errorf("message %q", we.Message)
		}

		p = newAskingPeer(t, allCaps(), nil)
		r, err := fast().GetPrompt(p.Ctx(), &mcp.GetPromptRequestParams{Name: PromptInputRequired})
		if !errors.Is(err, peer.ErrInputRequired) || r != nil {
			t.Errorf("result %v, error %v", r, err)
		}
	})
}
