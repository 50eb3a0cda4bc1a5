package conformance

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

func TestGetPrompt(t *testing.T) {
	tests := []struct {
		name  string
		args  map[string]string // nil: no arguments member
		check func(t *testing.T, msgs []map[string]any)
	}{
		{PromptSimple, nil, func(t *testing.T, msgs []map[string]any) {
			if len(msgs) != 1 || mustJSON(msgs[0]) != `{"content":{"text":"`+SimplePromptText+`","type":"text"},"role":"user"}` {
				t.Errorf("messages %s", mustJSON(msgs))
			}
		}},
		{PromptWithArguments, map[string]string{"arg1": "testValue1", "arg2": "testValue2"}, func(t *testing.T, msgs []map[string]any) {
			text := obj(t, msgs[0]["content"])["text"]
			if len(msgs) != 1 || text != "Prompt with arguments: arg1='testValue1', arg2='testValue2'" {
				t.Errorf("messages %s", mustJSON(msgs))
			}
		}},
		{PromptEmbeddedResource, map[string]string{"resourceUri": "test://example-resource"}, func(t *testing.T, msgs []map[string]any) {
			if len(msgs) != 2 {
				t.Fatalf("messages %s", mustJSON(msgs))
			}
			c := obj(t, msgs[0]["content"])
			res := obj(t, c["resource"])
			if c["type"] != "resource" || res["uri"] != "test://example-resource" || res["mimeType"] != "text/plain" || res["text"] != EmbeddedPromptText {
				t.Errorf("first message %s", mustJSON(msgs[0]))
			}
			if obj(t, msgs[1]["content"])["text"] != EmbeddedAskText {
				t.Errorf("second message %s", mustJSON(msgs[1]))
			}
		}},
		{PromptWithImage, nil, func(t *testing.T, msgs []map[string]any) {
			if len(msgs) != 2 {
				t.Fatalf("messages %s", mustJSON(msgs))
			}
			c := obj(t, msgs[0]["content"])
			if c["type"] != "image" || c["mimeType"] != "image/png" {
				t.Errorf("first message %s", mustJSON(msgs[0]))
			}
			checkPNG(t, c["data"].(string))
			if obj(t, msgs[1]["content"])["text"] != ImageAskText {
				t.Errorf("second message %s", mustJSON(msgs[1]))
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := fast().GetPrompt(context.Background(), &mcp.GetPromptRequestParams{Name: tc.name, Arguments: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			for _, rev := range revisionsOf(mcp.MethodGetPrompt) {
				wireResult(t, mcp.MethodGetPrompt, rev, r)
			}
			tree := wireResult(t, mcp.MethodGetPrompt, testRev, r)
			var msgs []map[string]any
			for _, m := range tree["messages"].([]any) {
				msg := obj(t, m)
				if msg["role"] != "user" {
					t.Errorf("role %v", msg["role"])
				}
				msgs = append(msgs, msg)
			}
			tc.check(t, msgs)
		})
	}
}

func TestGetPromptErrors(t *testing.T) {
	tests := []struct {
		name      string
		args      map[string]string
		wantField string
	}{
		{"no_such_prompt", nil, "/params/name"},
		{PromptWithArguments, map[string]string{"arg1": "x"}, "/params/arguments/arg2"},
		{PromptEmbeddedResource, nil, "/params/arguments/resourceUri"},
	}
	for _, tc := range tests {
		_, err := fast().GetPrompt(context.Background(), &mcp.GetPromptRequestParams{Name: tc.name, Arguments: tc.args})
		we := wireError(t, err, wire.CodeInvalidParams)
		if d, _ := we.Data.(map[string]any); d["field"] != tc.wantField {
			t.Errorf("%s: data %v, want field %s", tc.name, we.Data, tc.wantField)
		}
	}
}

func TestListPrompts(t *testing.T) {
	for _, rev := range revisionsOf(mcp.MethodListPrompts) {
		r, err := fast().ListPrompts(context.Background(), &mcp.PaginatedRequestParams{})
		if err != nil {
			t.Fatal(err)
		}
		tree := wireResult(t, mcp.MethodListPrompts, rev, r)
		var names []string
		args := map[string][]string{}
		for _, x := range tree["prompts"].([]any) {
			p := obj(t, x)
			names = append(names, p["name"].(string))
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s has no description", p["name"])
			}
			for _, a := range asSlice(p["arguments"]) {
				arg := obj(t, a)
				if arg["required"] != true {
					t.Errorf("%s.%s is not required", p["name"], arg["name"])
				}
				args[p["name"].(string)] = append(args[p["name"].(string)], arg["name"].(string))
			}
		}
		if want := []string{PromptSimple, PromptWithArguments, PromptEmbeddedResource, PromptWithImage, PromptInputRequired}; !slices.Equal(names, want) {
			t.Errorf("%s: prompts %v, want %v", rev, names, want)
		}
		if !slices.Equal(args[PromptWithArguments], []string{"arg1", "arg2"}) || !slices.Equal(args[PromptEmbeddedResource], []string{"resourceUri"}) {
			t.Errorf("%s: arguments %v", rev, args)
		}
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func TestComplete(t *testing.T) {
	prompt := func(name string) mcp.CompleteRequestParamsRef { return &mcp.PromptReference{Name: name} }
	template := func(uri string) mcp.CompleteRequestParamsRef { return &mcp.ResourceTemplateReference{URI: uri} }
	tests := []struct {
		name     string
		ref      mcp.CompleteRequestParamsRef
		arg, val string
		want     []string
		wantCode int
	}{
		{"prefix", prompt(PromptWithArguments), "arg1", "par", []string{"paris", "park", "party"}, 0},
		{"suite's value", prompt(PromptWithArguments), "arg1", "test", []string{"test", "testValue1"}, 0},
		{"any case", prompt(PromptWithArguments), "arg1", "PAR", []string{"paris", "park", "party"}, 0},
		{"empty value lists all", prompt(PromptWithArguments), "arg2", "", []string{"hello", "help", "testValue2", "world"}, 0},
		{"no match", prompt(PromptWithArguments), "arg1", "zzz", []string{}, 0},
		{"unknown argument", prompt(PromptWithArguments), "arg9", "", []string{}, 0},
		{"prompt without arguments", prompt(PromptSimple), "x", "", []string{}, 0},
		{"resource uri", prompt(PromptEmbeddedResource), "resourceUri", "test://static", []string{URIStaticBinary, URIStaticText}, 0},
		{"template id", template(URITemplate), "id", "1", []string{"1", "123"}, 0},
		{"unknown prompt", prompt("nope"), "arg1", "", nil, wire.CodeInvalidParams},
		{"unknown template", template("test://other/{x}"), "x", "", nil, wire.CodeInvalidParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := fast().Complete(context.Background(), &mcp.CompleteRequestParams{
				Ref: tc.ref, Argument: mcp.CompleteRequestParamsArgument{Name: tc.arg, Value: tc.val},
			})
			if tc.wantCode != 0 {
				wireError(t, err, tc.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tree := wireResult(t, mcp.MethodComplete, testRev, r)
			c := obj(t, tree["completion"])
			var got []string
			for _, v := range c["values"].([]any) {
				got = append(got, v.(string))
			}
			if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("values %v, want %v", got, tc.want)
			}
			if num(t, c["total"]) != float64(len(tc.want)) || c["hasMore"] != false {
				t.Errorf("completion %s", mustJSON(c))
			}
			if !strings.HasPrefix(mustJSON(c), `{"hasMore":false,"total":`) {
				t.Errorf("completion %s", mustJSON(c))
			}
		})
	}
}
