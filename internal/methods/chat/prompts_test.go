package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/methods/internal/peertest"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func TestPrompts(t *testing.T) {
	a, _ := newApp(t, &scripted{deltas: []string{"Fine."}})
	alice := ctxOf(client(t, "s1"), "alice")
	lr, err := a.ListPrompts(alice, nil)
	if err != nil {
		t.Fatal(err)
	}
	lt := everyRevision(t, mcp.MethodListPrompts, lr)
	want := `[{"arguments":[{"description":"Code to review","name":"code","required":true},{"description":"The code's programming language","name":"language","required":false}],"description":"Review code for quality and best practices","name":"code_review","title":"Code review"},` +
		`{"arguments":[{"description":"The conversation to summarize","name":"conversation_id","required":true}],"description":"Summarize one of your conversations: its topic, what was asked and answered, what is still open","name":"summarize_conversation","title":"Summarize a conversation"},` +
		`{"arguments":[{"description":"The error message or stack trace","name":"error","required":true},{"description":"What you were doing, the code involved, what you tried","name":"context","required":false}],"description":"Explain an error message: its likely cause and how to fix it","name":"debug_error","title":"Debug an error"}]`
	if got := peertest.MustJSON(lt["prompts"]); got != want {
		t.Errorf("prompts\n%s\nwant\n%s", got, want)
	}

	id := chatID(t, a, alice, "How do I sort a slice?")
	texts := func(name string, args map[string]string) []string {
		t.Helper()
		r, err := a.GetPrompt(alice, &mcp.GetPromptRequestParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		tree := everyRevision(t, mcp.MethodGetPrompt, r)
		var out []string
		for _, m := range tree["messages"].([]any) {
			mm := obj(t, m)
			if mm["role"] != "user" {
				t.Errorf("role %v", mm["role"])
			}
			c := obj(t, mm["content"])
			switch c["type"] {
			case "text":
				out = append(out, c["text"].(string))
			case "resource":
				res := obj(t, c["resource"])
				out = append(out, "resource "+res["uri"].(string)+" "+res["mimeType"].(string)+" "+res["text"].(string))
			}
		}
		return out
	}
	// The docs' example.
	if got := texts(PromptCodeReview, map[string]string{"code": "def add(a, b): return a + b"}); len(got) != 1 || got[0] != "Please review this code:\n\ndef add(a, b): return a + b" {
		t.Errorf("code_review %q", got)
	}
	if got := texts(PromptCodeReview, map[string]string{"code": "x := 1", "language": "go"}); len(got) != 1 || got[0] != "Please review this go code:\n\nx := 1" {
		t.Errorf("code_review with language %q", got)
	}
	if got := texts(PromptDebugError, map[string]string{"error": "panic: nil map", "context": "writing to a map field"}); len(got) != 1 ||
		got[0] != "I got this error:\n\npanic: nil map\n\nContext:\nwriting to a map field\n\nWhat is the likely cause, and how do I fix it?" {
		t.Errorf("debug_error %q", got)
	}
	if got := texts(PromptDebugError, map[string]string{"error": "E"}); got[0] != "I got this error:\n\nE\n\nWhat is the likely cause, and how do I fix it?" {
		t.Errorf("debug_error without context %q", got)
	}
	got := texts(PromptSummarize, map[string]string{"conversation_id": id})
	if len(got) != 2 || got[1] != SummarizeAsk || !strings.HasPrefix(got[0], "resource conversation://"+id+" application/json {") {
		t.Fatalf("summarize %q", got)
	}
	var conv map[string]any
	if err := json.Unmarshal([]byte(strings.SplitN(got[0], " ", 4)[3]), &conv); err != nil {
		t.Fatal(err)
	}
	if msgs := conv["messages"].([]any); len(msgs) != 2 || msgs[0].(map[string]any)["content"] != "How do I sort a slice?" || msgs[1].(map[string]any)["content"] != "Fine." {
		t.Errorf("embedded conversation %v", conv)
	}

	for _, tc := range []struct {
		name  string
		args  map[string]string
		field string
	}{
		{"nope", nil, "/params/name"},
		{PromptCodeReview, nil, "/params/arguments/code"},
		{PromptCodeReview, map[string]string{"code": "  "}, "/params/arguments/code"},
		{PromptDebugError, map[string]string{"context": "x"}, "/params/arguments/error"},
		{PromptSummarize, map[string]string{}, "/params/arguments/conversation_id"},
		{PromptSummarize, map[string]string{"conversation_id": "conv_000000000000000000000000"}, "/params/arguments/conversation_id"},
	} {
		_, err := a.GetPrompt(alice, &mcp.GetPromptRequestParams{Name: tc.name, Arguments: tc.args})
		we := wireErr(t, err, wire.CodeInvalidParams)
		if d := we.Data.(map[string]any); d["field"] != tc.field {
			t.Errorf("%s %v: data %v, want field %s", tc.name, tc.args, we.Data, tc.field)
		}
	}
}

func TestComplete(t *testing.T) {
	a, _ := newApp(t, &scripted{deltas: []string{"ok"}})
	alice := ctxOf(client(t, "s1"), "alice")
	bob := ctxOf(client(t, "s2"), "bob")
	var ids []string
	for i := range 3 {
		ids = append(ids, chatID(t, a, alice, fmt.Sprint(i)))
	}
	bobs := chatID(t, a, bob, "bob's")
	complete := func(ctx context.Context, ref mcp.CompleteRequestParamsRef, name, value string) (values []string, total, hasMore any) {
		t.Helper()
		r, err := a.Complete(ctx, &mcp.CompleteRequestParams{Ref: ref, Argument: mcp.CompleteRequestParamsArgument{Name: name, Value: value}})
		if err != nil {
			t.Fatalf("complete %s=%q: %v", name, value, err)
		}
		c := obj(t, everyRevision(t, mcp.MethodComplete, r)["completion"])
		for _, v := range c["values"].([]any) {
			values = append(values, v.(string))
		}
		return values, c["total"], c["hasMore"]
	}
	code := &mcp.PromptReference{Name: PromptCodeReview}
	if v, total, more := complete(alice, code, "language", "Ja"); fmt.Sprint(v) != "[java javascript]" || total != 2.0 || more != false {
		t.Errorf("languages Ja: %v %v %v", v, total, more)
	}
	if v, total, _ := complete(alice, code, "language", ""); len(v) != len(Languages) || total != float64(len(Languages)) {
		t.Errorf("all languages: %v %v", v, total)
	}
	if v, _, _ := complete(alice, code, "code", "x"); len(v) != 0 {
		t.Errorf("code has candidates %v", v)
	}
	sum := &mcp.PromptReference{Name: PromptSummarize}
	if v, _, _ := complete(alice, sum, "conversation_id", ""); fmt.Sprint(v) != fmt.Sprint(ids) {
		t.Errorf("alice's ids %v, want %v", v, ids)
	}
	if v, _, _ := complete(alice, sum, "conversation_id", ids[1][:12]); !slices.Contains(v, ids[1]) {
		t.Errorf("prefix %s: %v", ids[1][:12], v)
	}
	if v, _, _ := complete(alice, sum, "conversation_id", ids[1]); fmt.Sprint(v) != "["+ids[1]+"]" {
		t.Errorf("whole id: %v", v)
	}
	tmpl := &mcp.ResourceTemplateReference{URI: URITemplate}
	if v, _, _ := complete(alice, tmpl, "id", ""); fmt.Sprint(v) != fmt.Sprint(ids) {
		t.Errorf("template ids %v", v)
	}
	if v, _, _ := complete(bob, tmpl, "id", ""); fmt.Sprint(v) != "["+bobs+"]" {
		t.Errorf("bob's template ids %v", v)
	}
	if v, _, _ := complete(bob, sum, "conversation_id", ids[0]); len(v) != 0 {
		t.Errorf("bob completes alice's id: %v", v)
	}
	_, err := a.Complete(alice, &mcp.CompleteRequestParams{Ref: &mcp.PromptReference{Name: "nope"}, Argument: mcp.CompleteRequestParamsArgument{Name: "x"}})
	wireErr(t, err, wire.CodeInvalidParams)
	_, err = a.Complete(alice, &mcp.CompleteRequestParams{Ref: &mcp.ResourceTemplateReference{URI: "file:///{path}"}, Argument: mcp.CompleteRequestParamsArgument{Name: "path"}})
	wireErr(t, err, wire.CodeInvalidParams)
}
