package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func TestInitialize(t *testing.T) {
	a, _ := newApp(t, agent.Echo{})
	plain := client(t, "s1")
	r, err := a.Initialize(plain.Ctx(), &mcp.InitializeRequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	tree := everyRevision(t, mcp.MethodInitialize, r)
	caps := obj(t, tree["capabilities"])
	res := obj(t, caps["resources"])
	if res["subscribe"] != true || res["listChanged"] != true || caps["tools"] == nil || caps["prompts"] == nil ||
		caps["completions"] == nil || caps["logging"] == nil || caps["experimental"] != nil {
		t.Errorf("capabilities %s", peertest.MustJSON(caps))
	}
	if si := obj(t, tree["serverInfo"]); si["name"] != "mcpstack-chat" || tree["instructions"] != Instructions {
		t.Errorf("initialize %s", peertest.MustJSON(tree))
	}
	// A server that can send extension notifications announces the
	// content stream.
	ext := &extPeer{Peer: client(t, "s2")}
	r, err = a.Initialize(ctxOf(ext, "alice"), &mcp.InitializeRequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	tree = everyRevision(t, mcp.MethodInitialize, r)
	want := `{"io.mcpstack/content-stream":{"events":["content_start","content_delta","content_end"],"method":"notifications/io.mcpstack/content"}}`
	if got := peertest.MustJSON(obj(t, tree["capabilities"])["experimental"]); got != want {
		t.Errorf("experimental %s, want %s", got, want)
	}
	d, err := a.Discover(plain.Ctx(), &mcp.RequestParams{})
	if err != nil {
		t.Fatal(err)
	}
	dt := wireResult(t, mcp.MethodDiscover, "2026-07-28", d)
	if dt["instructions"] != Instructions || obj(t, dt["capabilities"])["resources"] == nil {
		t.Errorf("discover %s", peertest.MustJSON(dt))
	}
	p, err := a.Ping(context.Background(), nil)
	if err != nil || p == nil {
		t.Errorf("ping %v %v", p, err)
	}
}

func TestListTools(t *testing.T) {
	a, _ := newApp(t, agent.Echo{})
	r, err := a.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tree := everyRevision(t, mcp.MethodListTools, r)
	var names []string
	for _, tl := range tree["tools"].([]any) {
		tm := obj(t, tl)
		names = append(names, tm["name"].(string))
		in, out := obj(t, tm["inputSchema"]), obj(t, tm["outputSchema"])
		if in["type"] != "object" || out["type"] != "object" || len(out["required"].([]any)) == 0 || tm["description"] == "" {
			t.Errorf("tool %s", peertest.MustJSON(tm))
		}
	}
	if fmt.Sprint(names) != "[chat conversation_search conversation_get]" {
		t.Errorf("tools %v", names)
	}
	chat := obj(t, tree["tools"].([]any)[0])
	if got := peertest.MustJSON(chat["inputSchema"]); !strings.Contains(got, `"required":["query"]`) || !strings.Contains(got, `"conversation_id":{`) {
		t.Errorf("chat inputSchema %s", got)
	}
}

func TestChat(t *testing.T) {
	ag := &scripted{deltas: []string{"Hello", ", ", "world."}, usage: agent.Usage{PromptTokens: 20, CompletionTokens: 150, TotalTokens: 170}}
	a, s := newApp(t, ag, WithSystemPrompt("Be nice."))
	ctx := ctxOf(client(t, "s1"), "alice")

	tree := call(t, a, ctx, ToolChat, map[string]any{"query": "Hi there\nsecond line"})
	if isError(tree) || onlyText(t, tree) != "Hello, world." {
		t.Fatalf("chat %s", peertest.MustJSON(tree))
	}
	sc := obj(t, tree["structuredContent"])
	id, _ := sc["conversation_id"].(string)
	if !strings.HasPrefix(id, "conv_") || len(id) != 29 || sc["answer"] != "Hello, world." || sc["provider"] != "scripted" ||
		sc["model"] != "scripted-1" || sc["new_conversation"] != true {
		t.Errorf("structuredContent %s", peertest.MustJSON(sc))
	}
	checkOutput(t, a, ToolChat, sc)
	wantUsage := `{"completion_tokens":150,"prompt_tokens":20,"total_tokens":170}`
	if u := peertest.MustJSON(sc["usage"]); u != wantUsage {
		t.Errorf("usage %s, want %s", u, wantUsage)
	}
	meta := obj(t, tree["_meta"])
	if meta["conversation_id"] != id || peertest.MustJSON(meta["usage"]) != wantUsage || meta["io.mcpstack/provider"] != "scripted" || meta["io.mcpstack/model"] != "scripted-1" {
		t.Errorf("_meta %s", peertest.MustJSON(meta))
	}
	reqs := ag.requests()
	if len(reqs) != 1 || reqs[0].System != "Be nice." || !reflect.DeepEqual(reqs[0].Messages, []agent.Message{{Role: "user", Content: "Hi there\nsecond line"}}) {
		t.Errorf("first request %+v", reqs)
	}
	// Both turns are stored, under alice.
	c, err := s.Get(context.Background(), "alice", id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Title != "Hi there" || len(c.Messages) != 2 || c.Messages[0].Content != "Hi there\nsecond line" || c.Messages[1].Content != "Hello, world." ||
		c.Messages[1].Provider != "scripted" || c.Messages[1].Usage == nil || c.Messages[1].Usage.TotalTokens != 170 {
		t.Errorf("stored %+v", c)
	}

	// Continuing sends the history as context.
	ag.deltas = []string{"Again."}
	tree = call(t, a, ctx, ToolChat, map[string]any{"query": "And now?", "conversation_id": id})
	sc = obj(t, tree["structuredContent"])
	if isError(tree) || sc["conversation_id"] != id || sc["new_conversation"] != false || obj(t, tree["_meta"])["conversation_id"] != id {
		t.Fatalf("second chat %s", peertest.MustJSON(tree))
	}
	reqs = ag.requests()
	want := []agent.Message{{Role: "user", Content: "Hi there\nsecond line"}, {Role: "assistant", Content: "Hello, world."}, {Role: "user", Content: "And now?"}}
	if !reflect.DeepEqual(reqs[1].Messages, want) {
		t.Errorf("second request %+v, want %+v", reqs[1].Messages, want)
	}
	if c, _ := s.Get(context.Background(), "alice", id); c.MessageCount != 4 || c.Messages[3].Content != "Again." {
		t.Errorf("after the second turn: %+v", c)
	}
}

// Only the last WithHistory messages go to the model.
func TestChatHistoryLimit(t *testing.T) {
	ag := &scripted{deltas: []string{"ok"}}
	a, _ := newApp(t, ag, WithHistory(3))
	ctx := ctxOf(client(t, "s1"), "alice")
	id := obj(t, call(t, a, ctx, ToolChat, map[string]any{"query": "q1"})["structuredContent"])["conversation_id"]
	call(t, a, ctx, ToolChat, map[string]any{"query": "q2", "conversation_id": id})
	call(t, a, ctx, ToolChat, map[string]any{"query": "q3", "conversation_id": id})
	reqs := ag.requests()
	want := []agent.Message{{Role: "assistant", Content: "ok"}, {Role: "user", Content: "q2"}, {Role: "assistant", Content: "ok"}, {Role: "user", Content: "q3"}}
	if !reflect.DeepEqual(reqs[2].Messages, want) {
		t.Errorf("third request %+v, want %+v", reqs[2].Messages, want)
	}
}

func TestChatEcho(t *testing.T) {
	a, _ := newApp(t, agent.Echo{})
	tree := call(t, a, ctxOf(client(t, "s1"), "alice"), ToolChat, map[string]any{"query": "What is the weather?"})
	if got := onlyText(t, tree); got != agent.EchoBanner+" You said: What is the weather?" {
		t.Errorf("echo answer %q", got)
	}
	sc := obj(t, tree["structuredContent"])
	if sc["provider"] != "echo" || obj(t, sc["usage"])["estimated"] != true {
		t.Errorf("structuredContent %s", peertest.MustJSON(sc))
	}
	checkOutput(t, a, ToolChat, sc)
}

func TestToolErrors(t *testing.T) {
	ag := &scripted{deltas: []string{"x"}}
	a, s := newApp(t, ag)
	alice := ctxOf(client(t, "s1"), "alice")
	id := obj(t, call(t, a, alice, ToolChat, map[string]any{"query": "mine"})["structuredContent"])["conversation_id"].(string)
	unknown := store.NewID()
	notFound := func(id string) string {
		return fmt.Sprintf("No conversation %q. Start one with the chat tool (without conversation_id), or find yours with conversation_search.", id)
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolChat, map[string]any{}, `Invalid arguments: at /query: missing property 'query'`},
		{ToolChat, map[string]any{"query": 42.0}, `Invalid arguments: at /query: got number, want string`},
		{ToolChat, map[string]any{"query": "  "}, `Invalid arguments: at /query: '  ' does not match pattern '\\S'`},
		{ToolChat, map[string]any{"query": strings.Repeat("x", MaxQueryRunes+1)}, `Invalid arguments: at /query: maxLength: got 32001 characters, want at most 32000`},
		{ToolSearch, map[string]any{"query": strings.Repeat("x", MaxSearchRunes+1)}, `Invalid arguments: at /query: maxLength: got 129 characters, want at most 128`},
		{ToolChat, map[string]any{"query": "hi", "conversation_id": true}, `Invalid arguments: at /conversation_id: got boolean, want string`},
		{ToolChat, map[string]any{"query": "hi", "conversation_id": unknown}, notFound(unknown)},
		{ToolSearch, map[string]any{}, `Invalid arguments: at /query: missing property 'query'`},
		{ToolSearch, map[string]any{"query": ""}, `Invalid arguments: at /query: minLength: got 0 characters, want at least 1`},
		{ToolSearch, map[string]any{"query": "x", "limit": 0.0}, `Invalid arguments: at /limit: minimum: got 0, want at least 1`},
		{ToolSearch, map[string]any{"query": "x", "limit": 2.5}, `Invalid arguments: at /limit: got number, want integer`},
		{ToolSearch, map[string]any{"query": "x", "limit": 51.0}, `Invalid arguments: at /limit: maximum: got 51, want at most 50`},
		{ToolSearch, map[string]any{"query": "x", "limit": "3"}, `Invalid arguments: at /limit: got string, want integer`},
		{ToolGet, map[string]any{}, `Invalid arguments: at /conversation_id: missing property 'conversation_id'`},
		{ToolGet, map[string]any{"conversation_id": unknown}, notFound(unknown)},
		{ToolGet, map[string]any{"conversation_id": "conversation://" + id}, notFound("conversation://" + id)},
	}
	for _, tc := range tests {
		tree := call(t, a, alice, tc.tool, tc.args)
		if !isError(tree) || onlyText(t, tree) != tc.want {
			t.Errorf("%s %v: %s, want error %q", tc.tool, tc.args, peertest.MustJSON(tree), tc.want)
		}
	}
	if len(ag.requests()) != 1 {
		t.Errorf("the model was asked %d times; bad calls must not reach it", len(ag.requests()))
	}
	_, err := a.CallTool(alice, &mcp.CallToolRequestParams{Name: "nope"})
	we := wireErr(t, err, wire.CodeInvalidParams)
	if d := we.Data.(map[string]any); d["field"] != "/params/name" {
		t.Errorf("unknown tool data %v", we.Data)
	}

	// A model that fails: isError with the reason, nothing stored.
	ag.err = errors.New("the model is on fire")
	ag.deltas = nil
	tree := call(t, a, alice, ToolChat, map[string]any{"query": "new one"})
	if !isError(tree) || onlyText(t, tree) != "The model could not answer: the model is on fire" {
		t.Errorf("failing model: %s", peertest.MustJSON(tree))
	}
	if l, _, _ := s.List(context.Background(), "alice", store.ListOptions{}); len(l) != 1 {
		t.Errorf("a failed chat stored a conversation: %d conversations", len(l))
	}
	call(t, a, alice, ToolChat, map[string]any{"query": "continue", "conversation_id": id})
	if c, _ := s.Get(context.Background(), "alice", id); c.MessageCount != 2 {
		t.Errorf("a failed turn was stored: %d messages", c.MessageCount)
	}
}

// Cancelling the call is a protocol matter, not a tool error.
func TestChatCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(ctxOf(client(t, "s1"), "alice"))
	cancel()
	a, _ := newApp(t, &scripted{deltas: []string{"a", "b"}})
	_, err := a.CallTool(ctx, &mcp.CallToolRequestParams{Name: ToolChat, Arguments: map[string]any{"query": "hi"}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestSearchAndGet(t *testing.T) {
	ag := &scripted{deltas: []string{"Generics arrived in Go 1.18."}, usage: agent.Usage{PromptTokens: 5, CompletionTokens: 7, TotalTokens: 12}}
	a, _ := newApp(t, ag)
	alice := ctxOf(client(t, "s1"), "alice")
	id := obj(t, call(t, a, alice, ToolChat, map[string]any{"query": "When did Go get GENERICS?"})["structuredContent"])["conversation_id"].(string)
	ag.deltas = []string{"Sunny."}
	other := obj(t, call(t, a, alice, ToolChat, map[string]any{"query": "Weather?"})["structuredContent"])["conversation_id"].(string)
	call(t, a, ctxOf(client(t, "s2"), "bob"), ToolChat, map[string]any{"query": "bob asks about generics"})

	tree := call(t, a, alice, ToolSearch, map[string]any{"query": "generics"})
	sc := obj(t, tree["structuredContent"])
	checkOutput(t, a, ToolSearch, sc)
	results := sc["results"].([]any)
	if len(results) != 1 {
		t.Fatalf("results %s", peertest.MustJSON(results))
	}
	r := obj(t, results[0])
	if r["conversation_id"] != id || r["uri"] != "conversation://"+id || r["title"] != "When did Go get GENERICS?" || r["matches"] != 2.0 ||
		r["snippet"] != "When did Go get GENERICS?" || r["snippet_role"] != "user" || r["message_count"] != 2.0 {
		t.Errorf("result %s", peertest.MustJSON(r))
	}
	// The text is the same JSON.
	if onlyText(t, tree) != peertest.MustJSON(sc) {
		t.Errorf("text %s", onlyText(t, tree))
	}
	if res := obj(t, call(t, a, alice, ToolSearch, map[string]any{"query": "?", "limit": 1.0})["structuredContent"])["results"].([]any); len(res) != 1 || obj(t, res[0])["conversation_id"] != other {
		t.Errorf("limit 1: %s", peertest.MustJSON(res))
	}
	if res := obj(t, call(t, a, alice, ToolSearch, map[string]any{"query": "nothing"})["structuredContent"])["results"].([]any); len(res) != 0 {
		t.Errorf("no match: %s", peertest.MustJSON(res))
	}

	tree = call(t, a, alice, ToolGet, map[string]any{"conversation_id": id})
	sc = obj(t, tree["structuredContent"])
	checkOutput(t, a, ToolGet, sc)
	msgs := sc["messages"].([]any)
	if sc["conversation_id"] != id || sc["title"] != "When did Go get GENERICS?" || sc["message_count"] != 2.0 || len(msgs) != 2 {
		t.Fatalf("get %s", peertest.MustJSON(sc))
	}
	m0, m1 := obj(t, msgs[0]), obj(t, msgs[1])
	if m0["seq"] != 1.0 || m0["role"] != "user" || m0["content"] != "When did Go get GENERICS?" || m0["usage"] != nil || m0["provider"] != nil {
		t.Errorf("message 1 %s", peertest.MustJSON(m0))
	}
	if m1["seq"] != 2.0 || m1["role"] != "assistant" || m1["content"] != "Generics arrived in Go 1.18." || m1["provider"] != "scripted" ||
		peertest.MustJSON(m1["usage"]) != `{"completion_tokens":7,"prompt_tokens":5,"total_tokens":12}` {
		t.Errorf("message 2 %s", peertest.MustJSON(m1))
	}
}

func TestSnippetAndTitle(t *testing.T) {
	long := strings.Repeat("a", 200) + " NEEDLE " + strings.Repeat("b", 200)
	s := snippet(long, "needle")
	if !strings.Contains(s, "NEEDLE") || !strings.HasPrefix(s, "…") || !strings.HasSuffix(s, "…") || len([]rune(s)) != snippetRunes+2 {
		t.Errorf("snippet %q", s)
	}
	if s := snippet("short", "x"); s != "short" {
		t.Errorf("snippet %q", s)
	}
	if s := snippet(strings.Repeat("é", 300), "zzz"); !strings.HasSuffix(s, "…") || strings.HasPrefix(s, "…") {
		t.Errorf("snippet without match %q", s)
	}
	for in, want := range map[string]string{
		"  Hello  ":                 "Hello",
		"first\nsecond":             "first",
		strings.Repeat("ü", 100):    strings.Repeat("ü", 79) + "…",
		"\n\nleading newline query": "leading newline query",
	} {
		if got := title(in); got != want {
			t.Errorf("title(%q) = %q, want %q", in, got, want)
		}
	}
}

// A conversation survives a restart: the store is closed and reopened,
// and a new App reads it.
func TestRestart(t *testing.T) {
	dir := t.TempDir()
	s1, err := store.Open(context.Background(), store.Config{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	a1 := New(s1, agent.Echo{})
	ctx := client(t, "s1").Ctx()
	id := obj(t, call(t, a1, ctx, ToolChat, map[string]any{"query": "remember this"})["structuredContent"])["conversation_id"].(string)
	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	a2 := New(openStore(t, dir), agent.Echo{})
	sc := obj(t, call(t, a2, ctx, ToolGet, map[string]any{"conversation_id": id})["structuredContent"])
	if msgs := sc["messages"].([]any); len(msgs) != 2 || obj(t, msgs[0])["content"] != "remember this" {
		t.Fatalf("after restart %s", peertest.MustJSON(sc))
	}
	tree := call(t, a2, ctx, ToolChat, map[string]any{"query": "still there?", "conversation_id": id})
	if !strings.HasSuffix(onlyText(t, tree), "You said: still there? (2 earlier messages in this conversation.)") {
		t.Errorf("continued after restart: %s", onlyText(t, tree))
	}
}

// Providers through the App: sampling asks the fake client (with the
// history), and a failing provider falls back to the next, telling the
// client in a log message.
func TestChatSampling(t *testing.T) {
	ag, err := agent.New(agent.Config{Providers: "sampling,echo", Sampling: agent.Sampling{MaxTokens: 256}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newApp(t, ag, WithSystemPrompt("Be brief."))
	p := client(t, "s1")
	answers := []string{"Paris.", "About 2.1 million."}
	p.Answer = func(method string, params map[string]any) (string, error) {
		n := len(p.Requests()) - 1
		return `{"role":"assistant","content":{"type":"text","text":"` + answers[n] + `"},"model":"client-model","stopReason":"endTurn"}`, nil
	}
	ctx := ctxOf(p, "alice")
	tree := call(t, a, ctx, ToolChat, map[string]any{"query": "Capital of France?"})
	sc := obj(t, tree["structuredContent"])
	if onlyText(t, tree) != "Paris." || sc["provider"] != "sampling" || sc["model"] != "client-model" {
		t.Fatalf("sampling chat %s", peertest.MustJSON(tree))
	}
	call(t, a, ctx, ToolChat, map[string]any{"query": "Population?", "conversation_id": sc["conversation_id"]})
	reqs := p.Requests()
	if len(reqs) != 2 || reqs[1].Method != mcp.MethodCreateMessage {
		t.Fatalf("requests %v", reqs)
	}
	want := `{"maxTokens":256,"messages":[{"content":{"text":"Capital of France?","type":"text"},"role":"user"},{"content":{"text":"Paris.","type":"text"},"role":"assistant"},{"content":{"text":"Population?","type":"text"},"role":"user"}],"systemPrompt":"Be brief."}`
	if got := peertest.MustJSON(reqs[1].Params); got != want {
		t.Errorf("second sampling request\n%s\nwant\n%s", got, want)
	}
	for _, n := range p.Notifications() {
		if n.Method == mcp.MethodLoggingMessage {
			t.Errorf("log message without a fallback: %v", n.Params)
		}
	}

	// A client without sampling: echo answers, and the client is told.
	noSampling := client(t, "s2")
	noSampling.Caps = &mcp.ClientCapabilities{}
	tree = call(t, a, ctxOf(noSampling, "alice"), ToolChat, map[string]any{"query": "Anyone there?"})
	if sc := obj(t, tree["structuredContent"]); sc["provider"] != "echo" {
		t.Fatalf("fallback chat %s", peertest.MustJSON(tree))
	}
	var logs []string
	for _, n := range noSampling.Notifications() {
		if n.Method == mcp.MethodLoggingMessage {
			logs = append(logs, peertest.MustJSON(n.Params))
		}
	}
	wantLog := `{"data":{"error":"provider unavailable: the client did not declare the sampling capability","message":"provider sampling did not answer; fell back","provider":"sampling"},"level":"warning","logger":"chat"}`
	if len(logs) != 1 || logs[0] != wantLog {
		t.Errorf("logs %v, want %s", logs, wantLog)
	}
}

// An OpenAI-compatible endpoint that is down: echo answers instead.
func TestChatOpenAIFallback(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"no GPUs left","type":"server_error"}}`, http.StatusServiceUnavailable)
	}))
	defer down.Close()
	ag, err := agent.New(agent.Config{Providers: "openai,echo", OpenAI: agent.OpenAIConfig{BaseURL: down.URL + "/v1", Retries: -1}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := newApp(t, ag)
	p := client(t, "s1")
	tree := call(t, a, ctxOf(p, "alice"), ToolChat, map[string]any{"query": "hello?"})
	if sc := obj(t, tree["structuredContent"]); sc["provider"] != "echo" || !strings.HasPrefix(onlyText(t, tree), agent.EchoBanner) {
		t.Fatalf("fallback %s", peertest.MustJSON(tree))
	}
	n := p.Notifications()
	if len(n) != 1 || !strings.Contains(peertest.MustJSON(n[0].Params), "HTTP 503: API error: no GPUs left (server_error)") {
		t.Errorf("notifications %v", n)
	}
}

// The limits the package exports are the ones the tools' schemas enforce.
func TestToolLimits(t *testing.T) {
	a, _ := newApp(t, agent.Echo{})
	r, err := a.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	props := map[string]map[string]map[string]any{}
	for _, tl := range r.Tools {
		props[tl.Name] = tl.InputSchema.Properties
	}
	for _, c := range []struct {
		tool, prop, key string
		want            float64
	}{
		{ToolChat, "query", "maxLength", MaxQueryRunes},
		{ToolSearch, "query", "maxLength", MaxSearchRunes},
		{ToolSearch, "limit", "maximum", MaxSearchLimit},
		{ToolSearch, "limit", "default", DefaultSearchLimit},
	} {
		if got, _ := props[c.tool][c.prop][c.key].(json.Number); got.String() != fmt.Sprint(c.want) {
			t.Errorf("%s.%s.%s = %v, want %v", c.tool, c.prop, c.key, props[c.tool][c.prop][c.key], c.want)
		}
	}
}

// indexFold finds a query ignoring case, as an index of runes in the
// message (the snippet is cut around it), however many bytes the runes
// before it take.
func TestIndexFold(t *testing.T) {
	for _, tt := range []struct {
		s, q string
		want int
	}{
		{"hello world", "WORLD", 6},
		{"ÄÖÜ straße", "STRASSE", 0}, // no full case folding: absent
		{"ÄÖÜ straße", "STRAßE", 4},
		{"xxÄbc", "äB", 2},
		{"aaaa", "", 0},
		{strings.Repeat("a", 1000) + "b", strings.Repeat("A", 99) + "B", 901},
	} {
		if got := indexFold([]rune(tt.s), []rune(tt.q)); got != tt.want {
			t.Errorf("indexFold(%.20q, %.20q) = %d, want %d", tt.s, tt.q, got, tt.want)
		}
	}
}

// fellBack answers after a provider that failed with an error as long as
// a client may write one (the sampling provider's is the client's).
type fellBack struct{ err string }

func (fellBack) Name() string { return "fellback" }
func (f fellBack) Generate(_ context.Context, _ *agent.Request, onDelta agent.DeltaFunc) (*agent.Response, error) {
	if err := onDelta("ok"); err != nil {
		return nil, err
	}
	return &agent.Response{Text: "ok", Provider: "echo", Skipped: []agent.Attempt{{Provider: "sampling", Err: errors.New(f.err)}}}, nil
}

// What the logs keep of a provider's error is bounded: the client writes
// the sampling provider's, up to a request's size, on every chat call.
func TestProviderErrorsAreClippedInLogs(t *testing.T) {
	var logs syncbuf.Buffer
	a, _ := newApp(t, fellBack{err: strings.Repeat("x", 1<<20)}, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	tree := call(t, a, ctxOf(client(t, "s1"), "alice"), ToolChat, map[string]any{"query": "hi"})
	if isError(tree) {
		t.Fatalf("chat %s", peertest.MustJSON(tree))
	}
	if !strings.Contains(logs.String(), "provider skipped") || len(logs.String()) > 4<<10 {
		t.Errorf("logged %d bytes for one skipped provider", len(logs.String()))
	}
}
