package agent

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func TestEcho(t *testing.T) {
	var c collector
	resp, err := Echo{}.Generate(context.Background(), testReq, c.add)
	if err != nil {
		t.Fatal(err)
	}
	want := EchoBanner + " You said: What is MCP? (2 earlier messages in this conversation.)"
	if resp.Text != want || resp.Provider != "echo" || resp.Model != "echo" {
		t.Errorf("response %+v, want text %q", resp, want)
	}
	if strings.Join(c.got(), "") != want || len(c.got()) < 5 {
		t.Errorf("deltas %q", c.got())
	}
	if !resp.Usage.Estimated || resp.Usage.PromptTokens != 25 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage %+v", resp.Usage)
	}
	// Deterministic.
	again, _ := Echo{}.Generate(context.Background(), testReq, func(string) error { return nil })
	if !reflect.DeepEqual(again, resp) {
		t.Errorf("second answer %+v differs from %+v", again, resp)
	}
	first, _ := Echo{}.Generate(context.Background(), &Request{Messages: []Message{{Role: RoleUser, Content: "Hello"}}}, func(string) error { return nil })
	if first.Text != EchoBanner+" You said: Hello" {
		t.Errorf("first answer %q", first.Text)
	}
}

func TestSplitWords(t *testing.T) {
	for _, s := range []string{"", "a", "a b", "a  b ", " lead", "x\ny z"} {
		if got := strings.Join(splitWords(s), ""); got != s {
			t.Errorf("splitWords(%q) joins to %q", s, got)
		}
	}
}

// fake is a scripted provider.
type fake struct {
	name   string
	deltas []string
	err    error
	calls  int
}

func (f *fake) Name() string { return f.name }

func (f *fake) Generate(ctx context.Context, req *Request, onDelta DeltaFunc) (*Response, error) {
	f.calls++
	for _, d := range f.deltas {
		if err := onDelta(d); err != nil {
			return nil, err
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return &Response{Text: strings.Join(f.deltas, ""), Model: f.name + "-model"}, nil
}

func TestFallback(t *testing.T) {
	down := errors.New("connection refused")
	a := &fake{name: "a", err: unavailable("not configured")}
	b := &fake{name: "b", err: down}
	c := &fake{name: "c", deltas: []string{"from ", "c"}}
	d := &fake{name: "d", deltas: []string{"never"}}
	var col collector
	resp, err := Fallback(a, b, c, d).Generate(context.Background(), testReq, col.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "from c" || resp.Provider != "c" || resp.Model != "c-model" || d.calls != 0 {
		t.Errorf("response %+v, d called %d times", resp, d.calls)
	}
	if !reflect.DeepEqual(col.got(), []string{"from ", "c"}) {
		t.Errorf("deltas %q", col.got())
	}
	if len(resp.Skipped) != 2 || resp.Skipped[0].Provider != "a" || !errors.Is(resp.Skipped[0].Err, ErrUnavailable) ||
		resp.Skipped[1].Provider != "b" || resp.Skipped[1].Err != down {
		t.Errorf("skipped %+v", resp.Skipped)
	}
	if n := Fallback(a, b, c).Name(); n != "a,b,c" {
		t.Errorf("name %q", n)
	}
}

func TestFallbackExhausted(t *testing.T) {
	down := errors.New("connection refused")
	_, err := Fallback(&fake{name: "a", err: unavailable("no key")}, &fake{name: "b", err: down}).Generate(context.Background(), testReq, func(string) error { return nil })
	var ee *ExhaustedError
	if !errors.As(err, &ee) || len(ee.Attempts) != 2 || !errors.Is(err, down) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("error %v", err)
	}
	if want := "no provider could answer (a: provider unavailable: no key; b: connection refused)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if _, err := Fallback().Generate(context.Background(), testReq, func(string) error { return nil }); err == nil {
		t.Error("an empty chain answered")
	}
}

// A provider that fails after streaming part of its answer ends the call.
func TestFallbackPartial(t *testing.T) {
	a := &fake{name: "a", deltas: []string{"half"}, err: errors.New("cut")}
	b := &fake{name: "b", deltas: []string{"whole"}}
	var col collector
	_, err := Fallback(a, b).Generate(context.Background(), testReq, col.add)
	var pe *PartialError
	if !errors.As(err, &pe) || pe.Provider != "a" || pe.Streamed != "half" || b.calls != 0 {
		t.Fatalf("error %v, b called %d times", err, b.calls)
	}
	if !reflect.DeepEqual(col.got(), []string{"half"}) {
		t.Errorf("deltas %q", col.got())
	}
}

func TestFallbackCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := &fake{name: "b", deltas: []string{"x"}}
	_, err := Fallback(&fake{name: "a", err: context.Canceled}, b).Generate(ctx, testReq, func(string) error { return nil })
	if !errors.Is(err, context.Canceled) || b.calls != 0 {
		t.Fatalf("error %v, b called %d times", err, b.calls)
	}
}

func TestSampling(t *testing.T) {
	p := peertest.New(t)
	p.Answer = func(method string, params map[string]any) (string, error) {
		return `{"role":"assistant","content":{"type":"text","text":"MCP connects models to tools."},"model":"client-model-1","stopReason":"endTurn"}`, nil
	}
	temp := 0.5
	s := &Sampling{MaxTokens: 300, ModelHints: []string{"claude"}, Temperature: &temp}
	req := *testReq
	req.MaxTokens = 0
	var col collector
	resp, err := s.Generate(p.Ctx(), &req, col.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "MCP connects models to tools." || resp.Provider != "sampling" || resp.Model != "client-model-1" || resp.StopReason != "endTurn" || !resp.Usage.Estimated {
		t.Errorf("response %+v", resp)
	}
	if !reflect.DeepEqual(col.got(), []string{"MCP connects models to tools."}) {
		t.Errorf("deltas %q", col.got())
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Method != mcp.MethodCreateMessage {
		t.Fatalf("requests %v", reqs)
	}
	got := peertest.MustJSON(reqs[0].Params)
	want := `{"maxTokens":300,"messages":[{"content":{"text":"Hi","type":"text"},"role":"user"},{"content":{"text":"Hello!","type":"text"},"role":"assistant"},{"content":{"text":"What is MCP?","type":"text"},"role":"user"}],"modelPreferences":{"hints":[{"name":"claude"}]},"systemPrompt":"Be brief.","temperature":0.5}`
	if got != want {
		t.Errorf("sampling request\n%s\nwant\n%s", got, want)
	}
}

func TestSamplingContent(t *testing.T) {
	p := peertest.New(t)
	for _, tc := range []struct{ content, text, err string }{
		{`[{"type":"text","text":"one"},{"type":"text","text":"two"}]`, "one\ntwo", ""},
		{`{"type":"image","data":"AAAA","mimeType":"image/png"}`, "", "answered without text (image)"},
	} {
		p.Answer = func(string, map[string]any) (string, error) {
			return `{"role":"assistant","content":` + tc.content + `,"model":"m"}`, nil
		}
		resp, err := (&Sampling{}).Generate(p.Ctx(), testReq, func(string) error { return nil })
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.content, err, tc.err)
			}
			continue
		}
		if err != nil || resp.Text != tc.text {
			t.Errorf("%s: %+v, %v", tc.content, resp, err)
		}
	}
}

func TestSamplingUnavailable(t *testing.T) {
	noSampling := peertest.New(t)
	noSampling.Caps = &mcp.ClientCapabilities{}
	for name, ctx := range map[string]context.Context{"no peer": context.Background(), "no capability": noSampling.Ctx()} {
		_, err := (&Sampling{}).Generate(ctx, testReq, func(string) error { return nil })
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: %v, want ErrUnavailable", name, err)
		}
	}
	if len(noSampling.Requests()) != 0 {
		t.Errorf("asked a client without sampling")
	}
	// A client that refuses is a failure, not unavailability.
	refusing := peertest.New(t)
	refusing.Answer = func(string, map[string]any) (string, error) {
		return "", &wire.Error{Code: -1, Message: "User rejected sampling request"}
	}
	_, err := (&Sampling{}).Generate(refusing.Ctx(), testReq, func(string) error { return nil })
	if err == nil || errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "User rejected") {
		t.Errorf("refused: %v", err)
	}
}

func TestConfig(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "sampling,openai,echo",
		" Echo , sampling":       "echo,sampling",
		"openai":                 "openai",
		"sampling,openai,echo  ": "sampling,openai,echo",
	} {
		a, err := New(Config{Providers: in, OpenAI: OpenAIConfig{BaseURL: "http://127.0.0.1:1/v1"}})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if a.Name() != want {
			t.Errorf("%q: chain %q, want %q", in, a.Name(), want)
		}
	}
	for _, bad := range []string{"gpt", "echo,echo", "echo,,sampling"} {
		if _, err := New(Config{Providers: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	// Without sampling and without an OpenAI key, the default chain ends
	// with echo.
	a, _ := New(Config{})
	resp, err := a.Generate(context.Background(), testReq, func(string) error { return nil })
	if err != nil || resp.Provider != "echo" || len(resp.Skipped) != 2 {
		t.Fatalf("default chain offline: %+v, %v", resp, err)
	}
}
