package chat

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

var answer = []string{"Quantum", " computing", " uses", " qubits", "."}

// Each fragment goes out as notifications/progress with the fragment as
// its message, in order, with increasing progress, before the result.
func TestProgressDeltas(t *testing.T) {
	ag := &scripted{deltas: answer, usage: agent.Usage{PromptTokens: 20, CompletionTokens: 150, TotalTokens: 170}}
	a, _ := newApp(t, ag)
	p := client(t, "s1")
	p.Token = wire.StringID("token-123")
	tree := call(t, a, ctxOf(p, "alice"), ToolChat, map[string]any{"query": "What is quantum computing?"})
	if onlyText(t, tree) != "Quantum computing uses qubits." {
		t.Fatalf("chat %s", peertest.MustJSON(tree))
	}
	var got []string
	for i, n := range p.Notifications() {
		if n.Method != mcp.MethodProgress {
			t.Fatalf("notification %d is %s", i, n.Method)
		}
		got = append(got, peertest.MustJSON(n.Params))
	}
	var want []string
	for i, d := range answer {
		want = append(want, fmt.Sprintf(`{"message":%q,"progress":%d,"progressToken":"token-123"}`, d, i+1))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("progress\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// An integer token, and the echo provider's word-by-word stream.
	a2, _ := newApp(t, agent.Echo{})
	p2 := client(t, "s2")
	p2.Token = wire.IntID(7)
	tree = call(t, a2, ctxOf(p2, "alice"), ToolChat, map[string]any{"query": "one two three"})
	var joined strings.Builder
	for i, n := range p2.Notifications() {
		if fmt.Sprint(n.Params["progressToken"]) != "7" || fmt.Sprint(n.Params["progress"]) != fmt.Sprint(i+1) {
			t.Errorf("progress %d: %s", i, peertest.MustJSON(n.Params))
		}
		joined.WriteString(n.Params["message"].(string))
	}
	if joined.String() != onlyText(t, tree) {
		t.Errorf("progress messages join to %q, the answer is %q", joined.String(), onlyText(t, tree))
	}
}

// Without a progress token there is no progress.
func TestNoProgressWithoutToken(t *testing.T) {
	a, _ := newApp(t, &scripted{deltas: answer})
	p := client(t, "s1")
	call(t, a, ctxOf(p, "alice"), ToolChat, map[string]any{"query": "q"})
	if n := p.Notifications(); len(n) != 0 {
		t.Errorf("notifications %v", n)
	}
}

func optedIn(t *testing.T, session string) *extPeer {
	p := &extPeer{Peer: client(t, session)}
	p.Caps.Experimental = map[string]mcp.JSONObject{ContentStreamCapability: {}}
	return p
}

// A client that opted in gets content_start, one content_delta per
// fragment and content_end with the conversation and the usage, each valid
// against schema/ext, in order; progress goes on alongside.
func TestContentEvents(t *testing.T) {
	ag := &scripted{deltas: answer, usage: agent.Usage{PromptTokens: 20, CompletionTokens: 150, TotalTokens: 170}}
	a, _ := newApp(t, ag)
	p := optedIn(t, "s1")
	p.Token = wire.StringID("tok")
	tree := call(t, a, ctxOf(p, "alice"), ToolChat, map[string]any{"query": "What is quantum computing?"})
	id := obj(t, tree["structuredContent"])["conversation_id"].(string)
	meta := fmt.Sprintf(`"_meta":{"io.mcpstack/conversation_id":%q,"progressToken":"tok"}`, id)
	want := []string{`{` + meta + `,"type":"content_start"}`}
	for _, d := range answer {
		want = append(want, fmt.Sprintf(`{%s,"delta":%q,"type":"content_delta"}`, meta, d))
	}
	want = append(want, fmt.Sprintf(`{%s,"conversation_id":%q,"type":"content_end","usage":{"completion_tokens":150,"prompt_tokens":20,"total_tokens":170}}`, meta, id))
	var got []string
	for _, e := range p.got() {
		if e.method != ContentNotification {
			t.Errorf("method %s", e.method)
		}
		got = append(got, peertest.MustJSON(e.params))
		if e.definition != map[string]string{"content_start": defContentStart, "content_delta": defContentDelta, "content_end": defContentEnd}[e.params["type"].(string)] {
			t.Errorf("definition %s for %s", e.definition, e.params["type"])
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("events\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(p.Notifications()); n != len(answer) {
		t.Errorf("%d progress notifications, want %d", n, len(answer))
	}
}

// No events for a client that did not opt in, nor where the server
// cannot send them.
func TestContentEventsOptIn(t *testing.T) {
	a, _ := newApp(t, &scripted{deltas: answer})
	notIn := &extPeer{Peer: client(t, "s1")}
	call(t, a, ctxOf(notIn, "alice"), ToolChat, map[string]any{"query": "q"})
	if e := notIn.got(); len(e) != 0 {
		t.Errorf("events without opting in: %v", e)
	}
	// Opted in, but the server has no extension notifications: the chat
	// works, without events.
	plain := client(t, "s2")
	plain.Caps.Experimental = map[string]mcp.JSONObject{ContentStreamCapability: {}}
	tree := call(t, a, ctxOf(plain, "alice"), ToolChat, map[string]any{"query": "q"})
	if isError(tree) || len(plain.Notifications()) != 0 {
		t.Errorf("chat %s, notifications %v", peertest.MustJSON(tree), plain.Notifications())
	}
}

// A failure after content_start still ends the events, with the error.
func TestContentEventsFailure(t *testing.T) {
	ag := &scripted{deltas: []string{"Half"}, err: errors.New("cut off")}
	a, _ := newApp(t, ag)
	p := optedIn(t, "s1")
	tree := call(t, a, ctxOf(p, "alice"), ToolChat, map[string]any{"query": "q"})
	if !isError(tree) {
		t.Fatalf("chat %s", peertest.MustJSON(tree))
	}
	ev := p.got()
	if len(ev) != 3 || ev[0].params["type"] != "content_start" || ev[1].params["delta"] != "Half" || ev[2].params["type"] != "content_end" {
		t.Fatalf("events %v", ev)
	}
	end := ev[2].params
	if end["usage"] != nil || obj(t, end["_meta"])["io.mcpstack/error"] != "cut off" || !strings.HasPrefix(end["conversation_id"].(string), "conv_") {
		t.Errorf("content_end %s", peertest.MustJSON(end))
	}
	if _, ok := obj(t, end["_meta"])["progressToken"]; ok {
		t.Errorf("progressToken without a token: %s", peertest.MustJSON(end))
	}
}

// An event that does not match its schema is never sent, and stops the
// events of the call.
func TestInvalidEventNotSent(t *testing.T) {
	p := optedIn(t, "s1")
	var logged strings.Builder
	s := &stream{ctx: p.Ctx(), log: slog.New(slog.NewTextHandler(&logged, nil)), convID: "conv_x", ext: p}
	s.event(defContentEnd, map[string]any{"type": "content_end"}, nil) // no conversation_id
	s.event(defContentDelta, map[string]any{"type": "content_delta", "delta": "late"}, nil)
	if e := p.got(); len(e) != 0 {
		t.Errorf("sent %v", e)
	}
	if !strings.Contains(logged.String(), "invalid content event") || !strings.Contains(logged.String(), "conversation_id") {
		t.Errorf("log %q", logged.String())
	}
}
