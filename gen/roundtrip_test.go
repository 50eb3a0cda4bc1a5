package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/instance"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

// schemaDoc loads one of our schema files as a map; a path in a revision's
// folder may name a file of an extension layered onto it.
func schemaDoc(t testing.TB, p string) map[string]any {
	t.Helper()
	rev, _, _ := strings.Cut(p, "/")
	if real, ok := layeredFiles(t, rev)[p]; ok {
		p = real
	}
	raw, err := fs.ReadFile(schema.FS, p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return doc
}

// resolver follows a reference from a file of a revision, or of an
// extension layered onto it, which counts as the revision's.
func resolver(t testing.TB) instance.Resolver {
	return func(base, ref string) (map[string]any, string, error) {
		p := path.Join(path.Dir(base), ref)
		return schemaDoc(t, p), p, nil
	}
}

// layeredFiles maps the paths the files of a revision's extensions are
// read as (2026-07-28/request/GetTaskRequest.json) to where they are.
func layeredFiles(t testing.TB, rev string) map[string]string {
	t.Helper()
	out := map[string]string{}
	spec := generated.Lookup(rev)
	if spec == nil {
		return out
	}
	for _, x := range spec.Extensions {
		err := fs.WalkDir(schema.FS, x.Dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && path.Base(p) != "extension.json" {
				out[path.Join(rev, strings.TrimPrefix(p, x.Dir+"/"))] = p
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// synth returns a valid instance of a definition of a revision.
func synth(t testing.TB, rev, def string, mode instance.Mode) map[string]any {
	t.Helper()
	files, err := schema.Files(rev)
	if err != nil {
		t.Fatal(err)
	}
	for virtual := range layeredFiles(t, rev) {
		files[strings.TrimSuffix(path.Base(virtual), ".json")] = virtual
	}
	p, ok := files[def]
	if !ok {
		t.Fatalf("%s has no definition %s", rev, def)
	}
	v, err := instance.Generate(schemaDoc(t, p), p, resolver(t), mode)
	if err != nil {
		t.Fatalf("%s %s: %v", rev, def, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s %s: instance is %T, not an object", rev, def, v)
	}
	return m
}

// normal re-encodes a tree through JSON so that trees built from different
// Go number types compare equal.
func normal(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMethodRoundTrip drives a valid request and a valid result of every
// method of every revision through validate, decode, project, validate, and
// checks that nothing was lost or added on the way.
func TestMethodRoundTrip(t *testing.T) {
	total, direct := 0, 0
	for _, spec := range generated.Specs {
		for _, m := range spec.Methods { // sorted by name
			name := m.Name
			for _, mode := range []instance.Mode{instance.Minimal, instance.Full} {
				modeName := map[instance.Mode]string{instance.Minimal: "minimal", instance.Full: "full"}[mode]
				t.Run(spec.Revision+"/"+name+"/"+modeName, func(t *testing.T) {
					msg := synth(t, spec.Revision, m.Request, mode)
					if err := spec.Validate(m.Request, msg); err != nil {
						t.Fatalf("synthesized request is invalid: %v", err)
					}
					if params, ok := msg["params"]; ok {
						p, err := mcp.DecodeParams(name, params, spec.Index)
						if err != nil {
							t.Fatalf("decode params: %v", err)
						}
						back := map[string]any{}
						for k, v := range msg {
							back[k] = v
						}
						back["params"] = spec.Project(p)
						direct += sameBytes(t, p)
						if err := spec.Validate(m.Request, back); err != nil {
							t.Fatalf("projected request is invalid: %v", err)
						}
						if got, want := normal(t, back), normal(t, msg); !reflect.DeepEqual(got, want) {
							t.Errorf("request round trip differs:\n got %v\nwant %v", got, want)
						}
					}
					if m.Notification {
						return
					}
					res := synth(t, spec.Revision, m.Result, mode)
					if err := spec.Validate(m.Result, res); err != nil {
						t.Fatalf("synthesized result is invalid: %v", err)
					}
					r, err := mcp.DecodeResult(name, res, spec.Index)
					if err != nil {
						t.Fatalf("decode result: %v", err)
					}
					out := spec.Project(r)
					direct += sameBytes(t, r)
					if err := spec.Validate(m.Result, out); err != nil {
						t.Fatalf("projected result is invalid: %v", err)
					}
					if got, want := normal(t, out), normal(t, res); !reflect.DeepEqual(got, want) {
						t.Errorf("result round trip differs:\n got %v\nwant %v", got, want)
					}
				})
				total++
			}
		}
	}
	t.Logf("%d method round trips over %d revisions; %d direct encodings, each byte for byte the tree's", total, len(generated.Specs), direct)
	if direct < total {
		t.Errorf("only %d of %d values encoded directly (AppendJSON): the tree's path serves the rest", direct, total)
	}
}

// sameBytes holds v's AppendJSON to jsontree.Marshal of its tree, in the
// shape of every revision; it returns how many of them it encoded
// directly (AppendJSON may decline: unknown members).
func sameBytes(t *testing.T, v wire.Encoder) int {
	t.Helper()
	a, ok := v.(interface {
		AppendJSON(b []byte, rev int) ([]byte, bool)
	})
	if !ok {
		t.Fatalf("%T has no AppendJSON", v)
	}
	n := 0
	for _, spec := range generated.Specs {
		want, err := jsontree.Marshal(v.EncodeValue(spec.Index))
		if err != nil {
			t.Fatalf("%T: tree: %v", v, err)
		}
		got, ok := a.AppendJSON([]byte("prefix"), spec.Index)
		if !ok {
			continue
		}
		n++
		if !bytes.HasPrefix(got, []byte("prefix")) || !bytes.Equal(got[len("prefix"):], want) {
			t.Errorf("%T in %s: AppendJSON\n%s\nthe tree's\n%s", v, spec.Revision, got, want)
		}
	}
	return n
}

// TestUnknownMembersKept checks that members the model does not know survive
// a decode and re-encode at every level, _meta included.
func TestUnknownMembersKept(t *testing.T) {
	in := `{"name":"chat","arguments":{"query":"hi","n":3},"x-top":{"a":[1,2]},
		"_meta":{"progressToken":"p1","com.example/trace":"abc"}}`
	var p mcp.CallToolRequestParams
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if p.Meta == nil || p.Meta.ProgressToken != wire.StringID("p1") {
		t.Fatalf("progress token not decoded: %+v", p.Meta)
	}
	out, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := normal(t, json.RawMessage(out)), normal(t, json.RawMessage(in)); !reflect.DeepEqual(got, want) {
		t.Errorf("round trip lost members:\n got %s\nwant %s", out, in)
	}

	res := `{"content":[{"type":"text","text":"hello","x-block":true,"_meta":{"k":1}}],"isError":false,"x-res":1}`
	var r mcp.CallToolResult
	if err := json.Unmarshal([]byte(res), &r); err != nil {
		t.Fatal(err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello" {
		t.Fatalf("content[0] = %#v, want *TextContent hello", r.Content[0])
	}
	out, _ = json.Marshal(r)
	if got, want := normal(t, json.RawMessage(out)), normal(t, json.RawMessage(res)); !reflect.DeepEqual(got, want) {
		t.Errorf("result round trip lost members:\n got %s\nwant %s", out, res)
	}
}

// TestProjectionDropsWhatRevisionLacks: a canonical result carrying fields of
// newer revisions is projected onto an old revision without them.
func TestProjectionDropsWhatRevisionLacks(t *testing.T) {
	isErr := false
	r := &mcp.CallToolResult{
		Content:           []mcp.ContentBlock{&mcp.TextContent{Text: "hi"}},
		IsError:           &isErr,
		StructuredContent: map[string]any{"answer": "hi"},
		ResultType:        "complete",
		Extra:             map[string]any{"x-custom": 1},
	}
	tests := []struct {
		rev     string
		present []string
		absent  []string
	}{
		{"2024-11-05", []string{"content", "isError", "x-custom"}, []string{"structuredContent", "resultType"}},
		{"2025-06-18", []string{"content", "isError", "structuredContent"}, []string{"resultType"}},
		{"2026-07-28", []string{"content", "structuredContent", "resultType"}, nil},
	}
	for _, tt := range tests {
		spec := generated.Lookup(tt.rev)
		out := spec.Project(r).(map[string]any)
		for _, k := range tt.present {
			if _, ok := out[k]; !ok {
				t.Errorf("%s: %q missing from %v", tt.rev, k, out)
			}
		}
		for _, k := range tt.absent {
			if _, ok := out[k]; ok {
				t.Errorf("%s: %q should be dropped: %v", tt.rev, k, out)
			}
		}
		if err := spec.Validate("CallToolResult", out); err != nil {
			t.Errorf("%s: projection invalid: %v", tt.rev, err)
		}
	}
}

// TestSchemaDefaults: a result the handler left a required member out of
// is written with the schema's default where the revision requires it, by
// both encoders, and is valid there; the revisions that lack the member do
// not get it; a value of its own wins.
func TestSchemaDefaults(t *testing.T) {
	ttl := int64(60000)
	tests := []struct {
		name   string
		result wire.Encoder
		def    string
		rev    string
		want   map[string]any // members and their values; nil: absent
	}{
		{"call, 2026-07-28", &mcp.CallToolResult{Content: []mcp.ContentBlock{}}, "CallToolResult", "2026-07-28",
			map[string]any{"resultType": "complete"}},
		{"call, 2025-11-25", &mcp.CallToolResult{Content: []mcp.ContentBlock{}}, "CallToolResult", "2025-11-25",
			map[string]any{"resultType": nil}},
		{"list, 2026-07-28", &mcp.ListToolsResult{}, "ListToolsResult", "2026-07-28",
			map[string]any{"resultType": "complete", "ttlMs": int64(0), "cacheScope": "private"}},
		{"list, its own values", &mcp.ListToolsResult{ResultType: "complete", TTLMs: &ttl, CacheScope: "public"}, "ListToolsResult", "2026-07-28",
			map[string]any{"ttlMs": int64(60000), "cacheScope": "public"}},
		{"list, 2024-11-05", &mcp.ListToolsResult{}, "ListToolsResult", "2024-11-05",
			map[string]any{"resultType": nil, "ttlMs": nil, "cacheScope": nil}},
		{"discover, every member required", &mcp.DiscoverResult{SupportedVersions: []string{"2026-07-28"}}, "DiscoverResult", "2026-07-28",
			map[string]any{"resultType": "complete", "ttlMs": int64(0), "cacheScope": "private"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := generated.Lookup(tt.rev)
			tree := spec.Project(tt.result).(map[string]any)
			got, ok := tt.result.(interface {
				AppendJSON([]byte, int) ([]byte, bool)
			}).AppendJSON(nil, spec.Index)
			if !ok {
				t.Fatal("AppendJSON declined")
			}
			direct, err := jsontree.Parse(got)
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]any{"EncodeValue": tree, "AppendJSON": direct} {
				obj := v.(map[string]any)
				for k, want := range tt.want {
					have, has := obj[k]
					if want == nil && has || want != nil && !reflect.DeepEqual(numeric(have), want) {
						t.Errorf("%s: %s = %#v (present %v), want %#v", name, k, have, has, want)
					}
				}
				if err := spec.Validate(tt.def, obj); err != nil {
					t.Errorf("%s: invalid in %s: %v", name, tt.rev, err)
				}
			}
		})
	}
}

// numeric is v with a parsed JSON number as an int64 where it is one.
func numeric(v any) any {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i
		}
	}
	return v
}

// TestOneOrMany: sampling content is one block or an array; each form comes
// back as it came, and a value built in Go with one block is written alone.
func TestOneOrMany(t *testing.T) {
	for _, in := range []string{
		`{"role":"assistant","model":"m","content":{"type":"text","text":"one"}}`,
		`{"role":"assistant","model":"m","content":[{"type":"text","text":"one"}]}`,
		`{"role":"assistant","model":"m","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`,
	} {
		var r mcp.CreateMessageResult
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatal(err)
		}
		if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text == "" {
			t.Fatalf("%s: content[0] = %#v", in, r.Content[0])
		}
		out, _ := json.Marshal(r)
		if got, want := normal(t, json.RawMessage(out)), normal(t, json.RawMessage(in)); !reflect.DeepEqual(got, want) {
			t.Errorf("round trip:\n got %s\nwant %s", out, in)
		}
	}
	built := mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "m", Content: []mcp.SamplingMessageContentBlock{&mcp.TextContent{Text: "x"}}}
	tree := generated.Lookup("2024-11-05").Project(&built).(map[string]any)
	if _, single := tree["content"].(map[string]any); !single {
		t.Errorf("one block built in Go: content = %#v, want one object (2024-11-05 has no arrays)", tree["content"])
	}
	if err := generated.Lookup("2024-11-05").Validate("CreateMessageResult", tree); err != nil {
		t.Errorf("2024-11-05 projection: %v", err)
	}
}
