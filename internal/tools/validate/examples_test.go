package validate

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mcpstack/mcpstack/internal/sharedtest"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

// examplesRevision is the revision whose official examples the shared
// folder holds (examples/<Definition>/*.json).
const examplesRevision = "2026-07-28"

// refsOf lists the definitions a union definition's anyOf references.
func refsOf(t *testing.T, rev, def string) map[string]bool {
	t.Helper()
	files, err := schema.Files(rev)
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(schema.FS, files[def])
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		AnyOf []struct {
			Ref string `json:"$ref"`
		} `json:"anyOf"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, r := range doc.AnyOf {
		out[strings.TrimSuffix(path.Base(r.Ref), ".json")] = true
	}
	return out
}

// TestOfficialExamples puts every official example message of 2026-07-28
// into a log in the role it has on the wire and validates the log:
// requests and notifications go the way the method table says (after a
// request that opens the id or progress token they refer to), results
// answer a request of their method, *ResultResponse messages answer their
// request, errors answer a request, input requests ride in an
// input-required result and input responses in the retried tools/call.
// Examples of definitions that are not messages (content blocks,
// capabilities, ...) are validated against their definition. No example
// may give a finding (a request left unanswered excepted). The examples are
// read from ../shared, not copied.
func TestOfficialExamples(t *testing.T) {
	dir := sharedtest.Path(t, "mcp-spec", examplesRevision, "examples")
	rev := lookupRevision(examplesRevision)
	if rev == nil || rev.err != nil {
		t.Fatalf("revision %s: %v", examplesRevision, rev)
	}
	spec := rev.spec
	byRequest, byResult, byResponse := map[string]string{}, map[string]string{}, map[string]string{}
	var mrtr []string // methods whose response may be input-required
	for _, m := range spec.Methods {
		name := m.Name
		byRequest[m.Request] = name
		if m.Result != "" {
			byResult[m.Result] = name
			byResponse[m.Result+"Response"] = name
			if refsOf2(t, rev, m.Result+"Response")["InputRequiredResult"] {
				mrtr = append(mrtr, name)
			}
		}
	}
	sort.Strings(mrtr)
	inputRequest := refsOf(t, examplesRevision, "InputRequest")
	inputResponse := refsOf(t, examplesRevision, "InputResponse")
	meta := map[string]any{
		wire.MetaProtocolVersion:    examplesRevision,
		wire.MetaClientCapabilities: map[string]any{"sampling": map[string]any{"tools": map[string]any{}}, "roots": map[string]any{}, "elicitation": map[string]any{"form": map[string]any{}, "url": map[string]any{}}},
	}
	// requestOf is a request for method: its official example when there
	// is one, with the id given.
	requestOf := func(method string, id any) map[string]any {
		m, _ := spec.Method(method)
		def := m.Request
		if files, _ := filepath.Glob(filepath.Join(dir, def, "*.json")); len(files) > 0 {
			var req map[string]any
			b, _ := os.ReadFile(files[0])
			if json.Unmarshal(b, &req) == nil {
				req["id"] = id
				// Declare every client capability, so that what the
				// server may ask for in an input-required result is known.
				if p, ok := req["params"].(map[string]any); ok {
					if m, ok := p["_meta"].(map[string]any); ok {
						m[wire.MetaClientCapabilities] = meta[wire.MetaClientCapabilities]
					}
				}
				return req
			}
		}
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": map[string]any{"_meta": meta}}
	}
	opener := func(id any, token any) map[string]any {
		m := map[string]any{}
		for k, v := range meta {
			m[k] = v
		}
		if token != nil {
			m["progressToken"] = token
		}
		return map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": map[string]any{"_meta": m}}
	}
	roles := map[string]int{}
	defs, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defs {
		if !d.IsDir() {
			continue
		}
		typ := d.Name()
		files, _ := filepath.Glob(filepath.Join(dir, typ, "*.json"))
		for _, file := range files {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var ex any
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.UseNumber()
			if err := dec.Decode(&ex); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			obj, _ := ex.(map[string]any)
			params, _ := obj["params"].(map[string]any)
			type line struct {
				dir string
				msg any
			}
			var log []line
			role := ""
			switch {
			case byRequest[typ] != "":
				m, _ := spec.Method(byRequest[typ])
				sender := "c2s"
				if !m.ClientToServer {
					sender = "s2c"
				}
				role = "message " + sender
				if rid, ok := params["requestId"]; ok {
					log = append(log, line{sender, opener(rid, nil)}) // cancellation goes the way of the request
				}
				if tok, ok := params["progressToken"]; ok && sender == "s2c" {
					log = append(log, line{"c2s", opener("progress-opener", tok)})
				} else if sender == "s2c" && len(log) == 0 {
					log = append(log, line{"c2s", opener("revision-opener", nil)}) // the request that tells the revision
				}
				log = append(log, line{sender, ex})
			case byResult[typ] != "":
				role = "result"
				log = append(log, line{"c2s", requestOf(byResult[typ], "ex-1")},
					line{"s2c", map[string]any{"jsonrpc": "2.0", "id": "ex-1", "result": ex}})
			case byResponse[typ] != "":
				role = "response"
				log = append(log, line{"c2s", requestOf(byResponse[typ], obj["id"])}, line{"s2c", ex})
			case typ == "InputRequiredResult":
				role = "input-required result"
				for i, method := range mrtr {
					id := "ex-" + method
					_ = i
					log = append(log, line{"c2s", requestOf(method, id)},
						line{"s2c", map[string]any{"jsonrpc": "2.0", "id": id, "result": ex}})
				}
			case inputRequest[typ] || typ == "InputRequests":
				role = "input request"
				reqs := ex
				if typ != "InputRequests" {
					reqs = map[string]any{"k": ex}
				}
				log = append(log, line{"c2s", requestOf("tools/call", "ex-1")},
					line{"s2c", map[string]any{"jsonrpc": "2.0", "id": "ex-1", "result": map[string]any{"resultType": "input_required", "inputRequests": reqs}}})
			case inputResponse[typ] || typ == "InputResponses":
				role = "input response"
				resp := ex
				if typ != "InputResponses" {
					resp = map[string]any{"k": ex}
				}
				req := requestOf("tools/call", "ex-1")
				req["params"].(map[string]any)["inputResponses"] = resp
				log = append(log, line{"c2s", req})
			case obj["jsonrpc"] != nil && obj["error"] != nil:
				role = "error response"
				log = append(log, line{"c2s", opener(obj["id"], nil)}, line{"s2c", ex})
			case obj["code"] != nil && obj["message"] != nil:
				role = "error"
				log = append(log, line{"c2s", opener("ex-1", nil)},
					line{"s2c", map[string]any{"jsonrpc": "2.0", "id": "ex-1", "error": ex}})
			default:
				role = "definition"
				if err := rev.v.Validate(typ, ex); err != nil {
					t.Errorf("%s: %v", file, err)
				}
			}
			roles[role]++
			if len(log) == 0 {
				continue
			}
			var buf bytes.Buffer
			for _, l := range log {
				b, err := json.Marshal(map[string]any{"dir": l.dir, "msg": l.msg})
				if err != nil {
					t.Fatal(err)
				}
				buf.Write(append(b, '\n'))
			}
			name := filepath.ToSlash(filepath.Join(typ, filepath.Base(file)))
			rep := checkBytes(t, name, buf.Bytes())
			var got []string
			for _, f := range rep.Findings {
				if f.Rule != RuleUnanswered {
					f.Side = "" // the known findings are written without it
					got = append(got, f.String())
				}
			}
			if want, known := upstreamExampleFindings[name]; known {
				if len(got) != 1 || !strings.Contains(got[0], want) {
					t.Errorf("%s as %s: want only the known finding %q, got %q (fixed upstream? drop it from upstreamExampleFindings)", name, role, want, got)
				}
				continue
			}
			for _, g := range got {
				t.Errorf("%s as %s: %s", name, role, g)
			}
		}
	}
	if roles["message c2s"] == 0 || roles["result"] == 0 || roles["response"] == 0 || roles["error"]+roles["error response"] == 0 {
		t.Errorf("roles exercised: %v", roles)
	}
	t.Logf("official examples by role: %v", roles)
}

// upstreamExampleFindings are official examples that are wrong, with the
// finding they get. read-resource-result-response.json says resultType
// "complete" but lacks ttlMs and cacheScope, which ReadResourceResult
// requires; the official schema accepts it only because the anyOf of
// ReadResourceResultResponse also offers InputRequiredResult, which
// requires nothing but resultType. The validator dispatches on resultType
// (a complete result is the method's result), so it reports it.
var upstreamExampleFindings = map[string]string{
	"ReadResourceResultResponse/read-resource-result-response.json": "result-schema at /result/cacheScope: missing properties 'cacheScope', 'ttlMs'",
}

// refsOf2 is refsOf for a definition that may not exist.
func refsOf2(t *testing.T, rev *revision, def string) map[string]bool {
	if !rev.has(def) {
		return nil
	}
	files, err := schema.Files(rev.name())
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.ReadFile(schema.FS, files[def])
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, name := range []string{"InputRequiredResult"} {
		if bytes.Contains(b, []byte("/"+name+".json")) {
			out[name] = true
		}
	}
	return out
}
