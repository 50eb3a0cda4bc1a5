// Command gen compiles mcpstack's JSON Schemas into Go: the canonical types,
// unions, codecs, Handler interfaces and method table in mcp/, a package
// per revision with its method table and validators in generated/, and
// the client Session's typed methods (client/requests_gen.go).
//
//	go run ./gen            # write them
//	go run ./gen -check     # fail if any is stale
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcpstack/mcpstack/schema"
)

func main() {
	out := flag.String("out", ".", "the module root the generated files go under")
	check := flag.Bool("check", false, "compare with the output directory instead of writing; exit 1 when stale")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./gen [-out DIR] [-check]\n\nCompiles schema/ into Go code under DIR: mcp/, generated/ and client/requests_gen.go.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	files, err := Generate(schema.FS, schema.Revisions)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	stale, err := sync(*out, files, !*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if *check && len(stale) > 0 {
		fmt.Fprintf(os.Stderr, "gen: generated code is stale, run make generate:\n  %s\n", strings.Join(stale, "\n  "))
		os.Exit(1)
	}
}

// sync writes files under dir (when write is set) and removes the
// generated files (*_gen.go) no longer produced from the folders it
// writes into. It returns the paths that differed.
func sync(dir string, files map[string][]byte, write bool) ([]string, error) {
	var stale []string
	for p, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		old, err := os.ReadFile(full)
		if err == nil && bytes.Equal(old, src) {
			continue
		}
		stale = append(stale, p)
		if !write {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, src, 0o644); err != nil {
			return nil, err
		}
	}
	var err error
	for _, top := range topFolders(files) {
		if err = removeStale(dir, top, files, write, &stale); err != nil {
			break
		}
	}
	sort.Strings(stale)
	return stale, err
}

// topFolders are the first path segments of the files' paths.
func topFolders(files map[string][]byte) []string {
	seen := map[string]bool{}
	var out []string
	for p := range files {
		top, _, _ := strings.Cut(p, "/")
		if !seen[top] && strings.Contains(p, "/") {
			seen[top] = true
			out = append(out, top)
		}
	}
	sort.Strings(out)
	return out
}

// removeStale finds (and, with write, removes) the *_gen.go files under
// dir/top that files no longer has.
func removeStale(dir, top string, files map[string][]byte, write bool, stale *[]string) error {
	return filepath.WalkDir(filepath.Join(dir, top), func(p string, d fs.DirEntry, err error) error {
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, "_gen.go") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if _, ok := files[filepath.ToSlash(rel)]; ok {
			return nil
		}
		*stale = append(*stale, filepath.ToSlash(rel)+" (no longer generated)")
		if write {
			return os.Remove(p)
		}
		return nil
	})
}
