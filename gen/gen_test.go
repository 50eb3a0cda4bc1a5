package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/schema"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// revisionsIn lists the revision folders of a fixture schema tree.
func revisionsIn(t *testing.T, dir string) []string {
	t.Helper()
	revs := schema.RevisionsIn(os.DirFS(dir))
	if len(revs) == 0 {
		t.Fatalf("no revision folders in %s", dir)
	}
	return revs
}

// TestGolden generates each fixture under testdata/golden/<case>/schema and
// compares with testdata/golden/<case>/want. Run with -update to rewrite.
func TestGolden(t *testing.T) {
	cases, _ := filepath.Glob("testdata/golden/*")
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			schemaDir := filepath.Join(dir, "schema")
			files, err := Generate(os.DirFS(schemaDir), revisionsIn(t, schemaDir))
			if err != nil {
				t.Fatal(err)
			}
			want := filepath.Join(dir, "want")
			if *update {
				os.RemoveAll(want)
				if _, err := sync(want, files, true); err != nil {
					t.Fatal(err)
				}
				return
			}
			stale, err := sync(want, files, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(stale) > 0 {
				t.Errorf("golden files differ (go test ./gen -run TestGolden -update):\n  %s", strings.Join(stale, "\n  "))
			}
		})
	}
}

// TestNegative: each broken fixture must fail with an error that names the
// file and the problem.
func TestNegative(t *testing.T) {
	cases, _ := filepath.Glob("testdata/negative/*")
	if len(cases) == 0 {
		t.Fatal("no negative cases")
	}
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(dir, "want-error.txt"))
			if err != nil {
				t.Fatal(err)
			}
			schemaDir := filepath.Join(dir, "schema")
			_, err = Generate(os.DirFS(schemaDir), revisionsIn(t, schemaDir))
			if err == nil {
				t.Fatal("generation succeeded, want an error")
			}
			if w := strings.TrimSpace(string(want)); !strings.Contains(err.Error(), w) {
				t.Errorf("error %q\ndoes not contain %q", err, w)
			}
		})
	}
}

// TestGeneratedUpToDate regenerates in memory and compares with mcp/,
// generated/ and client/requests_gen.go.
func TestGeneratedUpToDate(t *testing.T) {
	files, err := Generate(schema.FS, schema.Revisions)
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for p, src := range files {
		old, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(p)))
		if err != nil || !bytes.Equal(old, src) {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("generated code is stale -- run make generate:\n  %s", strings.Join(stale, "\n  "))
	}
}

// TestGoName pins the property-name mapping.
func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"_meta": "Meta",
		"io.modelcontextprotocol/protocolVersion": "ProtocolVersion",
		"conversation_id":                         "ConversationID",
		"uriTemplate":                             "URITemplate",
		"mimeType":                                "MIMEType",
		"$schema":                                 "Schema",
		"ttlMs":                                   "TTLMs",
	} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}
