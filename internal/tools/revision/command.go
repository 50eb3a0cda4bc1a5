// Package revision is `mcpstack revision`: the first step of adopting a
// new MCP revision. `revision new REV` makes schema/REV a copy of the
// newest revision (or --from), with its mentions of that revision
// updated, so that `make generate` and the build pass at once; the
// maintainer then edits the copy to what the new revision says.
package revision

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpstack/mcpstack/schema"
)

const usage = `Usage: mcpstack revision new REV [--from REV] [--schemas DIR]

Create DIR/REV (default schema/REV) as a copy of the newest revision there
(or --from REV): every definition file, with each mention of that revision
replaced by REV. $ref paths are relative and stay as they are; $schema, the
dialect, stays the dialect of the revision copied. differences.json (the
accepted differences from an official schema) is not copied: the new
revision's own come with its official schema. Then it prints the next steps.

Flags:
`

// Command runs "mcpstack revision" with the arguments after its name.
func Command(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("revision new", flag.ContinueOnError)
	from := fl.String("from", "", "the `REV`ision to copy (default: the newest in DIR)")
	dir := fl.String("schemas", "schema", "the schema `DIR`ectory")
	fl.Usage = func() { fmt.Fprint(fl.Output(), usage); fl.PrintDefaults() }
	fl.SetOutput(io.Discard) // the flag package would print the usage itself: once, below
	if len(args) == 0 || args[0] != "new" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
			fl.SetOutput(stdout)
			fl.Usage()
			return 0
		}
		if len(args) > 0 {
			fmt.Fprintf(stderr, "revision: unknown subcommand %q (there is new)\n", args[0])
		}
		fl.SetOutput(stderr)
		fl.Usage()
		return 2
	}
	// The revision comes first, the flags after it (flag stops at the
	// first argument that is not one).
	rest := args[1:]
	var rev string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		rev, rest = rest[0], rest[1:]
	}
	if err := fl.Parse(rest); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fl.SetOutput(stdout)
			fl.Usage()
			return 0
		}
		fl.SetOutput(stderr)
		fmt.Fprintf(stderr, "revision new: %v\n", err)
		fl.Usage()
		return 2
	}
	extra := fl.Args()
	if rev == "" && len(extra) > 0 {
		rev, extra = extra[0], extra[1:]
	}
	if len(extra) > 0 {
		fmt.Fprintf(stderr, "revision new: one revision at a time (also given: %s)\n", strings.Join(extra, " "))
		return 2
	}
	if rev == "" {
		fmt.Fprint(stderr, "revision new: name the revision, e.g. mcpstack revision new 2027-01-01\n")
		return 2
	}
	src, err := New(*dir, rev, *from)
	if err != nil {
		fmt.Fprintf(stderr, "revision new: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, `Created %s/%s as a copy of %s.

Next:
  1. make generate      # internal/generated/mcp%s, the revision table, docs/revisions.md
  2. go build ./...     # passes: the copy has the methods %s has
  3. edit %s/%s to what the new revision says (new methods are a request
     file with x-mcp-result and an entry in jsonrpc/ClientRequest.json;
     removed ones leave both), then make generate again: a new request
     method fails the build where handlers assert mcp.Handler, until they
     have it (internal/methods/base has a -32601 stand-in for each)
  4. go run . schemadiff --from %s --to %s --format markdown    # what changed
  5. go run . schemadiff --official schema.json --revision %s   # against the official one, once it is out
     (go run .: a mcpstack built before the revision existed does not have it)
`, *dir, rev, src, strings.ReplaceAll(rev, "-", ""), src, *dir, rev, src, rev, rev)
	return 0
}

// New creates dir/rev as a copy of dir/from (the newest revision of dir
// when from is ""), and returns the revision copied.
func New(dir, rev, from string) (string, error) {
	if !schema.IsRevision(rev) {
		return "", fmt.Errorf("%q is not a revision name (YYYY-MM-DD)", rev)
	}
	if _, err := os.Stat(dir); err != nil {
		return "", fmt.Errorf("the schema directory: %w", err)
	}
	revs := schema.RevisionsIn(os.DirFS(dir))
	if len(revs) == 0 {
		return "", fmt.Errorf("%s has no revision folders", dir)
	}
	if from == "" {
		from = revs[len(revs)-1]
	}
	if !schema.IsRevision(from) {
		return "", fmt.Errorf("--from %q is not a revision name", from)
	}
	for _, r := range revs {
		if r == rev {
			return "", fmt.Errorf("%s/%s exists already", dir, rev)
		}
	}
	if rev < revs[len(revs)-1] {
		return "", fmt.Errorf("%s is older than %s, the newest revision: a new revision comes after the others", rev, revs[len(revs)-1])
	}
	srcDir := filepath.Join(dir, from)
	if _, err := os.Stat(srcDir); err != nil {
		return "", fmt.Errorf("--from: %w", err)
	}
	dst := filepath.Join(dir, rev)
	if _, err := os.Lstat(dst); err == nil {
		return "", fmt.Errorf("%s exists already (and is not a revision folder): move it away first", dst)
	}
	// The copy is made beside it under a name the revision pattern does
	// not match, then renamed: an interrupted copy is never a revision.
	tmp, err := os.MkdirTemp(dir, "."+rev+".new-")
	if err != nil {
		return "", fmt.Errorf("making the copy: %w", err)
	}
	err = filepath.WalkDir(srcDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(srcDir, p)
		target := filepath.Join(tmp, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if d.Name() == "differences.json" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, bytes.ReplaceAll(b, []byte(from), []byte(rev)), 0o644)
	})
	if err == nil {
		err = os.Chmod(tmp, 0o755) // MkdirTemp makes it 0700
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		_ = os.RemoveAll(tmp) // nothing half made
		return "", fmt.Errorf("copying %s to %s: %w", srcDir, dst, err)
	}
	return from, nil
}
