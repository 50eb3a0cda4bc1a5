package chat

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcpstack/mcpstack/internal/codec"
	"github.com/mcpstack/mcpstack/internal/protocol"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

// userKey carries the test's caller, as the auth middleware will.
type userKey struct{}

func asUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

func userFromCtx(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(userKey{}).(string)
	return u, ok
}

// scripted is a provider that streams fixed fragments and records what it
// was asked.
type scripted struct {
	mu     sync.Mutex
	deltas []string
	err    error
	usage  agent.Usage
	reqs   []agent.Request
}

func (s *scripted) Name() string { return "scripted" }

func (s *scripted) Generate(ctx context.Context, req *agent.Request, onDelta agent.DeltaFunc) (*agent.Response, error) {
	s.mu.Lock()
	r := *req
	r.Messages = slices.Clone(req.Messages)
	s.reqs = append(s.reqs, r)
	deltas, err, usage := s.deltas, s.err, s.usage
	s.mu.Unlock()
	for _, d := range deltas {
		if err := onDelta(d); err != nil {
			return nil, err
		}
	}
	if err != nil {
		return nil, err
	}
	return &agent.Response{Text: strings.Join(deltas, ""), Provider: "scripted", Model: "scripted-1", Usage: usage}, nil
}

func (s *scripted) requests() []agent.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func openStore(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newApp returns an App over a fresh SQLite store; the caller is whoever
// asUser put in the context, else LocalUser.
func newApp(t *testing.T, ag agent.Agent, opts ...Option) (*App, store.Store) {
	t.Helper()
	s := openStore(t, filepath.Join(t.TempDir(), "data"))
	return New(s, ag, append([]Option{WithUser(userFromCtx)}, opts...)...), s
}

// client is a fake client in one session.
func client(t *testing.T, session string) *peertest.Peer {
	p := peertest.New(t)
	p.Session = session
	return p
}

func ctxOf(p peer.Peer, user string) context.Context {
	return asUser(peer.With(context.Background(), p), user)
}

var testExtValidator = sync.OnceValues(func() (*protocol.Validator, error) { return protocol.NewValidator(schema.FS, schema.Ext) })

// extPeer is a client whose server can send extension notifications.
type extPeer struct {
	*peertest.Peer
	mu     sync.Mutex
	events []extEvent
}

type extEvent struct {
	method, definition string
	params             map[string]any
}

func (p *extPeer) NotifyExtension(ctx context.Context, method, definition string, params any) error {
	p.T.Helper()
	if !strings.HasPrefix(method, "notifications/io.mcpstack/") {
		p.T.Errorf("extension method %q is not under notifications/io.mcpstack/", method)
	}
	// What a strict server would check, independently of the app.
	v, err := testExtValidator()
	if err != nil {
		p.T.Fatal(err)
	}
	tree := peertest.Reparse(p.T, params)
	if err := v.Validate(definition, tree); err != nil {
		p.T.Errorf("%s event invalid: %v\n%s", definition, err, peertest.MustJSON(tree))
	}
	p.mu.Lock()
	p.events = append(p.events, extEvent{method, definition, tree.(map[string]any)})
	p.mu.Unlock()
	return nil
}

func (p *extPeer) got() []extEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.events)
}

// recNotifier records the sessions the app tells of a new conversation.
type recNotifier struct {
	mu     sync.Mutex
	listed []string // "sid,sid"
}

func (n *recNotifier) ResourceListChanged(_ context.Context, sids []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.listed = append(n.listed, strings.Join(sids, ","))
}

func (n *recNotifier) take() (listed []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	listed, n.listed = n.listed, nil
	return listed
}

// serverFill does what the server does to a result before it sends it.
func serverFill(method string, spec *protocol.Spec, tree map[string]any) {
	if method == mcp.MethodInitialize {
		tree["protocolVersion"] = spec.Revision
	}
	if method == mcp.MethodDiscover {
		tree["supportedVersions"] = []any{spec.Revision}
	}
	if spec.Revision >= "2026-07-28" {
		if rt, _ := tree["resultType"].(string); rt == "" {
			tree["resultType"] = "complete"
		}
	}
}

// wireResult projects a result onto revision rev, sends it through JSON,
// validates it there and returns what the client receives.
func wireResult(t testing.TB, method, rev string, r wire.Encoder) map[string]any {
	t.Helper()
	spec := generated.Lookup(rev)
	m, ok := spec.Method(method)
	if !ok {
		t.Fatalf("%s has no method %s", rev, method)
	}
	tree, ok := peertest.Reparse(t, spec.Project(r)).(map[string]any)
	if !ok {
		t.Fatalf("%s result is not an object", method)
	}
	serverFill(method, spec, tree)
	if err := spec.Validate(m.Result, tree); err != nil {
		t.Fatalf("%s result invalid in %s: %v\n%s", method, rev, err, peertest.MustJSON(tree))
	}
	// Numbers as encoding/json gives them: float64.
	return codec.Plain(tree).(map[string]any)
}

// everyRevision validates a result in every revision that has the method
// and returns it as the test revision's client sees it.
func everyRevision(t testing.TB, method string, r wire.Encoder) map[string]any {
	t.Helper()
	for _, s := range generated.Specs {
		if _, ok := s.Method(method); ok {
			wireResult(t, method, s.Revision, r)
		}
	}
	return wireResult(t, method, peertest.Rev, r)
}

func call(t *testing.T, a *App, ctx context.Context, name string, args map[string]any) map[string]any {
	t.Helper()
	r, err := a.CallTool(ctx, &mcp.CallToolRequestParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return everyRevision(t, mcp.MethodCallTool, r)
}

func isError(tree map[string]any) bool { return tree["isError"] == true }

func onlyText(t testing.TB, tree map[string]any) string {
	t.Helper()
	c, _ := tree["content"].([]any)
	if len(c) != 1 {
		t.Fatalf("content %s, want one block", peertest.MustJSON(tree["content"]))
	}
	b := c[0].(map[string]any)
	if b["type"] != "text" {
		t.Fatalf("content %s, want text", peertest.MustJSON(b))
	}
	return b["text"].(string)
}

func obj(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v (%T) is not an object", v, v)
	}
	return m
}

// checkOutput validates a tool's structuredContent against the tool's
// outputSchema as tools/list publishes it.
func checkOutput(t testing.TB, a *App, toolName string, structured any) {
	t.Helper()
	lr, err := a.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tree := wireResult(t, mcp.MethodListTools, peertest.Rev, lr)
	for _, tl := range tree["tools"].([]any) {
		tm := tl.(map[string]any)
		if tm["name"] != toolName {
			continue
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("mem://"+toolName+".json", tm["outputSchema"]); err != nil {
			t.Fatal(err)
		}
		sch, err := c.Compile("mem://" + toolName + ".json")
		if err != nil {
			t.Fatalf("%s outputSchema: %v", toolName, err)
		}
		if err := sch.Validate(structured); err != nil {
			t.Fatalf("%s structuredContent does not match its outputSchema: %v\n%s", toolName, err, peertest.MustJSON(structured))
		}
		return
	}
	t.Fatalf("no tool %s", toolName)
}

func wireErr(t testing.TB, err error, code int) *wire.Error {
	t.Helper()
	var we *wire.Error
	if !errors.As(err, &we) {
		t.Fatalf("error %v (%T), want a *wire.Error %d", err, err, code)
	}
	if we.Code != code {
		t.Fatalf("error code %d (%s), want %d", we.Code, we.Message, code)
	}
	return we
}
