package protocol_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

func TestValidatorErrors(t *testing.T) {
	v, err := protocol.NewValidator(schema.FS, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, def, msg string
		pointer        string
	}{
		{"missing name", "CallToolRequest", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`, "/params/name"},
		{"wrong type", "CallToolRequest", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}`, "/params/name"},
		{"null id", "CallToolRequest", `{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"x"}}`, "/id"},
		{"text block without text", "CallToolResult", `{"content":[{"type":"text"}]}`, "/content/0/text"},
		{"unknown block type", "CallToolResult", `{"content":[{"type":"bogus"}]}`, "/content/0"},
		{"bad log level", "SetLevelRequest", `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}`, "/params/level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree, err := jsontree.Parse([]byte(tt.msg))
			if err != nil {
				t.Fatal(err)
			}
			err = v.Validate(tt.def, tree)
			var ve *wire.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate = %v, want *ValidationError", err)
			}
			if ve.Pointer != tt.pointer || ve.Reason == "" {
				t.Errorf("pointer %q reason %q, want pointer %q", ve.Pointer, ve.Reason, tt.pointer)
			}
			e := wire.InvalidParams(err)
			data := e.Data.(map[string]any)
			if e.Code != -32602 || data["field"] != tt.pointer || data["reason"] != ve.Reason {
				t.Errorf("InvalidParams = %+v", e)
			}
		})
	}
	if err := v.Validate("NoSuchDefinition", map[string]any{}); err == nil {
		t.Error("unknown definition validated")
	}
}

func TestURITemplateFormat(t *testing.T) {
	v, err := protocol.NewValidator(schema.FS, "2025-06-18")
	if err != nil {
		t.Fatal(err)
	}
	for tmpl, ok := range map[string]bool{
		"conversation://{id}": true, "file:///{+path}{?q,lang}": true, "x://{var:3}/{list*}": true,
		"x://{": false, "x://}": false, "x://{}": false, "x://{a b}": false, "x://{a:0}": false,
	} {
		tree := map[string]any{"uriTemplate": tmpl, "name": "n"}
		if err := v.Validate("ResourceTemplate", tree); (err == nil) != ok {
			t.Errorf("%q: valid %v, want %v (%v)", tmpl, err == nil, ok, err)
		}
	}
}

// Where the official JSON says integer but the normative TypeScript says
// number (and null, for JSONValue), schema/ follows the TypeScript: a
// third-party client answering a NumberSchema field with its default 3.14
// is right (schema/<rev>/differences.json says why).
func TestNumbersFollowTheTypeScript(t *testing.T) {
	for _, tc := range []struct {
		rev, def, doc string
		valid         bool
	}{
		{"2025-06-18", "ElicitResult", `{"action":"accept","content":{"n":3.14}}`, true},
		{"2025-11-25", "ElicitResult", `{"action":"accept","content":{"n":3.14,"tags":["a"]}}`, true},
		{"2026-07-28", "ElicitResult", `{"action":"accept","content":{"n":-0.5}}`, true},
		{"2025-11-25", "ElicitResult", `{"action":"accept","content":{"n":{"x":1}}}`, false},
		{"2026-07-28", "JSONValue", `{"a":null,"b":[1.5,null],"c":{"d":true}}`, true},
	} {
		v, err := protocol.NewValidator(schema.FS, tc.rev)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := jsontree.Parse([]byte(tc.doc))
		if err != nil {
			t.Fatal(err)
		}
		if err := v.Validate(tc.def, tree); (err == nil) != tc.valid {
			t.Errorf("%s %s %s: valid %v, want %v (%v)", tc.rev, tc.def, tc.doc, err == nil, tc.valid, err)
		}
	}
}

// A schema from elsewhere (a server's tool schema, which mcpstack check
// compiles) loads nothing outside itself: the library's default loader
// reads file: URLs, which would let a server have the check read any
// local file, or wait for ever on /dev/stdin. References inside the
// schema, and the dialects' metaschemas, still resolve.
func TestCompileSchemaLoadsNothing(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(secret, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		doc  string
		ok   bool
	}{
		{"a local file", `{"type":"object","properties":{"x":{"$ref":"file://` + secret + `"}}}`, false},
		{"stdin", `{"type":"object","properties":{"x":{"$ref":"file:///dev/stdin"}}}`, false},
		{"a local file as $schema", `{"$schema":"file://` + secret + `","type":"object"}`, false},
		{"a reference inside", `{"type":"object","properties":{"x":{"$ref":"#/$defs/s"}},"$defs":{"s":{"type":"string"}}}`, true},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, true},
		{"2020-12", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := jsontree.Parse([]byte(tt.doc))
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := protocol.CompileSchema("tool x inputSchema", doc)
				done <- err
			}()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("compiling waited for ever (on stdin?)")
			}
			if (err == nil) != tt.ok {
				t.Errorf("compiled: %v, want ok %v", err, tt.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "references are not loaded") {
				t.Errorf("error %q does not say the reference is not loaded", err)
			}
		})
	}
}
