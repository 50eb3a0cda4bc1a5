package proxy

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// One remote address holds at most its share (a quarter) of the request
// bodies' budget: past it, its next POST gets 503 with Retry-After at
// once, from another connection (another port) too, while a POST from
// another address, of as much, still passes; once its held body is in,
// its share is whole again. (The budget was first come, first served:
// the address's second POST passed too, and enough of them kept every
// other client's at 503.)
func TestHTTPClientShare(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"got":%d}}`, len(b))
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	tp, _ := newTap(io.Discard, false, io.Discard)
	limits := defaultLimits
	limits.bodyMemory = 1 << 20 // a share of 256 KiB
	p := newHandler(u, nil, tp, limits)
	pad := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", n) + `"}}`
	}
	post := func(remote string, body io.Reader, n int) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", body)
		req.RemoteAddr, req.ContentLength = remote, int64(n)
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		p.ServeHTTP(w, req)
		return w
	}
	passes := func(what string, w *httptest.ResponseRecorder, n int) {
		t.Helper()
		if want := fmt.Sprintf(`"got":%d`, n); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("%s: status %d, %.100s; want 200 and %s", what, w.Code, w.Body.String(), want)
		}
	}
	// 192.0.2.1 holds a body of 240 KiB, all but its last bytes in.
	held := pad(240 << 10)
	pr, pw := io.Pipe()
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- post("192.0.2.1:40001", pr, len(held)) }()
	go func() { _, _ = io.WriteString(pw, held[:len(held)-10]) }()
	waitFor(t, "the first body to be held", func() bool { return p.requests.remaining() <= 1<<20-240<<10 })
	if w := post("192.0.2.1:40002", strings.NewReader(pad(100<<10)), len(pad(100<<10))); w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("a second POST of the same address past its share: status %d, Retry-After %q; want 503 and one", w.Code, w.Header().Get("Retry-After"))
	}
	passes("a POST of another address", post("192.0.2.2:40001", strings.NewReader(pad(200<<10)), len(pad(200<<10))), len(pad(200<<10)))
	passes("a POST of another address, IPv6", post("[2001:db8::1]:40001", strings.NewReader(pad(200<<10)), len(pad(200<<10))), len(pad(200<<10)))
	_, _ = io.WriteString(pw, held[len(held)-10:])
	pw.Close()
	passes("the held body, once in", <-first, len(held))
	passes("the address again, its body in", post("192.0.2.1:40003", strings.NewReader(pad(200<<10)), len(pad(200<<10))), len(pad(200<<10)))
	waitFor(t, "the budget to be whole again", func() bool { return p.requests.remaining() == 1<<20 })
}

// --redact looks inside a resource's base64 blob whose mimeType is JSON
// or text: through the proxy, a resources/read result whose JSON blob
// holds a password is recorded with the blob holding the masked JSON,
// base64 still, and the client gets the answer as it was. (The blob was
// recorded as it came, the secret in it.)
func TestRedactJSONBlobThroughProxy(t *testing.T) {
	blob := base64.StdEncoding.EncodeToString([]byte(`{"password":"hunter2","user":"u"}`))
	answer := `{"jsonrpc":"2.0","id":1,"result":{"contents":[{"uri":"file:///creds.json","mimeType":"application/json","blob":"` + blob + `"}]}}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL + "/mcp")
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard, "password")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///creds.json"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != answer {
		t.Errorf("the client got %s, want the answer as it was", got)
	}
	front.Close()
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	recorded := rec.String()
	if strings.Contains(recorded, "hunter2") || strings.Contains(recorded, blob) {
		t.Fatalf("the secret, or the blob holding it, is in the recording:\n%s", recorded)
	}
	var line struct {
		Msg struct {
			Result struct {
				Contents []struct{ URI, MimeType, Blob string }
			}
		}
	}
	for _, l := range strings.Split(strings.TrimSpace(recorded), "\n") {
		if strings.Contains(l, `"dir":"s2c"`) {
			if err := json.Unmarshal([]byte(l), &line); err != nil {
				t.Fatal(err)
			}
		}
	}
	c := line.Msg.Result.Contents
	if len(c) != 1 || c[0].URI != "file:///creds.json" || c[0].MimeType != "application/json" {
		t.Fatalf("recorded contents %+v", c)
	}
	if dec, err := base64.StdEncoding.DecodeString(c[0].Blob); err != nil || string(dec) != `{"password":"[redacted]","user":"u"}` {
		t.Errorf("the recorded blob decodes to %q (%v), want the masked JSON", dec, err)
	}
}

// Which blobs --redact looks into: every one whose bytes are text,
// whatever its mimeType says (it may lie, or say nothing), decoded (white
// space dropped), masked as strings are and encoded again (as they were
// encoded); one that is not base64 is masked whole; binary ones (an
// image) and those that hold nothing named are kept as they came.
func TestRedactBlobs(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString
	raw := base64.RawURLEncoding.EncodeToString
	for _, tc := range []struct {
		name, mimeType, blob string
		want                 string // the blob recorded, decoded (as the blob came: not base64)
		decode               func(string) ([]byte, error)
	}{
		{"JSON", "application/json", b64([]byte(`{"password":"SECRET-1"}`)), `{"password":"[redacted]"}`, base64.StdEncoding.DecodeString},
		{"+json, with parameters", "application/vnd.api+json; charset=utf-8", b64([]byte(`{"a":{"PASSWORD":"SECRET-2"}}`)), `{"a":{"PASSWORD":"[redacted]"}}`, base64.StdEncoding.DecodeString},
		{"JSON Lines in text", "text/plain", b64([]byte("{\"password\":\"SECRET-3\"}\n{\"password\":\"SECRET-4\"}\n")), "{\"password\":\"[redacted]\"}\n{\"password\":\"[redacted]\"}\n", base64.StdEncoding.DecodeString},
		{"text naming a member, not JSON", "text/markdown", b64([]byte("config: {'password': 'SECRET-5'}")), redacted, base64.StdEncoding.DecodeString},
		{"unpadded URL base64", "application/json", raw([]byte(`{"password":"SECRET-6?>"}`)), `{"password":"[redacted]"}`, base64.RawURLEncoding.DecodeString},
		{"a blob in a blob", "application/json", b64(fmt.Appendf(nil, `{"contents":[{"mimeType":"text/json","blob":%q}]}`, b64([]byte(`{"password":"SECRET-7"}`)))),
			fmt.Sprintf(`{"contents":[{"blob":%q,"mimeType":"text/json"}]}`, b64([]byte(`{"password":"[redacted]"}`))), base64.StdEncoding.DecodeString},
		{"not base64, naming a member", "application/json", `{"password":"SECRET-8"}`, redacted, nil},
		{"nothing named", "application/json", b64([]byte(`{"user":"u"}`)), `{"user":"u"}`, base64.StdEncoding.DecodeString},
		{"an image", "image/png", b64([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe")), "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", base64.StdEncoding.DecodeString},
		// the mimeType may lie or say nothing: text is read whatever it says
		{"JSON called an image", "image/png", b64([]byte(`{"password":"SECRET-9"}`)), `{"password":"[redacted]"}`, base64.StdEncoding.DecodeString},
		{"no mimeType", "", b64([]byte(`{"password":"SECRET-10"}`)), `{"password":"[redacted]"}`, base64.StdEncoding.DecodeString},
		{"NDJSON", "application/x-ndjson", b64([]byte("{\"password\":\"SECRET-11\"}\n")), "{\"password\":\"[redacted]\"}\n", base64.StdEncoding.DecodeString},
		// white space a lenient reader skips: read without it
		{"base64 with a space", "application/json", b64([]byte(`{"password":"SECRET-12"}`))[:8] + " " + b64([]byte(`{"password":"SECRET-12"}`))[8:], `{"password":"[redacted]"}`, base64.StdEncoding.DecodeString},
		{"not base64 at all", "application/json", "!!!" + b64([]byte(`{"password":"SECRET-13"}`)), redacted, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := map[string]any{"uri": "file:///x", "blob": tc.blob}
			if tc.mimeType != "" {
				res["mimeType"] = tc.mimeType
			}
			// As resources/read returns it, and embedded in a tool's result.
			for _, result := range []map[string]any{
				{"contents": []any{res}},
				{"content": []any{map[string]any{"type": "resource", "resource": res}}},
			} {
				msg, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": result})
				tp, _ := newTap(nil, false, io.Discard, "password")
				masked := tp.masked(msg)
				if bytes.Contains(masked, []byte("SECRET")) {
					t.Errorf("a secret is in %s", masked)
				}
				var got struct {
					Result struct {
						Contents []struct{ Blob string }
						Content  []struct{ Resource struct{ Blob string } }
					}
				}
				if err := json.Unmarshal(masked, &got); err != nil {
					t.Fatalf("%s: %v", masked, err)
				}
				blob := ""
				if len(got.Result.Contents) == 1 {
					blob = got.Result.Contents[0].Blob
				} else if len(got.Result.Content) == 1 {
					blob = got.Result.Content[0].Resource.Blob
				}
				dec := []byte(blob)
				if tc.decode != nil {
					var err error
					if dec, err = tc.decode(blob); err != nil {
						t.Fatalf("the recorded blob %q: %v", blob, err)
					}
				}
				if string(dec) != tc.want {
					t.Errorf("the recorded blob is %q, want %q", dec, tc.want)
				}
			}
		})
	}
}

// A body past 1 MiB grows in steps of growStep, not by doubling: read
// whole, it holds at most its bytes and a step (5 MiB and a byte held
// 8 MiB).
func TestReadBodyGrowsInSteps(t *testing.T) {
	body := bytes.Repeat([]byte("p"), 5<<20+1)
	bodies := &budget{left: 64 << 20}
	req := &http.Request{Method: http.MethodPost, Body: &rewound{data: body}, ContentLength: -1}
	b, held, status, err := readBody(req, bodies, maxBody)
	if status != 0 || len(b) != len(body) {
		t.Fatalf("status %d (%v), read %d bytes", status, err, len(b))
	}
	if most := int64(len(body)) + max(int64(len(body))/4, 1<<20); held > most || int64(cap(b)) != held {
		t.Errorf("a body of %d bytes holds %d (capacity %d), want at most %d", len(body), held, cap(b), most)
	}
	bodies.give("", held)
}

// The answers held to be recorded are shared out as the request bodies
// are: a client past its share has its next answer pass unrecorded,
// while another client's is recorded; each gives back what it held.
func TestAnswerShare(t *testing.T) {
	answers := &budget{left: 1 << 20, share: 256 << 10}
	answer := func(n int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":{"pad":"` + strings.Repeat("p", n) + `"}}`)
	}
	var recorded []string
	body := func(client string, r io.Reader) *jsonBody {
		return &jsonBody{ReadCloser: io.NopCloser(r), want: -1, max: maxLine, hold: hold{budget: answers, client: client},
			done: func([]byte) { recorded = append(recorded, client) }}
	}
	slow := body("192.0.2.1", &pausedReader{data: answer(200 << 10)})
	p := make([]byte, 1<<20)
	if _, err := slow.Read(p); err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"192.0.2.1", "192.0.2.2"} {
		if passed, _ := io.ReadAll(body(client, bytes.NewReader(answer(100<<10)))); len(passed) != len(answer(100<<10)) {
			t.Errorf("%s: passed %d bytes", client, len(passed))
		}
	}
	if len(recorded) != 1 || recorded[0] != "192.0.2.2" {
		t.Errorf("recorded the answers of %v; want only 192.0.2.2's (192.0.2.1 holds its share)", recorded)
	}
	slow.Close()
	if answers.remaining() != 1<<20 || len(answers.held) != 0 {
		t.Errorf("all closed: %d left, held %v", answers.remaining(), answers.held)
	}
}

// On loopback every client is this machine's address: no share, the whole
// budget for them (a share would only shrink it, and cut the largest
// answer recorded); on any other address, a quarter.
func TestShareFor(t *testing.T) {
	for addr, want := range map[string]int64{"127.0.0.1:9000": 0, "localhost:0": 0, "[::1]:9000": 0, "0.0.0.0:9000": clientShareOf, "192.0.2.1:9000": clientShareOf} {
		if got := shareFor(addr); got != want {
			t.Errorf("shareFor(%q) = %d, want %d", addr, got, want)
		}
	}
}
