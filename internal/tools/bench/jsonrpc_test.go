package bench

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestRequestBuilder(t *testing.T) {
	text := newText(100)
	stampText(text, 123)
	if !strings.HasPrefix(string(text), "000000000123") || len(text) != 100 {
		t.Errorf("stamped text %q", text)
	}
	short := newText(3)
	stampText(short, 98765)
	if string(short) != "765" {
		t.Errorf("short stamped text %q", short)
	}
	for _, rb := range []requestBuilder{{version: "2025-11-25"}, {version: "2026-07-28", modern: true}} {
		for name, b := range map[string][]byte{
			"initialize":  rb.initialize(nil, 1),
			"initialized": rb.initialized(nil),
			"call":        rb.call(nil, 42, text),
		} {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatalf("%s (%s): %v: %s", name, rb.version, err, b)
			}
			if m["jsonrpc"] != "2.0" {
				t.Errorf("%s: %s", name, b)
			}
		}
		var call struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
			Params struct {
				Name      string            `json:"name"`
				Arguments map[string]string `json:"arguments"`
				Meta      map[string]any    `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(rb.call(nil, 42, text), &call); err != nil {
			t.Fatal(err)
		}
		if call.ID != 42 || call.Method != "tools/call" || call.Params.Name != "echo" || call.Params.Arguments["text"] != string(text) {
			t.Errorf("call %+v", call)
		}
		if rb.modern != (call.Params.Meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28") {
			t.Errorf("modern %v, _meta %v", rb.modern, call.Params.Meta)
		}
	}
	if isModern("2025-11-25") || !isModern("2026-07-28") || !isModern("2027-01-01") {
		t.Error("isModern")
	}
}

func TestDecodeMessage(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		match bool
		kind  string // error kind, "" for none
	}{
		{"response", `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`, true, ""},
		{"response with spaces in id", `{"jsonrpc":"2.0","id": 7 ,"result":{}}`, true, ""},
		{"other id", `{"jsonrpc":"2.0","id":8,"result":{}}`, false, ""},
		{"string id", `{"jsonrpc":"2.0","id":"7","result":{}}`, false, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, false, ""},
		{"server request with the same id", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, false, ""},
		{"error", `{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}`, true, errRPC},
		{"neither result nor error", `{"jsonrpc":"2.0","id":7}`, true, errMalformed},
		{"not JSON", `{"jsonrpc":`, false, errMalformed},
		{"empty", ``, false, errMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var m rpcMessage
			match, err := decodeMessage([]byte(tt.in), 7, &m)
			if match != tt.match {
				t.Errorf("match = %v, want %v", match, tt.match)
			}
			kind := ""
			if err != nil {
				kind = err.kind
			}
			if kind != tt.kind {
				t.Errorf("error %v, want kind %q", err, tt.kind)
			}
		})
	}
}

func TestCheckEcho(t *testing.T) {
	tests := []struct {
		name string
		res  rpcResult
		kind string
	}{
		{"ok", rpcResult{Content: []textContent{{"text", "hi"}}}, ""},
		{"isError", rpcResult{Content: []textContent{{"text", "hi"}}, IsError: true}, errToolError},
		{"other text", rpcResult{Content: []textContent{{"text", "ho"}}}, errContent},
		{"two items", rpcResult{Content: []textContent{{"text", "hi"}, {"text", "hi"}}}, errContent},
		{"no content", rpcResult{}, errContent},
		{"not text", rpcResult{Content: []textContent{{"image", ""}}}, errContent},
	}
	for _, tt := range tests {
		err := checkEcho(&tt.res, []byte("hi"))
		kind := ""
		if err != nil {
			kind = err.kind
		}
		if kind != tt.kind {
			t.Errorf("%s: %v, want kind %q", tt.name, err, tt.kind)
		}
	}
}
