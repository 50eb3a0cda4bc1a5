package protocol_test

import (
	"testing"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
)

// toolSchemas are tool schemas as app derives them from Go types
// (invopop/jsonschema: $defs and $ref, bounds, enums, nullable slices) and
// as users write them by hand.
var toolSchemas = []string{
	`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"],"additionalProperties":false}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"#/$defs/In","$defs":{"In":{"type":"object",
		"properties":{"city":{"type":"string","minLength":1,"maxLength":20},"days":{"type":"integer","minimum":1,"maximum":7,"default":3},
		"unit":{"type":"string","enum":["C","F","K"]},"tags":{"type":["array","null"],"items":{"type":"string"},"maxItems":3},
		"where":{"$ref":"#/$defs/Point"}},"required":["city"],"additionalProperties":false},
		"Point":{"type":"object","properties":{"lat":{"type":"number","minimum":-90,"maximum":90},"lon":{"type":"number"}},"required":["lat","lon"]}}}`,
	`{"type":"object","properties":{"node":{"$ref":"#/$defs/Node"}},"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"site":{"type":"string","format":"uri"},"when":{"type":"string","format":"date-time"},"ok":{"const":true},"n":{"const":2}},"additionalProperties":{"type":"integer"}}`,
	`{"anyOf":[{"type":"string","minLength":2},{"type":"integer","minimum":10}]}`,
	`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]+$"}}}`, // pattern: not taught, v6 alone
	`{"type":"object","properties":{"t":{"type":"string","format":"uri-template"}}}`,
	`{"$defs":{"A":{"$ref":"#/$defs/B"},"B":{"$ref":"#/$defs/A"}},"properties":{"x":{"$ref":"#/$defs/A"}}}`, // a cycle: v6 alone
	`{"type":"object","properties":{"child":{"$ref":"#"},"n":{"type":"integer"}}}`,                          // recursion through a member
}

var toolInstances = []string{
	`{}`, `{"text":"hi"}`, `{"text":5}`, `{"text":"hi","x":1}`, `null`, `[]`, `"ab"`, `"a"`, `10`, `9`, `10.0`, `1e1`,
	`{"city":"Oslo"}`, `{"city":""}`, `{"city":"Oslo","days":7}`, `{"city":"Oslo","days":8}`, `{"city":"Oslo","days":1.0}`,
	`{"city":"Oslo","unit":"C"}`, `{"city":"Oslo","unit":"X"}`, `{"city":"Oslo","tags":null}`, `{"city":"Oslo","tags":["a","b","c","d"]}`,
	`{"city":"Oslo","where":{"lat":91,"lon":0}}`, `{"city":"Oslo","where":{"lat":45.5,"lon":10}}`, `{"city":"Oslo","where":{"lat":45.5}}`,
	`{"city":"Oslo","where":{"lat":89.99999999999999999,"lon":0}}`,
	`{"node":{"name":"a","kids":[{"name":"b","kids":[]},{"kids":[]}]}}`, `{"node":{"name":"a","kids":[{"name":"b"}]}}`,
	`{"site":"https://example.com/a"}`, `{"site":"not a uri"}`, `{"site":"http://[::1]/"}`, `{"when":"2026-12-02T01:00:00Z"}`, `{"when":"yesterday"}`,
	`{"ok":true}`, `{"ok":false}`, `{"n":2}`, `{"n":2.0}`, `{"other":3}`, `{"other":"x"}`, `{"code":"ABC"}`, `{"code":"abc"}`,
	`{"city":"Ωmega-city-with-20-ch"}`, `{"city":"Ωmega-city-with-20-c"}`,
	`{"t":"%zz"}`, `{"t":"a%"}`, `{"t":"http://h:port/{x}"}`, `{"t":"conversation://{id}"}`, `{"x":1}`,
	`{"child":{"child":{"n":1}},"n":2}`, `{"child":{"n":"x"}}`, `{"where":{"lat":-1e-400,"lon":0},"city":"x"}`,
}

// A tool schema's compiled check calls a value valid only where the
// reference does, and is sure of the valid values where it knows every
// keyword.
func TestSchemaSurely(t *testing.T) {
	for i, doc := range toolSchemas {
		tree, err := jsontree.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		s, err := protocol.CompileSchema("tool", tree)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range toolInstances {
			v, err := jsontree.Parse([]byte(in))
			if err != nil {
				t.Fatal(err)
			}
			surely, valid := s.SurelyValid(v), s.ReferenceValidate(v) == nil
			if surely && !valid {
				t.Errorf("schema %d, %s: called valid, the reference refuses it", i, in)
			}
			if valid && !surely && s.Taught() && !leftToReference[in] {
				t.Errorf("schema %d, %s: valid, and the check was not sure", i, in)
			}
		}
	}
}

// leftToReference are values the checks give up on by design.
var leftToReference = map[string]bool{
	`{"city":"Oslo","days":1.0}`: true, `10.0`: true, `1e1`: true, `{"when":"2026-12-02T01:00:00Z"}`: true, `{"n":2.0}`: true,
	`{"city":"Oslo","where":{"lat":89.99999999999999999,"lon":0}}`: true, `{"site":"http://[::1]/"}`: true,
	`{"where":{"lat":-1e-400,"lon":0},"city":"x"}`: true,
}

// FuzzSchemaSurely holds the compiled checks of the tool schemas above to
// the reference on fuzzed values.
func FuzzSchemaSurely(f *testing.F) {
	for _, in := range toolInstances {
		f.Add([]byte(in))
	}
	var schemas []*protocol.Schema
	for _, doc := range toolSchemas {
		tree, err := jsontree.Parse([]byte(doc))
		if err != nil {
			f.Fatal(err)
		}
		s, err := protocol.CompileSchema("tool", tree)
		if err != nil {
			f.Fatal(err)
		}
		schemas = append(schemas, s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := jsontree.Parse(data)
		if err != nil {
			return
		}
		for i, s := range schemas {
			if s.SurelyValid(v) && s.ReferenceValidate(v) != nil {
				t.Errorf("schema %d, %s: called valid, the reference refuses it: %v", i, data, s.ReferenceValidate(v))
			}
		}
	})
}
