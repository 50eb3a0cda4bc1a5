package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server/auth"
)

// The README's Go snippets that are not excerpts of an example program:
// here they compile (TestReadmeSnippets holds the README to them).

func readmeServeHTTP(ctx context.Context, a *app.App, secret []byte) error {
	az, err := auth.New(ctx, auth.Config{Mode: auth.ModeHS256, Secret: secret})
	if err != nil {
		return err
	}
	srv := app.NewServer(a)
	defer srv.Close()
	h, shutdown := mcphttp.Handler(srv, mcphttp.WithAuth(az))
	hs := &http.Server{Addr: ":8000", Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done() // SIGTERM: drain the streams while the server stops
		go shutdown(context.Background())
		_ = hs.Shutdown(context.Background())
	}()
	return hs.ListenAndServe()
}

func readmeCheckByHand(body []byte, result *mcp.CallToolResult) (any, error) {
	spec := generated.Lookup("2025-11-25") // *protocol.Spec: method table + validators
	tree, err := jsontree.Parse(body)      // one parse, numbers kept exact
	if err != nil {
		return nil, err
	}
	m, _ := spec.Method("tools/call") // request and result definitions, direction
	if err := spec.Validate(m.Request, tree); err != nil {
		return nil, err // a *wire.ValidationError{Pointer, Reason}: -32602
	}
	return spec.Project(result), nil // drops what 2025-11-25 does not define
}

// Every ```go block of the README is an excerpt of a Go file of the
// module, so that it compiles: a snippet that drifted from the API fails
// here, not in a reader's editor.
func TestReadmeSnippets(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var sources [][]string
	err = filepath.WalkDir(".", func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != "." || d.Name() == "testdata" || d.Name() == "generated" || d.Name() == "mcp") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sources = append(sources, codeLines(string(b)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks := 0
	lines := strings.Split(string(readme), "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "```go" {
			continue
		}
		start := i + 1
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
		}
		blocks++
		snippet := codeLines(strings.Join(lines[start:i], "\n"))
		found := false
		for _, src := range sources {
			if contains(src, snippet) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("README.md:%d: the Go snippet is not an excerpt of any Go file of the module: copy it from one that compiles (readme_test.go holds those of no example)", start)
		}
	}
	if blocks == 0 {
		t.Error("README.md has no Go snippet")
	}
}

// codeLines are the non-blank lines of Go source, trimmed.
func codeLines(src string) []string {
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// contains reports whether sub is a contiguous run of lines of src.
func contains(src, sub []string) bool {
	for i := 0; i+len(sub) <= len(src); i++ {
		j := 0
		for j < len(sub) && src[i+j] == sub[j] {
			j++
		}
		if j == len(sub) {
			return true
		}
	}
	return len(sub) == 0
}
