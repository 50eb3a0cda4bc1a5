package revision_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/tools/revision"
)

// TestAdoptRevision walks the whole path of adopting a revision, in a
// copy of the tree: revision new; the copy edited (a new request method
// with params and result, a new optional property on a type, a method
// removed); make generate's generator; the build fails exactly where the
// handlers assert mcp.Handler, naming the new method; once the method is
// there, a server negotiates the new revision, validates the new method's
// messages against its schema, refuses the removed one with -32601, serves
// the older revisions as before, and mcpstack validate judges a log of it.
func TestAdoptRevision(t *testing.T) {
	if os.Getenv("MCPSTACK_LONG_TESTS") == "" {
		t.Skip("builds a copy of the tree twice (one to three minutes): make test-long runs it (MCPSTACK_LONG_TESTS=1)")
	}
	root := moduleRoot(t)
	tree := filepath.Join(t.TempDir(), "tree")
	copyTree(t, root, tree)
	const rev = "2099-01-01"

	// 1. revision new
	if _, err := revision.New(filepath.Join(tree, "schema"), rev, ""); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tree, "schema", rev)
	// 2. the copy builds as it is: it has the methods of the one copied
	run(t, tree, "go", "build", "./...")
	// 3. the edit: tools/ping, Implementation.motto, completion/complete gone
	write(t, filepath.Join(dir, "request", "PingToolsRequest.json"), `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "PingToolsRequest",
  "description": "Asks whether a tool answers (a synthetic method of the adoption test).",
  "x-mcp-result": "../result/PingToolsResult.json",
  "type": "object",
  "properties": {
    "id": {"$ref": "../jsonrpc/RequestId.json"},
    "jsonrpc": {"const": "2.0", "type": "string"},
    "method": {"const": "tools/ping", "type": "string"},
    "params": {"type": "object", "properties": {"_meta": {"$ref": "../shared/RequestMetaObject.json"}, "name": {"type": "string"}}, "required": ["_meta", "name"]}
  },
  "required": ["id", "jsonrpc", "method", "params"]
}`)
	write(t, filepath.Join(dir, "result", "PingToolsResult.json"), `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "PingToolsResult",
  "description": "Whether the tool answers.",
  "type": "object",
  "properties": {"_meta": {"$ref": "../shared/ResultMetaObject.json"}, "resultType": {"type": "string"}, "alive": {"type": "boolean"}},
  "required": ["resultType", "alive"]
}`)
	edit(t, filepath.Join(dir, "jsonrpc", "ClientRequest.json"), func(doc map[string]any) {
		var branches []any
		for _, b := range doc["anyOf"].([]any) {
			if ref := b.(map[string]any)["$ref"]; ref != "../request/CompleteRequest.json" {
				branches = append(branches, b)
			}
		}
		doc["anyOf"] = append(branches, map[string]any{"$ref": "../request/PingToolsRequest.json"})
	})
	edit(t, filepath.Join(dir, "shared", "Implementation.json"), func(doc map[string]any) {
		doc["properties"].(map[string]any)["motto"] = map[string]any{"type": "string"}
	})

	// 4. make generate, then the build stops at the seam.
	run(t, tree, "make", "generate")
	out, err := command(tree, "go", "build", "./...")
	if err == nil || !strings.Contains(out, "missing method PingTools") {
		t.Fatalf("the build after generate: %v\n%s\nwant it to fail where a handler lacks PingTools", err, out)
	}
	// 5. the method, where every handler gets its stand-ins
	appendFile(t, filepath.Join(tree, "internal", "methods", "base", "lifecycle.go"), `
// PingTools answers -32601 (the adoption test's method).
func (Lifecycle) PingTools(context.Context, *mcp.PingToolsRequestParams) (*mcp.PingToolsResult, error) {
	return nil, wire.ErrMethodNotFound
}
`)
	run(t, tree, "go", "build", "./...")
	// 6. the changelog says what the edit did
	out, err = command(tree, "go", "run", ".", "schemadiff", "--from", "2026-07-28", "--to", rev, "--format", "json")
	if err != nil {
		t.Fatalf("schemadiff --from 2026-07-28 --to %s: %v\n%s", rev, err, out)
	}
	for _, want := range []string{
		`"what": "method added",
      "pointer": "tools/ping"`,
		`"what": "method removed",
      "pointer": "completion/complete"`,
		`"what": "property added",
      "pointer": "Implementation/properties/motto"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the changelog lacks %s:\n%s", want, out)
		}
	}
	if !strings.Contains(readFile(t, filepath.Join(tree, "docs", "revisions.md")), "## 2026-07-28 → "+rev) {
		t.Error("make generate did not add the new revision to docs/revisions.md")
	}
	// 7. what a server and the validator make of the new revision
	write(t, filepath.Join(tree, "adopted_test.go"), adoptedTest)
	if out, err := command(tree, "go", "test", "-count=1", "-run", "^TestAdopted$", "."); err != nil {
		t.Fatalf("the adopted revision: %v\n%s", err, out)
	}
}

// adoptedTest runs in the copy, against its generated code.
const adoptedTest = `package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
)

type pinger struct{ app.Handler }

func (pinger) PingTools(_ context.Context, p *mcp.PingToolsRequestParams) (*mcp.PingToolsResult, error) {
	return &mcp.PingToolsResult{Alive: p.Name == "greet"}, nil
}

func TestAdopted(t *testing.T) {
	if generated.Latest().Revision != "2099-01-01" {
		t.Fatalf("latest revision %s", generated.Latest().Revision)
	}
	srv := server.New(pinger{app.New("adopted", "1").Handler()})
	defer srv.Close()
	call := func(rev, method, params string) string {
		body := ` + "`" + `{"jsonrpc":"2.0","id":1,"method":"` + "`" + ` + method + ` + "`" + `","params":{` + "`" + ` + params + ` + "`" + `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + "`" + ` + rev + ` + "`" + `","io.modelcontextprotocol/clientCapabilities":{}}}}` + "`" + `
		reply, _ := core.Of(srv).ServeStateless(context.Background(), core.Of(srv).Parse([]byte(body)), nil, nil)
		return string(reply)
	}
	for _, c := range []struct{ rev, method, params, want string }{
		{"2099-01-01", "server/discover", "", "2099-01-01"},
		{"2099-01-01", "tools/ping", ` + "`" + `"name":"greet",` + "`" + `, ` + "`" + `"alive":true` + "`" + `},
		{"2099-01-01", "tools/ping", ` + "`" + `"name":7,` + "`" + `, ` + "`" + `-32602` + "`" + `},
		{"2099-01-01", "completion/complete", ` + "`" + `"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"},` + "`" + `, ` + "`" + `-32601` + "`" + `},
		{"2026-07-28", "tools/ping", ` + "`" + `"name":"greet",` + "`" + `, ` + "`" + `-32601` + "`" + `},
		{"2026-07-28", "completion/complete", ` + "`" + `"ref":{"type":"ref/prompt","name":"x"},"argument":{"name":"a","value":"b"},` + "`" + `, ` + "`" + `"error"` + "`" + `},
	} {
		got := call(c.rev, c.method, c.params)
		if !strings.Contains(got, c.want) {
			t.Errorf("%s %s: %s, want %s", c.rev, c.method, got, c.want)
		}
		if c.rev == "2026-07-28" && c.method == "completion/complete" && strings.Contains(got, "-32601") {
			t.Errorf("2026-07-28 lost completion/complete: %s", got)
		}
	}
	log := ` + "`" + `{"jsonrpc":"2.0","id":1,"method":"tools/ping","params":{"name":"greet","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}
{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","alive":true}}
{"jsonrpc":"2.0","id":2,"method":"tools/ping","params":{"name":"greet","_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}
{"jsonrpc":"2.0","id":2,"result":{"resultType":"complete"}}
` + "`" + `
	v, err := validate.New()
	if err != nil {
		t.Fatal(err)
	}
	rep := v.Check(context.Background(), []validate.Input{validate.ReaderInput("adopted.jsonl", bytes.NewReader([]byte(log)))})
	if len(rep.Findings) != 1 || rep.Findings[0].Line != 4 {
		t.Errorf("validate: %v, want one finding, the result without alive on line 4", rep.Findings)
	}
}
`

func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}

// copyTree copies the source tree (not .git, bin, .tools, node_modules).
func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		switch d.Name() {
		case ".git", "bin", ".tools", "node_modules":
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func appendFile(t *testing.T, p, s string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	write(t, p, string(b)+s)
}

func edit(t *testing.T, p string, fn func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	fn(doc)
	out, _ := json.MarshalIndent(doc, "", "  ")
	write(t, p, string(out)+"\n")
}

func command(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	// -trimpath: the copy's builds share the cache with the next run's,
	// whose copy is elsewhere; -pgo=off: the copy's default.pgo would make
	// the main package's build compile every package a second time; the
	// user's GOFLAGS stay.
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -mod=mod -trimpath -pgo=off"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	if out, err := command(dir, name, args...); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
