// Command gen compiles mcpstack's JSON Schemas into Go: the canonical types,
// unions, codecs, Handler interfaces and method table in generated/mcp, and a
// package per revision with its method table and validators.
//
//	go run ./gen            # write generated/
//	go run ./gen -check     # fail if generated/ is stale
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
	out := flag.String("out", "generated", "output directory")
	check := flag.Bool("check", false, "compare with the output directory instead of writing; exit 1 when stale")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./gen [-out DIR] [-check]\n\nCompiles schema/ into Go code under DIR.\n\n")
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
		fmt.Fprintf(os.Stderr, "gen: %s is stale, run make generate:\n  %s\n", *out, strings.Join(stale, "\n  "))
		os.Exit(1)
	}
}

// sync writes files under dir (when write is set) and removes generated
// files that are no longer produced. It returns the paths that differed.
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
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
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
		stale = append(stale, filepath.ToSlash(rel)+" (no longer generated)")
		if write {
			return os.Remove(p)
		}
		return nil
	})
	sort.Strings(stale)
	return stale, err
}
