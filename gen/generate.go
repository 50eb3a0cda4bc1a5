package main

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Generate compiles the schemas of every revision under fsys into Go
// sources, keyed by path relative to the module root: the protocol types
// in mcp/, a package per revision and the registry in internal/generated/, and
// the client Session's typed methods in client/.
func Generate(fsys fs.FS, revisions []string) (map[string][]byte, error) {
	var revs []*revisionSchema
	hash := newHasher()
	exts, err := loadExtensions(fsys, revisions)
	if err != nil {
		return nil, err
	}
	for i, r := range revisions {
		rs, err := loadRevision(fsys, r, i, layers(exts, i))
		if err != nil {
			return nil, err
		}
		revs = append(revs, rs)
		hash.add(r, []byte(rs.Hash))
	}
	facts, err := loadTransport(fsys, revisions)
	if err != nil {
		return nil, err
	}
	if facts.raw != nil {
		hash.add(transportFile, facts.raw)
	}
	m, err := buildModel(revs)
	if err != nil {
		return nil, err
	}
	if err := facts.check(m); err != nil {
		return nil, err
	}
	c := &canonical{m: m, tags: map[string]bool{}, transport: facts}
	for _, d := range m.Decls {
		for _, f := range d.Fields {
			f.owner = d.Name
		}
		if d.Kind == dUnion && d.Tag != "" {
			for _, mb := range d.Members {
				c.tags[d.Tag+"\x00"+mb.Type] = true
			}
		}
	}
	var names []string
	for _, r := range revisions {
		names = append(names, r)
	}
	canonProv := fmt.Sprintf("Source: schema/{%s} (schema hash %s).", strings.Join(names, ","), hash.sum())
	out := map[string][]byte{}
	emit := func(p, pkg, prov string, f *file) error {
		src, err := f.render(header(pkg, prov))
		if err != nil {
			return fmt.Errorf("%s: %w\n%s", p, err, src)
		}
		out[p] = src
		return nil
	}
	// encode first: it collects the helpers it needs.
	files := []struct {
		name string
		f    *file
	}{
		{"types_gen.go", c.types()},
		{"unions_gen.go", c.unions()},
		{"decode_gen.go", c.decode()},
		{"encode_gen.go", c.encode()},
		{"append_gen.go", c.appendJSON()},
		{"handler_gen.go", c.handler()},
		{"requests_gen.go", c.requests()},
		{"methods_gen.go", c.methods()},
	}
	for _, cf := range files {
		if err := emit(path.Join("mcp", cf.name), "mcp", canonProv, cf.f); err != nil {
			return nil, err
		}
	}
	if err := emit("mcp/doc_gen.go", "mcp", canonProv, c.docFile()); err != nil {
		return nil, err
	}
	for _, rs := range revs {
		pkg := revisionPackage(rs.Name)
		if err := emit(path.Join("internal/generated", pkg, "spec_gen.go"), pkg, provenance(rs), c.revision(rs)); err != nil {
			return nil, err
		}
		valid, err := c.validators(rs)
		if err != nil {
			return nil, err
		}
		if err := emit(path.Join("internal/generated", pkg, "valid_gen.go"), pkg, provenance(rs), valid); err != nil {
			return nil, err
		}
	}
	if err := emit("internal/generated/revisions_gen.go", "generated", canonProv, c.registry()); err != nil {
		return nil, err
	}
	if err := emit("client/requests_gen.go", "client", canonProv, c.sessionMethods()); err != nil {
		return nil, err
	}
	return out, nil
}

func (c *canonical) docFile() *file {
	f := newFile()
	f.p("// Declarations: %d types over %d revisions, %d methods.", len(c.m.Decls), len(c.m.Revisions), len(c.m.Methods))
	return f
}
