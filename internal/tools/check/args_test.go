package check

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/protocol"
)

// argSets makes valid sets the schema accepts and invalid ones that each
// break the keyword they name.
func TestArgSets(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		valid  int      // how many valid sets
		broke  []string // the keywords the invalid sets break, in order
		note   string   // words of the note, when no valid set can be made
	}{
		{"empty object", `{"type":"object"}`, 1, nil, ""},
		{"required string with bounds", `{"type":"object","properties":{"city":{"type":"string","minLength":2,"maxLength":8}},"required":["city"],"additionalProperties":false}`,
			1, []string{"required", "type", "maxLength", "additionalProperties", "minLength"}, ""},
		{"optional members", `{"type":"object","properties":{"n":{"type":"integer","minimum":3,"maximum":5},"unit":{"enum":["C","F"]}}}`,
			2, []string{"type", "maximum", "enum", "minimum"}, ""},
		{"defaults and examples first", `{"type":"object","properties":{"q":{"type":"string","examples":["weather"]},"k":{"type":"integer","default":7}},"required":["q","k"]}`,
			1, []string{"required", "type", "required", "type"}, ""},
		{"formats", `{"type":"object","properties":{"when":{"type":"string","format":"date-time"},"mail":{"type":"string","format":"email"}},"required":["when","mail"]}`,
			1, []string{"required", "type", "required", "type"}, ""},
		{"nested and arrays", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},"opts":{"type":"object","properties":{"x":{"type":"boolean"}},"required":["x"]}},"required":["tags","opts"]}`,
			1, []string{"required", "type", "maxItems", "required", "type", "minItems"}, ""},
		{"refs", `{"type":"object","$defs":{"id":{"type":"string","pattern":"^[a-z]+$"}},"properties":{"id":{"$ref":"#/$defs/id"}},"required":["id"]}`,
			1, []string{"required", "type"}, ""},
		{"unsolvable pattern", `{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]{3}-[A-Z]{2}$"}},"required":["code"]}`,
			0, nil, "no valid arguments"},
		{"type union is not broken by a string", `{"type":"object","properties":{"v":{"type":["string","number"]}},"required":["v"]}`,
			1, []string{"required", "type"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var schema map[string]any
			if err := json.Unmarshal([]byte(tt.schema), &schema); err != nil {
				t.Fatal(err)
			}
			sets, note := argSets("t", schema)
			if tt.note != "" || note != "" {
				if !strings.Contains(note, tt.note) || tt.note == "" {
					t.Fatalf("note %q, want one saying %q", note, tt.note)
				}
			}
			compiled, err := protocol.CompileSchema("t", schema, protocol.FormatAsAnnotation())
			if err != nil {
				t.Fatal(err)
			}
			valid := 0
			var broke []string
			for _, s := range sets {
				err := compiled.Validate(s.args)
				switch {
				case s.valid && err != nil:
					t.Errorf("valid set %v fails its schema: %v", s.args, err)
				case !s.valid && err == nil:
					t.Errorf("invalid set %v (%s) passes its schema", s.args, s.broke)
				}
				if s.valid {
					valid++
				} else {
					kw, _, _ := strings.Cut(s.broke, ":")
					broke = append(broke, kw)
				}
			}
			if valid != tt.valid || strings.Join(broke, ",") != strings.Join(tt.broke, ",") {
				t.Errorf("%d valid sets, invalid ones breaking %v; want %d and %v", valid, broke, tt.valid, tt.broke)
			}
		})
	}
}

// FuzzArgSets: for any schema, argSets does not panic, every valid set it
// makes passes the schema and every invalid one fails it.
func FuzzArgSets(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"city":{"type":"string","maxLength":8}},"required":["city"],"additionalProperties":false}`,
		`{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":0,"multipleOf":3}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"type":"array","items":{"enum":[1,2]}}]}},"required":["a"]}`,
		`{"type":"object","properties":{"r":{"$ref":"#"}},"required":["r"]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var schema map[string]any
		if json.Unmarshal([]byte(doc), &schema) != nil {
			return
		}
		compiled, err := protocol.CompileSchema("t", schema, protocol.FormatAsAnnotation())
		if err != nil {
			return
		}
		sets, _ := argSets("t", schema)
		for _, s := range sets {
			if err := compiled.Validate(s.args); s.valid != (err == nil) {
				t.Fatalf("set %v (valid %v, %s): validation says %v", s.args, s.valid, s.broke, err)
			}
		}
	})
}

// A tool schema of thousands of members costs the check what breaking a
// few of them costs: each invalid set is a copy of the base, and only
// those tried are made (it made one for every member first: tens of
// gigabytes for a schema that fits in one tools/list).
func TestManyMembersAreNotAllCopied(t *testing.T) {
	const n = 2000
	props, req := map[string]any{}, []any{}
	for i := range n {
		name := fmt.Sprintf("m%04d", i)
		props[name] = map[string]any{"type": "string", "maxLength": 4}
		req = append(req, name)
	}
	schema := map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sets, note := argSets("wide", schema)
	runtime.ReadMemStats(&after)
	if note != "" || len(sets) < 2 {
		t.Fatalf("%d sets, note %q", len(sets), note)
	}
	invalid := 0
	for _, s := range sets {
		if !s.valid {
			invalid++
		}
	}
	if invalid == 0 || invalid > maxInvalid {
		t.Errorf("%d invalid sets, want 1 to %d", invalid, maxInvalid)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("making the sets allocated %d MiB", got>>20)
	}
}
