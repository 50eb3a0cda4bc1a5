package protocol_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/schema"
)

// A layer's files count as the revision's: a reference ../shared/Id.json
// from a layered file names the revision's Id, and a layer may not
// redefine one of the revision's definitions.
func TestValidatorLayers(t *testing.T) {
	id := `{"title": "Id", "type": "string"}`
	probe := `{"title": "Probe", "type": "object", "properties": {"id": {"$ref": "../shared/Id.json"}}, "required": ["id"]}`
	fsys := fstest.MapFS{
		"rev/shared/Id.json":           {Data: []byte(id)},
		"ext/x/extension.json":         {Data: []byte(`{"id": "x"}`)},
		"ext/x/request/Probe.json":     {Data: []byte(probe)},
		"dup/x/extension.json":         {Data: []byte(`{"id": "x"}`)},
		"dup/x/shared/Id.json":         {Data: []byte(id)},
		"dup/x/request/Elsewhere.json": {Data: []byte(probe)},
	}
	v, err := protocol.NewValidator(fsys, "rev", "ext/x")
	if err != nil {
		t.Fatal(err)
	}
	if !v.Has("Probe") || v.Has("extension") {
		t.Fatalf("definitions %v, want Id and Probe", v.Definitions())
	}
	for _, c := range []struct {
		value any
		ok    bool
	}{
		{map[string]any{"id": "a"}, true},
		{map[string]any{"id": 1}, false}, // Id of rev is a string
		{map[string]any{}, false},
	} {
		if err := v.Validate("Probe", c.value); (err == nil) != c.ok {
			t.Errorf("Validate(Probe, %v) = %v, want ok %v", c.value, err, c.ok)
		}
	}
	if _, err := protocol.NewValidator(fsys, "rev", "dup/x"); err == nil || !strings.Contains(err.Error(), "redefines Id") {
		t.Errorf("a layer redefining Id: err %v, want redefines Id", err)
	}
}

// A union none of whose branches has the value's discriminator says so in
// the protocol's terms, not "anyOf failed".
func TestNoBranchReason(t *testing.T) {
	fsys := fstest.MapFS{
		"rev/Text.json":  {Data: []byte(`{"type":"object","properties":{"type":{"const":"text"},"text":{"type":"string"}},"required":["type","text"]}`)},
		"rev/Image.json": {Data: []byte(`{"type":"object","properties":{"type":{"const":"image"},"data":{"type":"string"}},"required":["type","data"]}`)},
		"rev/Block.json": {Data: []byte(`{"anyOf":[{"$ref":"Text.json"},{"$ref":"Image.json"}]}`)},
		"rev/One.json":   {Data: []byte(`{"oneOf":[{"$ref":"Text.json"},{"$ref":"Image.json"}]}`)},
	}
	v, err := protocol.NewValidator(fsys, "rev")
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate("Block", map[string]any{"type": "audio", "data": "x"})
	if err == nil || !strings.Contains(err.Error(), `"audio" is not one of the "type" values allowed here: image, text`) {
		t.Errorf("err %v", err)
	}
	err = v.Validate("Block", map[string]any{"type": "text"})
	if err == nil || !strings.Contains(err.Error(), "missing property 'text'") {
		t.Errorf("the closest branch's reason: %v", err)
	}
	err = v.Validate("One", map[string]any{"type": "audio", "data": "x"})
	if err == nil || !strings.Contains(err.Error(), `"audio" is not one of the "type" values allowed here: image, text`) {
		t.Errorf("oneOf: %v", err)
	}
	// The real thing: audio content, which 2024-11-05 does not have.
	real, err := protocol.NewValidator(schema.FS, "2024-11-05")
	if err != nil {
		t.Fatal(err)
	}
	err = real.Validate("CallToolResult", map[string]any{"content": []any{map[string]any{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}}})
	if err == nil || !strings.Contains(err.Error(), `"audio" is not one of the "type" values allowed here: image, resource, text`) {
		t.Errorf("audio in 2024-11-05: %v", err)
	}
}
