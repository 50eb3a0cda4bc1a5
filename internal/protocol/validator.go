package protocol

import (
	"errors"
	"fmt"
	"io/fs"
	neturl "net/url"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// schemaBase is the URL under which embedded schema files are registered. No
// request ever goes there: every file is added as a resource before compiling.
const schemaBase = "https://schema.mcpstack.invalid/"

// uriTemplateFormat is RFC 6570, which allows a variable in the host
// (conversation://{id}); the library's own parses the template as a URL,
// which refuses it. The protocol's schemas and tools' alike use it.
var uriTemplateFormat = &jsonschema.Format{Name: "uri-template", Validate: func(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	return validURITemplate(s)
}}

// Validator checks tree values against the definitions of one schema folder.
// It is safe for concurrent use.
type Validator struct {
	dir     string
	schemas map[string]*jsonschema.Schema
}

// NewValidator compiles every definition file under dir of fsys, and those
// of the layers: folders whose files count as dir's, as a protocol
// extension's do (a file layer/kind/X.json is read as dir/kind/X.json, so
// that its reference ../shared/Y.json names the layer's Y or dir's). Cross-file references resolve
// among the files of fsys only.
func NewValidator(fsys fs.FS, dir string, layers ...string) (*Validator, error) {
	return newValidator(fsys, dir, false, layers)
}

// newValidator is NewValidator; assertFormat makes format an assertion
// whatever the dialect (Spec's validators of the protocol revisions).
func newValidator(fsys fs.FS, dir string, assertFormat bool, layers []string) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoads{})
	if assertFormat {
		c.AssertFormat()
	}
	c.RegisterFormat(uriTemplateFormat)
	defs := map[string]string{}
	add := func(root, as string) error {
		return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !isDefinitionFile(p) {
				return nil
			}
			f, err := fsys.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			doc, err := jsonschema.UnmarshalJSON(f)
			if err != nil {
				return fmt.Errorf("schema %s: %w", p, err)
			}
			at := p
			if as != "" {
				at = path.Join(as, strings.TrimPrefix(p, root+"/"))
			}
			name, own := strings.TrimSuffix(path.Base(p), ".json"), strings.HasPrefix(at, dir+"/")
			if prev, dup := defs[name]; own && dup && as != "" {
				return fmt.Errorf("schema %s: redefines %s of %s", p, name, prev)
			}
			if err := c.AddResource(schemaBase+at, doc); err != nil {
				return fmt.Errorf("schema %s: %w", p, err)
			}
			if own {
				defs[name] = at
			}
			return nil
		})
	}
	if err := add(".", ""); err != nil {
		return nil, err
	}
	for _, l := range layers {
		if err := add(l, dir); err != nil {
			return nil, err
		}
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("no schema files under %q", dir)
	}
	v := &Validator{dir: dir, schemas: make(map[string]*jsonschema.Schema, len(defs))}
	for name, p := range defs {
		s, err := c.Compile(schemaBase + p)
		if err != nil {
			return nil, fmt.Errorf("compile %s: %w", p, err)
		}
		v.schemas[name] = s
	}
	return v, nil
}

// isDefinitionFile tells a definition file from the other JSON files of a
// schema folder (differences.json, an extension's extension.json).
func isDefinitionFile(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(p, ".json") && base != "differences.json" && base != "extension.json"
}

// Has reports whether the folder defines name.
func (v *Validator) Has(name string) bool { _, ok := v.schemas[name]; return ok }

// Definitions lists the definition names, sorted.
func (v *Validator) Definitions() []string {
	out := make([]string, 0, len(v.schemas))
	for n := range v.schemas {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Validate checks value against definition name. A failure is a
// *wire.ValidationError naming the most specific offending location.
func (v *Validator) Validate(name string, value any) error {
	s, ok := v.schemas[name]
	if !ok {
		return fmt.Errorf("validate: %s has no definition %q", v.dir, name)
	}
	return validationError(name, s.Validate(value))
}

// validationError turns a failure of the library into one
// *wire.ValidationError naming the most specific offending location.
func validationError(name string, err error) error {
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &wire.ValidationError{Definition: name, Reason: err.Error()}
	}
	leaf := deepestCause(ve)
	keyword := "schema"
	if kp := leaf.ErrorKind.KeywordPath(); len(kp) > 0 {
		keyword = kp[len(kp)-1]
	}
	reason := reasonOf(leaf.ErrorKind)
	if why := noBranch(leaf); why != "" {
		reason = why
	}
	return &wire.ValidationError{
		Definition: name,
		Pointer:    leafPointer(leaf),
		Reason:     reason,
		Keyword:    keyword,
	}
}

// deepestCause picks the leaf error that says most. Inside an anyOf or a
// oneOf, branches that failed a const (their discriminator did not match)
// are set aside, so for a content block with type "text" the TextContent
// branch explains the failure rather than "anyOf failed". Among the rest
// the deepest leaf wins.
func deepestCause(e *jsonschema.ValidationError) *jsonschema.ValidationError {
	causes := e.Causes
	if isUnion(e) {
		var matched []*jsonschema.ValidationError
		for _, c := range causes {
			if !hasConstFailure(c) {
				matched = append(matched, c)
			}
		}
		if len(matched) == 0 {
			return e
		}
		causes = matched
	}
	best := e
	for _, c := range causes {
		if d := deepestCause(c); best == e || len(d.InstanceLocation) > len(best.InstanceLocation) {
			best = d
		}
	}
	return best
}

// isUnion reports whether e is an anyOf or a oneOf that failed.
func isUnion(e *jsonschema.ValidationError) bool {
	switch e.ErrorKind.(type) {
	case *kind.AnyOf, *kind.OneOf:
		return true
	}
	return false
}

// noBranch says, in the protocol's terms, why no branch of a union
// matched when each failed on its discriminator (a const such as a
// content block's type): "'audio' is not one of the type values allowed
// here: image, resource, text"; "" where that is not the case.
func noBranch(e *jsonschema.ValidationError) string {
	if !isUnion(e) || len(e.Causes) == 0 { // a oneOf two branches matched has no causes
		return ""
	}
	var got any
	var prop string
	wants := map[string]bool{}
	for _, c := range e.Causes {
		k := constFailure(c)
		if k == nil {
			return ""
		}
		got, prop = k.e.ErrorKind.(*kind.Const).Got, k.prop
		wants[fmt.Sprint(k.e.ErrorKind.(*kind.Const).Want)] = true
	}
	list := make([]string, 0, len(wants))
	for w := range wants {
		list = append(list, w)
	}
	sort.Strings(list)
	return fmt.Sprintf("%q is not one of the %s values allowed here: %s", fmt.Sprint(got), prop, strings.Join(list, ", "))
}

// constCause is a const failure and the property it is on.
type constCause struct {
	e    *jsonschema.ValidationError
	prop string
}

// constFailure finds the const failure of a branch, nil when it has none.
func constFailure(e *jsonschema.ValidationError) *constCause {
	if _, ok := e.ErrorKind.(*kind.Const); ok {
		prop := "the"
		if n := len(e.InstanceLocation); n > 0 {
			prop = strconv.Quote(e.InstanceLocation[n-1])
		}
		return &constCause{e: e, prop: prop}
	}
	for _, c := range e.Causes {
		if k := constFailure(c); k != nil {
			return k
		}
	}
	return nil
}

func hasConstFailure(e *jsonschema.ValidationError) bool {
	if _, ok := e.ErrorKind.(*kind.Const); ok {
		return true
	}
	for _, c := range e.Causes {
		if hasConstFailure(c) {
			return true
		}
	}
	return false
}

// leafPointer locates a failure; a missing required property is located at
// the property itself, which is what a caller has to add.
func leafPointer(e *jsonschema.ValidationError) string {
	if r, ok := e.ErrorKind.(*kind.Required); ok && len(r.Missing) > 0 {
		return jsontree.Pointer(append(slices.Clip(e.InstanceLocation), r.Missing[0])...)
	}
	return jsontree.Pointer(e.InstanceLocation...)
}

// Requires reports whether definition name requires property prop (its own
// required list, through $ref and allOf), by the compiled schemas: the
// reference TestRequiredMembersMatchTheReference holds Spec.Requires's
// generated table to.
func (v *Validator) Requires(name, prop string) bool {
	s, ok := v.schemas[name]
	if !ok {
		return false
	}
	return requires(s, prop, 0)
}

func requires(s *jsonschema.Schema, prop string, depth int) bool {
	if s == nil || depth > 8 {
		return false
	}
	for _, r := range s.Required {
		if r == prop {
			return true
		}
	}
	if requires(s.Ref, prop, depth+1) {
		return true
	}
	for _, a := range s.AllOf {
		if requires(a, prop, depth+1) {
			return true
		}
	}
	return false
}

// Schema is one JSON Schema document compiled on its own: the inputSchema
// or outputSchema of a tool, say. It is safe for concurrent use.
type Schema struct {
	name   string
	s      *jsonschema.Schema
	surely surelyCheck // nil: the document uses a keyword it does not know
}

// SchemaOption changes how CompileSchema reads a document.
type SchemaOption func(*schemaConfig)

type schemaConfig struct{ formatAnnotation bool }

// FormatAsAnnotation takes "format" as the annotation JSON Schema 2020-12
// makes it by default, not as an assertion: for judging another's schema
// by the letter (mcpstack check), where asserting it would find faults
// the specification does not.
func FormatAsAnnotation() SchemaOption { return func(c *schemaConfig) { c.formatAnnotation = true } }

// CompileSchema compiles doc (a JSON value: a map as encoding/json or Parse
// gives it) under name, which errors name. References must stay inside
// doc; the dialect is the document's $schema, 2020-12 when it has none.
func CompileSchema(name string, doc any, opts ...SchemaOption) (*Schema, error) {
	var cfg schemaConfig
	for _, o := range opts {
		o(&cfg)
	}
	b, err := jsontree.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	parsed, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoads{})
	c.DefaultDraft(jsonschema.Draft2020)
	if !cfg.formatAnnotation {
		c.AssertFormat() // a tool's "format": "date" is a promise to its handler, not a note
	}
	c.RegisterFormat(uriTemplateFormat)
	url := schemaBase + "compiled/" + neturl.PathEscape(name) + ".json"
	if err := c.AddResource(url, parsed); err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", name, err)
	}
	// The compiled check may assert formats either way: what it finds
	// surely valid is valid without the assertion too.
	return &Schema{name: name, s: s, surely: compileSurely(parsed)}, nil
}

// refuseLoads is the compilers' loader: it loads nothing. The library's
// default reads file: URLs, so a schema from elsewhere (a server's tool
// schema, in mcpstack check) could make this process read any local file,
// or block on /dev/stdin, through a $ref or $schema.
type refuseLoads struct{}

func (refuseLoads) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s is outside the schema: references are not loaded", url)
}

// Validate checks value against the schema. A failure is a
// *wire.ValidationError naming the most specific offending location.
// The compiled check answers first; the library where it is not sure.
func (s *Schema) Validate(value any) error {
	if s.surely != nil && s.surely(value) {
		return nil
	}
	return validationError(s.name, s.s.Validate(value))
}
