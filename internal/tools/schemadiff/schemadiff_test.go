package schemadiff

import (
	"bytes"
	"encoding/json"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpstack/mcpstack/internal/sharedtest"
	"github.com/mcpstack/mcpstack/schema"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// TestFixtures compares the hand-written fixtures in testdata/<case>: a
// schemas/<rev> folder in our layout and an official.json.
func TestFixtures(t *testing.T) {
	tests := []struct {
		dir, rev                 string
		news, accepted, stale    int
		wantClean                bool
		definitions              int
		wantFirst, wantFirstKind string
	}{
		// Keyword-named properties, type order, true vs {}, 1 vs 1.0,
		// refs across kinds, refs into a definition, annotations.
		{dir: "clean", rev: "r1", wantClean: true, definitions: 4},
		// draft-07, "definitions", #/definitions/X refs.
		{dir: "draft07", rev: "r0", wantClean: true, definitions: 2},
		// One difference of every kind, one accepted and one stale entry.
		{dir: "planted", rev: "r1", news: 24, accepted: 1, stale: 1, definitions: 6,
			wantFirst: "Accepted/format", wantFirstKind: "format"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			rep := compareFixture(t, tt.dir, tt.rev)
			if rep.Clean() != tt.wantClean || rep.New != tt.news || rep.Accepted != tt.accepted || rep.Stale != tt.stale {
				for _, d := range rep.Differences {
					t.Log(FormatDifference(d))
				}
				t.Fatalf("clean=%v new=%d accepted=%d stale=%d; want clean=%v new=%d accepted=%d stale=%d",
					rep.Clean(), rep.New, rep.Accepted, rep.Stale, tt.wantClean, tt.news, tt.accepted, tt.stale)
			}
			if rep.Definitions != tt.definitions {
				t.Errorf("Definitions = %d, want %d", rep.Definitions, tt.definitions)
			}
			if tt.wantFirst != "" && (rep.Differences[0].Path != tt.wantFirst || rep.Differences[0].Kind != tt.wantFirstKind) {
				t.Errorf("first difference = %s, want %s [%s]", FormatDifference(rep.Differences[0]), tt.wantFirst, tt.wantFirstKind)
			}
		})
	}
}

func compareFixture(t *testing.T, dir, rev string) *Report {
	t.Helper()
	official, err := os.ReadFile(filepath.Join("testdata", dir, "official.json"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Compare(os.DirFS(filepath.Join("testdata", dir, "schemas")), rev, official)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestPlantedGolden runs the command on the planted fixture and compares its
// text output with testdata/planted/want.golden (go test -update rewrites it).
func TestPlantedGolden(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Command([]string{
		"--official", "testdata/planted/official.json",
		"--revision", "r1",
		"--schemas", "testdata/planted/schemas",
	}, &stdout, &stderr)
	if code != ExitDifferences {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitDifferences, stderr.String())
	}
	golden := filepath.Join("testdata", "planted", "want.golden")
	if *update {
		if err := os.WriteFile(golden, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got := stdout.String(); got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", golden, got, want)
	}

	// The planted fixture covers every kind schemadiff reports.
	rep := compareFixture(t, "planted", "r1")
	kinds := map[string]bool{}
	for _, d := range rep.Differences {
		kinds[d.Kind] = true
	}
	for _, k := range []string{
		KindDefinition, KindProperty, "type", "required", "enum", "const", "anyOf", "allOf",
		"items", "additionalProperties", "format", "minimum", "maximum", "maxItems", "$ref", "pattern",
	} {
		if !kinds[k] {
			t.Errorf("planted fixture has no difference of kind %q", k)
		}
	}
}

// TestRules checks single normalisation and walking rules on one definition
// "D" on each side.
func TestRules(t *testing.T) {
	tests := []struct {
		name         string
		ours, theirs string
		want         []string // "path [kind] ours=… theirs=…"
	}{
		{
			name:   "annotations ignored",
			ours:   `{"$schema":"x","title":"D","description":"ours","x-mcp-result":"../r/R.json","$comment":"c","type":"string"}`,
			theirs: `{"description":"theirs","type":"string"}`,
		},
		{
			name:   "type order and single-element arrays",
			ours:   `{"properties":{"a":{"type":["integer","string"]},"b":{"type":["string"]}}}`,
			theirs: `{"properties":{"a":{"type":["string","integer"]},"b":{"type":"string"}}}`,
		},
		{
			name:   "type differs",
			ours:   `{"type":"integer"}`,
			theirs: `{"type":"number"}`,
			want:   []string{`D/type [type] ours="integer" theirs="number"`},
		},
		{
			name:   "null type kept",
			ours:   `{"type":["integer"]}`,
			theirs: `{"type":["integer","null"]}`,
			want:   []string{`D/type [type] ours="integer" theirs=["integer","null"]`},
		},
		{
			name:   "numbers by value",
			ours:   `{"maximum":1,"minimum":0.50}`,
			theirs: `{"maximum":1.0,"minimum":5e-1}`,
		},
		{
			name:   "integer vs number bound",
			ours:   `{"maximum":1}`,
			theirs: `{"maximum":1.5}`,
			want:   []string{`D/maximum [maximum] ours=1 theirs=1.5`},
		},
		{
			name:   "true equals empty schema",
			ours:   `{"additionalProperties":true,"items":{}}`,
			theirs: `{"additionalProperties":{},"items":true}`,
		},
		{
			name:   "additionalProperties absent is a difference",
			ours:   `{"type":"object"}`,
			theirs: `{"type":"object","additionalProperties":{}}`,
			want:   []string{`D/additionalProperties [additionalProperties] ours=(absent) theirs={}`},
		},
		{
			name:   "required and enum are sets",
			ours:   `{"required":["b","a","a"],"properties":{"e":{"enum":["y","x"]}}}`,
			theirs: `{"required":["a","b"],"properties":{"e":{"enum":["x","y"]}}}`,
		},
		{
			name:   "property named like a keyword",
			ours:   `{"properties":{"type":{"type":"string"},"enum":{"enum":[1]},"properties":{"properties":{"oneOf":{"type":"array"}}}}}`,
			theirs: `{"properties":{"type":{"type":"integer"},"enum":{"enum":[2]},"properties":{"properties":{"oneOf":{"type":"object"}}}}}`,
			want: []string{
				`D/properties/enum/enum [enum] ours=[1] theirs=[2]`,
				`D/properties/properties/properties/oneOf/type [type] ours="array" theirs="object"`,
				`D/properties/type/type [type] ours="string" theirs="integer"`,
			},
		},
		{
			name:   "property missing on one side",
			ours:   `{"properties":{"required":{"type":"string"}}}`,
			theirs: `{"properties":{"default":{"type":"string","description":"d"}}}`,
			want: []string{
				`D/properties/default [property] ours=(absent) theirs={"type":"string"}`,
				`D/properties/required [property] ours={"type":"string"} theirs=(absent)`,
			},
		},
		{
			name:   "property names are escaped in paths",
			ours:   `{"properties":{"io.x/y~z":{"type":"string"}}}`,
			theirs: `{"properties":{"io.x/y~z":{"type":"integer"}}}`,
			want:   []string{`D/properties/io.x~1y~0z/type [type] ours="string" theirs="integer"`},
		},
		{
			name:   "anyOf branch count",
			ours:   `{"anyOf":[{"type":"string"}]}`,
			theirs: `{"anyOf":[{"type":"string"},{"$ref":"#/$defs/E"}]}`,
			want:   []string{`D/anyOf [anyOf] ours=[{"type":"string"}] theirs=[{"type":"string"},{"$ref":"E"}]`},
		},
		{
			name:   "anyOf branches pairwise",
			ours:   `{"anyOf":[{"$ref":"E.json"},{"type":"null"}]}`,
			theirs: `{"anyOf":[{"$ref":"#/$defs/D"},{"type":"null"}]}`,
			want:   []string{`D/anyOf/0/$ref [$ref] ours="E" theirs="D"`},
		},
		{
			name:   "allOf missing",
			ours:   `{"$ref":"E.json"}`,
			theirs: `{"allOf":[{"$ref":"#/$defs/E"}]}`,
			want: []string{
				`D/$ref [$ref] ours="E" theirs=(absent)`,
				`D/allOf [allOf] ours=(absent) theirs=[{"$ref":"E"}]`,
			},
		},
		{
			name:   "refs into a definition",
			ours:   `{"properties":{"a":{"$ref":"#/properties/b"},"b":{"$ref":"E.json#/properties/x"}}}`,
			theirs: `{"properties":{"a":{"$ref":"#/$defs/D/properties/b"},"b":{"$ref":"#/$defs/E/properties/x"}}}`,
		},
		{
			name:   "unresolved refs",
			ours:   `{"$ref":"Nope.json"}`,
			theirs: `{"$ref":"#/$defs/Nope"}`,
			want:   []string{`D/$ref [$ref] ours="unresolved:Nope.json" theirs="unresolved:#/$defs/Nope"`},
		},
		{
			name:   "const null vs absent",
			ours:   `{"const":null}`,
			theirs: `{}`,
			want:   []string{`D/const [const] ours=null theirs=(absent)`},
		},
		{
			name:   "items tuple vs schema",
			ours:   `{"items":[{"type":"string"}]}`,
			theirs: `{"items":{"type":"string"}}`,
			want:   []string{`D/items [items] ours=[{"type":"string"}] theirs={"type":"string"}`},
		},
		{
			name:   "nested definitions are name maps",
			ours:   `{"$defs":{"type":{"type":"string"}}}`,
			theirs: `{"$defs":{"type":{"type":"boolean"}}}`,
			want:   []string{`D/$defs/type/type [type] ours="string" theirs="boolean"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{
				"r/k/D.json": {Data: []byte(tt.ours)},
				"r/k/E.json": {Data: []byte(`{"type":"object"}`)},
			}
			official := `{"$defs":{"D":` + tt.theirs + `,"E":{"type":"object"}}}`
			rep, err := Compare(fsys, "r", []byte(official))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range rep.Differences {
				got = append(got, strings.TrimSpace(strings.TrimPrefix(FormatDifference(d), string(StatusNew))))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("differences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestListedFile(t *testing.T) {
	base := fstest.MapFS{"r/k/D.json": {Data: []byte(`{"type":"string"}`)}}
	official := []byte(`{"definitions":{"D":{"type":"integer"}}}`)
	tests := []struct {
		name, listed string
		wantErr      string
		wantStatus   []Status
	}{
		{name: "absent", wantStatus: []Status{StatusNew}},
		{name: "accepted", listed: `[{"path":"D/type","kind":"type","reason":"r"}]`, wantStatus: []Status{StatusAccepted}},
		{name: "wrong kind is stale", listed: `[{"path":"D/type","kind":"enum","reason":"r"}]`, wantStatus: []Status{StatusStale, StatusNew}},
		{name: "no reason", listed: `[{"path":"D/type","kind":"type"}]`, wantErr: "needs a path, a kind and a reason"},
		{name: "unknown field", listed: `[{"path":"D/type","kind":"type","reason":"r","why":"x"}]`, wantErr: "unknown field"},
		{name: "duplicate", listed: `[{"path":"D/type","kind":"type","reason":"r"},{"path":"D/type","kind":"type","reason":"s"}]`, wantErr: "listed twice"},
		{name: "not an array", listed: `{}`, wantErr: "cannot unmarshal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for k, v := range base {
				fsys[k] = v
			}
			if tt.listed != "" {
				fsys["r/"+DifferencesFile] = &fstest.MapFile{Data: []byte(tt.listed)}
			}
			rep, err := Compare(fsys, "r", official)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []Status
			for _, d := range rep.Differences {
				got = append(got, d.Status)
			}
			if len(got) != len(tt.wantStatus) {
				t.Fatalf("statuses %v, want %v", got, tt.wantStatus)
			}
			for i := range got {
				if got[i] != tt.wantStatus[i] {
					t.Fatalf("statuses %v, want %v", got, tt.wantStatus)
				}
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name     string
		fsys     fstest.MapFS
		official string
		wantErr  string
	}{
		{"no definitions", fstest.MapFS{"r/x.txt": {}}, `{"$defs":{}}`, "no definitions"},
		{"missing folder", fstest.MapFS{}, `{"$defs":{}}`, "reading schemas"},
		{"duplicate name", fstest.MapFS{"r/a/D.json": {Data: []byte(`{}`)}, "r/b/D.json": {Data: []byte(`{}`)}}, `{"$defs":{}}`, "defined twice"},
		{"bad json", fstest.MapFS{"r/a/D.json": {Data: []byte(`{`)}}, `{"$defs":{}}`, "r/a/D.json"},
		{"no defs", fstest.MapFS{"r/a/D.json": {Data: []byte(`{}`)}}, `{"type":"object"}`, "no $defs or definitions"},
		{"official not object", fstest.MapFS{"r/a/D.json": {Data: []byte(`{}`)}}, `[]`, "not a JSON object"},
		{"trailing data", fstest.MapFS{"r/a/D.json": {Data: []byte(`{}`)}}, `{"$defs":{}} {}`, "trailing data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compare(tt.fsys, "r", []byte(tt.official))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // substring
		stderr     string // substring
		wantOutput bool
	}{
		{name: "help", args: []string{"--help"}, code: ExitClean, stdout: "Usage: mcpstack schemadiff --official FILE --revision REV"},
		{name: "no flags", args: nil, code: ExitError, stderr: "--official and --revision are required"},
		{name: "unknown flag", args: []string{"--nope"}, code: ExitError, stderr: "flag provided but not defined"},
		{name: "extra argument", args: []string{"--official", "x", "--revision", "r", "more"}, code: ExitError, stderr: `unexpected argument "more"`},
		{name: "missing file", args: []string{"--official", "testdata/none.json", "--revision", "2025-11-25"}, code: ExitError, stderr: "none.json"},
		{name: "unknown revision", args: []string{"--official", "testdata/clean/official.json", "--revision", "1999-01-01"}, code: ExitError, stderr: "not built in"},
		{name: "missing revision folder", args: []string{"--official", "testdata/clean/official.json", "--revision", "r9", "--schemas", "testdata/clean/schemas"}, code: ExitError, stderr: "reading schemas r9"},
		{name: "clean", args: []string{"--official", "testdata/clean/official.json", "--revision", "r1", "--schemas", "testdata/clean/schemas"}, code: ExitClean,
			stdout: "schemadiff r1 vs testdata/clean/official.json: 4 definitions, 0 differences (0 new, 0 accepted, 0 stale): clean\n"},
		{name: "differences", args: []string{"-official", "testdata/planted/official.json", "-revision", "r1", "-schemas", "testdata/planted/schemas"}, code: ExitDifferences,
			stdout: "26 differences (24 new, 1 accepted, 1 stale): NOT clean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Command(tt.args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr.String())
			}
		})
	}
}

func TestCommandJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := Command([]string{"--json", "--official", "testdata/planted/official.json", "--revision", "r1", "--schemas", "testdata/planted/schemas"}, &stdout, &stderr)
	if code != ExitDifferences {
		t.Fatalf("exit %d; stderr: %s", code, stderr.String())
	}
	var rep Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	want := compareFixture(t, "planted", "r1")
	if rep.Revision != "r1" || rep.New != want.New || rep.Accepted != want.Accepted || rep.Stale != want.Stale || len(rep.Differences) != len(want.Differences) {
		t.Fatalf("JSON report %+v does not match %+v", rep, *want)
	}
	for i, d := range rep.Differences {
		if FormatDifference(d) != FormatDifference(want.Differences[i]) {
			t.Errorf("difference %d: %s, want %s", i, FormatDifference(d), FormatDifference(want.Differences[i]))
		}
	}
}

// TestDetectsEditOfRealSchema edits a copy of one real revision and checks
// that schemadiff reports exactly the edits.
func TestDetectsEditOfRealSchema(t *testing.T) {
	const rev = "2025-11-25"
	official, err := os.ReadFile(sharedtest.Path(t, "mcp-spec", rev, "schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	fsys := fstest.MapFS{}
	err = fs.WalkDir(schema.FS, rev, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(schema.FS, p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	edit := func(p, old, new string) {
		t.Helper()
		s := string(fsys[p].Data)
		if !strings.Contains(s, old) {
			t.Fatalf("%s lacks %q", p, old)
		}
		fsys[p] = &fstest.MapFile{Data: []byte(strings.Replace(s, old, new, 1))}
	}
	edit(rev+"/request/CallToolRequest.json", `"params"`+"\n  ]", `"paramz"`+"\n  ]")
	edit(rev+"/content/TextContent.json", `"const": "text"`, `"const": "txt"`)
	delete(fsys, rev+"/shared/Role.json")

	rep, err := Compare(fsys, rev, official)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range rep.Differences {
		if d.Status != StatusAccepted { // differences.json's own entries stay accepted
			got = append(got, d.Path+" ["+d.Kind+"]")
		}
	}
	want := []string{
		"CallToolRequest/required [required]",
		"Role [definition]",
		"TextContent/properties/type/const [const]",
	}
	// Every ref to the deleted Role becomes unresolved.
	var rest []string
	for _, g := range got {
		if strings.HasSuffix(g, "/$ref [$ref]") {
			continue
		}
		rest = append(rest, g)
	}
	if strings.Join(rest, "\n") != strings.Join(want, "\n") {
		t.Errorf("differences:\n%s\nwant (besides refs to Role):\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(got) == len(rest) {
		t.Error("no unresolved refs to the deleted Role reported")
	}
}
