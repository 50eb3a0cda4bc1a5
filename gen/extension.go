package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
)

// extensionsDir holds the protocol extensions, one folder each.
const extensionsDir = "extensions"

// manifestFile is what an extension's folder says of it.
const manifestFile = "extension.json"

// extension is one folder under schema/extensions: definitions laid out
// like a revision's, layered onto every revision since the one it names.
// Its files count as the revision's (a reference ../shared/X.json names
// the extension's X or else the revision's), its methods join the
// revision's method table, and its task rules the revision's Spec.
type extension struct {
	Comment string `json:"$comment"`
	ID      string `json:"id"`
	Since   string `json:"since"`
	About   string `json:"about"`
	// Methods lists, by message union (ClientRequest, ServerRequest,
	// ClientNotification, ServerNotification), the extension's
	// definitions that join it.
	Methods map[string][]string `json:"methods"`
	// TaskResults says which of the revision's requests the server may
	// answer with a task, and with which definition.
	TaskResults map[string]string `json:"taskResults"`
	TaskRules   *taskRules        `json:"taskRules"`

	dir   string // its folder, e.g. extensions/tasks
	since int    // index of Since among the revisions
	raw   []byte // for the schema hash
}

// taskRules mirrors protocol.TaskRules.
type taskRules struct {
	ServerDirected          bool `json:"serverDirected"`
	ToolErrorCompletes      bool `json:"toolErrorCompletes"`
	CancelEndedAcknowledged bool `json:"cancelEndedAcknowledged"`
}

// loadExtensions reads the manifest of every folder under extensions/,
// sorted by folder; none is fine.
func loadExtensions(fsys fs.FS, revisions []string) ([]*extension, error) {
	entries, err := fs.ReadDir(fsys, extensionsDir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*extension
	ids := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := path.Join(extensionsDir, e.Name())
		p := path.Join(dir, manifestFile)
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("%s: every extension folder needs its %s: %w", dir, manifestFile, err)
		}
		x := &extension{dir: dir, raw: raw}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(x); err != nil {
			return nil, positioned(p, raw, err)
		}
		switch {
		case x.ID == "":
			return nil, fmt.Errorf("%s: id is missing", p)
		case ids[x.ID] != "":
			return nil, fmt.Errorf("%s: id %q is also the id of %s", p, x.ID, ids[x.ID])
		}
		ids[x.ID] = dir
		x.since = slices.Index(revisions, x.Since)
		if x.since < 0 {
			return nil, fmt.Errorf("%s: since %q is not a revision (have %v)", p, x.Since, revisions)
		}
		for union := range x.Methods {
			if _, ok := unionSides[union]; !ok {
				return nil, fmt.Errorf("%s: methods.%s: not a message union (have %v)", p, union, sortedKeys(unionSides))
			}
		}
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, nil
}

// layers are the extensions layered onto revision index.
func layers(exts []*extension, index int) []*extension {
	var out []*extension
	for _, x := range exts {
		if index >= x.since {
			out = append(out, x)
		}
	}
	return out
}

// layer adds the definitions of an extension to a revision: one that the
// revision has already is an error, not an override.
func (rs *revisionSchema) layer(fsys fs.FS, x *extension, hash *hasher) error {
	var paths []string
	err := fs.WalkDir(fsys, x.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") && path.Base(p) != manifestFile {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("extension %s: %w", x.ID, err)
	}
	sort.Strings(paths)
	hash.add(path.Join(x.dir, manifestFile), x.raw)
	for _, p := range paths {
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		hash.add(p, raw)
		def, err := parseDefinition(p, raw)
		if err != nil {
			return err
		}
		if prev, dup := rs.Defs[def.Name]; dup {
			return fmt.Errorf("%s: definition %s of extension %s is also defined in %s: an extension adds definitions to revision %s, it does not replace them", p, def.Name, x.ID, prev.Path, rs.Name)
		}
		def.Extension = x.ID
		rs.Defs[def.Name] = def
	}
	for union, members := range x.Methods {
		for _, name := range members {
			def := rs.Defs[name]
			if def == nil || def.Extension != x.ID {
				return fmt.Errorf("%s: methods.%s: %s is not a definition of the extension", path.Join(x.dir, manifestFile), union, name)
			}
		}
	}
	for req, result := range x.TaskResults {
		def := rs.Defs[req]
		if def == nil || def.Result == "" {
			return fmt.Errorf("%s: taskResults: %s is not a request of revision %s", path.Join(x.dir, manifestFile), req, rs.Name)
		}
		if rs.Defs[refName(result)] == nil {
			return fmt.Errorf("%s: taskResults.%s: %q names no definition", path.Join(x.dir, manifestFile), req, result)
		}
	}
	rs.Layers = append(rs.Layers, x)
	return nil
}

// members are the definitions of a message union of the revision: its
// anyOf branches, then those its extensions add, each with the extension
// that adds it ("" for the revision's own).
func (rs *revisionSchema) members(union string) (names, from []string) {
	u := rs.Defs[union]
	if u != nil {
		if len(u.Body.AnyOf) > 0 {
			for _, br := range u.Body.AnyOf {
				names, from = append(names, refName(br.Ref)), append(from, "")
			}
		} else {
			names, from = []string{union}, []string{""} // 2026-07-28: a single notification
		}
	}
	for _, x := range rs.Layers {
		for _, n := range x.Methods[union] {
			names, from = append(names, n), append(from, x.ID)
		}
	}
	return names, from
}

// taskResult is what the revision's extensions say a request is answered
// with when it runs as a task, and which extension says so.
func (rs *revisionSchema) taskResult(request string) (result, ext string) {
	for _, x := range rs.Layers {
		if r, ok := x.TaskResults[request]; ok {
			return refName(r), x.ID
		}
	}
	return "", ""
}
