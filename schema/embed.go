// Package schema holds mcpstack's own JSON Schemas for every released MCP
// revision and for the project's extensions, embedded so that validators need
// no files at run time.
//
// Layout: <revision>/<kind>/<Definition>.json, one definition per file, where
// kind is jsonrpc, request, result, notification, content, error or shared.
// References between definitions are relative paths ("../content/TextContent.json").
// A request definition names its result with the annotation "x-mcp-result",
// and a request that may run as a task (2025-11-25) the result it is then
// answered with, "x-mcp-task-result"; the generator turns both into the
// method table. A protocol extension (extensions/<name>) is laid out like a
// revision and layered onto the revisions its extension.json names.
package schema

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
)

// FS holds every schema file, rooted at this directory.
//
//go:embed [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] ext extensions transport.json
var FS embed.FS

// RevisionsIn lists the revision folders (YYYY-MM-DD) at the root of fsys,
// oldest first. RevisionsIn(FS) are the MCP protocol revisions with
// schemas here: a new revision is a new folder (mcpstack revision new),
// and everything downstream follows. It is read when asked for, not at
// startup, as only the generator and schemadiff ask.
func RevisionsIn(fsys fs.FS) []string {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && IsRevision(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out) // dates sort as strings
	return out
}

// IsRevision reports whether name is shaped like a revision (YYYY-MM-DD).
func IsRevision(name string) bool {
	_, err := time.Parse(time.DateOnly, name)
	return err == nil && len(name) == len(time.DateOnly)
}

// Ext is the folder of the project's own extension schemas.
const Ext = "ext"

// Extensions is the folder of the protocol extensions layered onto
// revisions: one folder each, with an extension.json that says which
// revisions, methods and task rules it adds (see gen/README.md).
const Extensions = "extensions"

// Files returns the schema files of one folder (a revision or Ext), keyed by
// definition name, with their paths relative to FS.
func Files(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := fs.WalkDir(FS, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".json") || path.Base(p) == "differences.json" || path.Base(p) == "extension.json" {
			return nil
		}
		out[strings.TrimSuffix(path.Base(p), ".json")] = p
		return nil
	})
	return out, err
}

// Names returns the definition names of a folder, sorted.
func Names(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
