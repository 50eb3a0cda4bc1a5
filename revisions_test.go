package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// revisionLiteral is a protocol revision written as a string.
var revisionLiteral = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}"$`)

// Handwritten code names no revision: what differs between revisions
// comes from the schemas, through the generated tables (issue 21). The
// generator, its output, the message-log validator (which reads logs of
// every revision by name) and test helpers are exempt; comments do not
// count.
func TestNoRevisionLiterals(t *testing.T) {
	exempt := []string{"gen/", "internal/generated/", "mcp/", "internal/tools/validate/", "internal/tools/bench/peers/", ".tools/", "testdata/"}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, e := range exempt {
			if strings.HasPrefix(path+"/", e) {
				return filepath.SkipDir
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.HasSuffix(filepath.Dir(path), "test") {
			return nil // test files and test-helper packages (peertest, schematest, ...) name revisions to test them
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && revisionLiteral.MatchString(lit.Value) {
				t.Errorf("%s: the revision %s written by hand", path, lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
