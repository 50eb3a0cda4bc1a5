package proxy

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/internal/transport/sse"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
)

// handler is the HTTP proxy to upstream within the default limits, as the
// tests serve it.
func handler(upstream *url.URL, names map[string]bool, t *tap) http.Handler {
	return newHandler(upstream, names, t, defaultLimits)
}

// Over HTTP the proxy passes bytes unchanged both ways, an event stream
// event by event as the server writes it (the server writes its second
// event only once the client has read the first: a proxy that buffered
// would wait for ever), and records the messages under their session.
func TestHTTPIsTransparentAndStreams(t *testing.T) {
	reqBody := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\n  "
	first := "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n"
	second := ": keep-alive\r\n\r\nid: 2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{\"content\":[]}}\r\n\r\n"
	read := make(chan struct{})
	var got []byte
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer secret" || r.URL.Path != "/mcp" || r.URL.RawQuery != "a=1" {
			http.Error(w, "headers or path not passed on", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Mcp-Session-Id", "sess-9")
		_, _ = io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-read:
		case <-time.After(5 * time.Second):
			return // the proxy held the first event back
		}
		_, _ = io.WriteString(w, second)
	}))
	defer upstream.Close()
	var rec bytes.Buffer
	tp, err := newTap(&rec, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp?a=1", strings.NewReader(reqBody))
	req.Header.Set("Authorization", "Bearer secret")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	head := make([]byte, len(first))
	if _, err := io.ReadFull(br, head); err != nil || string(head) != first {
		t.Fatalf("first event %q, %v", head, err)
	}
	close(read)
	rest, _ := io.ReadAll(br)
	if resp.StatusCode != 200 || string(rest) != second || string(got) != reqBody || resp.Header.Get("Mcp-Session-Id") != "sess-9" {
		t.Errorf("status %d, rest %q, upstream got %q", resp.StatusCode, rest, got)
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(rec.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[0], `"session":"sess-9","dir":"c2s"`) || !strings.Contains(lines[2], `"result":{"content":[]}`) || strings.Contains(rec.String(), "secret") {
		t.Errorf("recorded:\n%s", rec.String())
	}
}

// A real session through the HTTP proxy, our client against our server:
// the recording validates with nothing found.
func TestHTTPSessionValidates(t *testing.T) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)))
	h, shutdown := mcphttp.Handler(srv)
	upstream := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); upstream.Close(); srv.Close() }()
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, rev := range []string{"2025-11-25", "2026-07-28"} {
		c := client.New("via-proxy", "1", client.WithProtocolVersion(rev))
		s, err := c.Connect(ctx, &client.StreamableHTTP{URL: front.URL + "/mcp"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolSimpleText}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	v, _ := validate.New()
	rep := v.Check(ctx, []validate.Input{validate.ReaderInput("via-proxy.jsonl", bytes.NewReader(rec.Bytes()))})
	if len(rep.Findings) != 0 || rep.Messages < 6 {
		t.Errorf("%s\n%v\n%s", validate.Summary(&rep), rep.Findings, rec.String())
	}
}

// An HTTP answer without a JSON-RPC body (here a 401) answers the requests
// of its POST: the recording says so, and the validator does not take
// them for unanswered.
func TestHTTPRefusalClosesTheRequest(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	defer upstream.Close()
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	req.Header.Set("Authorization", "Bearer expired-secret")
	req.Header.Set("Cookie", "sid=secret-cookie")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rec.String(), `"event":"refused","status":401,"answers":[7]`) {
		t.Fatalf("recorded:\n%s", rec.String())
	}
	want := `"http":{"method":"POST","status":401,"request":{"Content-Type":"application/json","Mcp-Method":"tools/list","Mcp-Protocol-Version":"2026-07-28"},"response":{"Content-Type":"text/plain; charset=utf-8"}}`
	if !strings.Contains(rec.String(), want) || strings.Contains(rec.String(), "secret") {
		t.Fatalf("recorded:\n%s\nwant the exchange's MCP headers, %s, and no credentials", rec.String(), want)
	}
	v, _ := validate.New()
	rep := v.Check(context.Background(), []validate.Input{validate.ReaderInput("refused.jsonl", bytes.NewReader(rec.Bytes()))})
	if len(rep.Findings) != 0 {
		t.Errorf("%v", rep.Findings)
	}
}

// The upstream sees the Host a client sent, unless it named the proxy: a
// DNS-rebinding check behind the proxy must still see a foreign Host.
func TestUpstreamHost(t *testing.T) {
	u, _ := url.Parse("https://mcp.example.com/mcp")
	hostname, _ := os.Hostname()
	for _, tc := range []struct{ in, listen, want string }{
		{"127.0.0.1:9000", "127.0.0.1:9000", "mcp.example.com"},
		{"localhost:9000", "127.0.0.1:9000", "mcp.example.com"},
		{"[::1]:9000", "127.0.0.1:9000", "mcp.example.com"},
		{"ci-box:9000", "ci-box:9000", "mcp.example.com"},
		{"evil.example:9000", "127.0.0.1:9000", "evil.example:9000"},
		{"ci-box:9000", "127.0.0.1:9000", "ci-box:9000"},
		{hostname + ":9000", ":9000", "mcp.example.com"}, // every interface: the machine's names are the proxy's
		{"evil.example:9000", "0.0.0.0:9000", "evil.example:9000"},
	} {
		if got := upstreamHost(tc.in, ownNames(tc.listen), u); got != tc.want {
			t.Errorf("upstreamHost(%q, listening at %q) = %q, want %q", tc.in, tc.listen, got, tc.want)
		}
	}
	var seen string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Host }))
	defer upstream.Close()
	tp, _ := newTap(nil, false, io.Discard)
	up, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(up, nil, tp))
	defer front.Close()
	req, _ := http.NewRequest(http.MethodGet, front.URL+"/mcp", nil)
	req.Host = "evil.example"
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	if seen != "evil.example" {
		t.Errorf("upstream saw Host %q, want the client's evil.example", seen)
	}
}

// --redact masks the values of the members and headers it names, at any
// depth and in any case, in the recording only; a session id it names
// becomes a digest that still tells sessions apart; a body that is not
// JSON cannot be searched, so it is masked whole. Mcp-Param-* headers
// (tool arguments) are never recorded.
func TestRedact(t *testing.T) {
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard, "apiKey", "Mcp-Name", "mcp-session-id")
	msg := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"APIKEY":"k-123","nested":[{"apiKey":"k-456","keep":"me"}]}}}`
	tp.messageHTTP("sess-secret", server.ClientToServer, []byte(msg), &record.HTTP{Method: "POST", Status: 200,
		Request: tp.headers(http.Header{"Mcp-Param-Token": {"t-789"}, "Mcp-Name": {"n-000"}, "Mcp-Method": {"tools/call"}})})
	tp.message("sess-secret", server.ClientToServer, []byte(`not json, k-321`))
	tp.message("other-session", server.ClientToServer, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	got := rec.String()
	for _, secret := range []string{"k-123", "k-456", "t-789", "n-000", "k-321", "sess-secret", "other-session", "Mcp-Param-Token"} {
		if strings.Contains(got, secret) {
			t.Errorf("%s is in the recording:\n%s", secret, got)
		}
	}
	for _, kept := range []string{`"keep":"me"`, `"APIKEY":"[redacted]"`, `"Mcp-Name":"[redacted]"`, `"Mcp-Method":"tools/call"`, `"method":"notifications/initialized"`, `"raw":"[redacted]`} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s is not in the recording:\n%s", kept, got)
		}
	}
	if n := len(regexp.MustCompile(`"session":"redacted-[0-9a-f]{16}"`).FindAllString(got, -1)); n != 3 || strings.Count(got, tp.session("sess-secret")) != 2 {
		t.Errorf("session digests: %d, want 3, two of them one session's:\n%s", n, got)
	}
}

// HTTP+SSE (2024-11-05) through the proxy: each session is the one its
// URL names (the endpoint event's, the POST's ?sessionId=), so that two
// clients are two sessions, and the endpoint event is not a message.
func TestHTTPPlusSSESessions(t *testing.T) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)))
	endpoint := sse.New(srv)
	mux := http.NewServeMux()
	mux.Handle("/sse", endpoint.Stream())
	mux.Handle("/messages", endpoint.Messages())
	upstream := httptest.NewServer(mux)
	defer func() { endpoint.Shutdown(); srv.Close(); upstream.Close() }()
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/sse")
	front := httptest.NewServer(handler(u, nil, tp))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Clients speak later revisions over HTTP+SSE too: its POSTs are
	// answered 202, which is no Streamable HTTP violation.
	for _, rev := range []string{"2024-11-05", "2025-11-25"} {
		c := client.New("via-proxy", "1", client.WithProtocolVersion(rev))
		s, err := c.Connect(ctx, &client.SSE{URL: front.URL + "/sse"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: conformance.ToolSimpleText}); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	front.Close() // the streams end; so does their recording
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	v, _ := validate.New()
	rep := v.Check(ctx, []validate.Input{validate.ReaderInput("sse.jsonl", bytes.NewReader(rec.Bytes()))})
	if len(rep.Findings) != 0 || rep.Sessions != 2 || rep.Messages < 10 {
		t.Errorf("%s\n%v\n%s", validate.Summary(&rep), rep.Findings, rec.String())
	}
}

// A gzip JSON answer passes as the upstream sent it (compressed) and is
// recorded decoded; an upstream that cannot be reached answers 502, which
// the recording keeps as the request's answer.
func TestHTTPGzipAndUpstreamDown(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{}}`
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = io.WriteString(zw, answer)
	_ = zw.Close()
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		_, _ = w.Write(zipped.Bytes())
	}))
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	post := func(id int) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, front.URL+"/mcp", strings.NewReader(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)))
		req.Header.Set("Accept-Encoding", "gzip") // asked for: the transport leaves the bytes alone
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(1)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(got, zipped.Bytes()) {
		t.Errorf("the client got %q, want the upstream's gzip bytes", got)
	}
	upstream.Close() // now it is down
	resp = post(2)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("upstream down: status %d, want 502", resp.StatusCode)
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"msg":` + answer, `"msg":{"jsonrpc":"2.0","id":2,"method":"ping"},"http":{"method":"POST","status":502`, `"event":"refused","status":502,"answers":[2]`} {
		if !strings.Contains(rec.String(), want) {
			t.Errorf("the recording lacks %s:\n%s", want, rec.String())
		}
	}
}

// A JSON answer is recorded as soon as its Content-Length is in, in the
// Read that hands the client its last bytes: before the client can send
// what follows. Beyond its bound it passes, unrecorded.
func TestJSONBodyRecordsAtContentLength(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{}}`
	var got []byte
	b := &jsonBody{ReadCloser: io.NopCloser(&pausedReader{data: []byte(answer)}), want: int64(len(answer)), max: maxLine,
		done: func(m []byte) { got = m }}
	p := make([]byte, 1024)
	n, err := b.Read(p)
	if n != len(answer) || err != nil || string(got) != answer {
		t.Fatalf("after the first Read (%d bytes, %v): recorded %q, want the answer already", n, err, got)
	}
	got = nil
	small := &jsonBody{ReadCloser: io.NopCloser(strings.NewReader(answer)), want: -1, max: 10, done: func(m []byte) { got = m }}
	passed, _ := io.ReadAll(small)
	if string(passed) != answer || got != nil {
		t.Errorf("over the bound: passed %q, recorded %q; want it passed whole and not recorded", passed, got)
	}
}

// pausedReader hands out its data, then would block before its EOF (an
// upstream that keeps the connection): a recorder that waits for EOF
// waits.
type pausedReader struct {
	data []byte
	done bool
}

func (r *pausedReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	r.done = true
	return copy(p, r.data), nil
}

// The upstream gets the Accept-Encoding the client sent, or none: the
// proxy's transport adds no gzip of its own.
func TestHTTPAddsNoAcceptEncoding(t *testing.T) {
	var seen []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Accept-Encoding"))
	}))
	defer upstream.Close()
	tp, _ := newTap(nil, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	for _, enc := range []string{"", "br"} {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/mcp", nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(seen) != 2 || seen[0] != "" || seen[1] != "br" {
		t.Errorf("the upstream saw Accept-Encoding %q, want [\"\" br]", seen)
	}
}

// The client's forwarding headers reach the upstream as sent, and the
// proxy adds none.
func TestHTTPPassesForwardingHeaders(t *testing.T) {
	var seen http.Header
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Clone() }))
	defer upstream.Close()
	tp, _ := newTap(nil, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	for _, sent := range []http.Header{
		{"Forwarded": {"for=192.0.2.1;proto=https"}, "X-Forwarded-For": {"192.0.2.1, 198.51.100.2"}, "X-Forwarded-Host": {"mcp.example"}, "X-Forwarded-Proto": {"https"}},
		{},
	} {
		req, _ := http.NewRequest(http.MethodGet, front.URL+"/mcp", nil)
		for k, v := range sent {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for _, h := range forwardingHeaders {
			if got, want := strings.Join(seen[h], ","), strings.Join(sent[h], ","); got != want {
				t.Errorf("%s: the upstream saw %q, the client sent %q", h, got, want)
			}
		}
	}
}

// --redact masks a named member inside a string that is itself JSON, as a
// tool's text content carries its structured result, recorded through
// the proxy: the secret is in neither, the member is masked in both, and
// the client gets the answer unchanged.
func TestRedactJSONInStrings(t *testing.T) {
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"password\":\"hunter2\"}"},` +
		`{"type":"text","text":" [{\"user\":\"u\",\"inner\":\"{\\\"PassWord\\\":\\\"hunter3\\\"}\"}] "}],` +
		`"structuredContent":{"password":"hunter2"}}}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, answer)
	}))
	defer upstream.Close()
	var rec bytes.Buffer
	tp, _ := newTap(&rec, false, io.Discard, "password")
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != answer {
		t.Errorf("the client got %s, want the upstream's answer unchanged", got)
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
	recorded := rec.String()
	for _, want := range []string{`"text":"{\"password\":\"[redacted]\"}"`, `"structuredContent":{"password":"[redacted]"}`,
		`"text":" [{\"inner\":\"{\\\"PassWord\\\":\\\"[redacted]\\\"}\",\"user\":\"u\"}] "`} {
		if !strings.Contains(recorded, want) {
			t.Errorf("the recording lacks %s:\n%s", want, recorded)
		}
	}
	if strings.Contains(recorded, "hunter") {
		t.Errorf("a secret is in the recording:\n%s", recorded)
	}
	// JSON in a string in JSON... deeper than the bound is masked whole.
	deep := `{"password":"hunter4"}`
	for range maxEmbedded + 2 {
		b, _ := json.Marshal(map[string]string{"x": deep})
		deep = string(b)
	}
	if m := string(tp.masked([]byte(deep))); strings.Contains(m, "hunter4") || !strings.Contains(m, redacted) {
		t.Errorf("nested past the bound: %s", m)
	}
}

// A WebSocket through the HTTP proxy is refused with a clear 501: it would
// pass through unrecorded, and the recording (and --check) would call a
// session clean whose messages it never saw.
func TestHTTPRefusesWebSocket(t *testing.T) {
	srv := server.New(conformance.New(conformance.WithStepDelay(0)))
	h, shutdown := mcphttp.Handler(srv)
	upstream := httptest.NewServer(h)
	defer func() { shutdown(context.Background()); upstream.Close(); srv.Close() }()
	tp, _ := newTap(io.Discard, false, io.Discard)
	u, _ := url.Parse(upstream.URL + "/mcp")
	front := httptest.NewServer(handler(u, nil, tp))
	defer front.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.New("via-proxy", "1").Connect(ctx, &client.WebSocket{URL: "ws" + strings.TrimPrefix(front.URL, "http") + "/mcp/ws"})
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusNotImplemented {
		t.Errorf("a WebSocket through the proxy: %v, want 501", err)
	}
}

// A request the upstream has not answered when the proxy stops is
// recorded, open, as a client that gave up leaves one: a recording
// without it would hide what the upstream never answered. An answer that
// comes after does not record it twice.
func TestPendingRequestsAreRecordedAtStop(t *testing.T) {
	got, answer := make(chan struct{}), make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		close(got)
		<-answer
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`)
	}))
	defer upstream.Close()
	var rec syncBuffer
	tp, err := newTap(&rec, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(upstream.URL + "/mcp")
	p := newHandler(u, nil, tp, defaultLimits)
	front := httptest.NewServer(p)
	defer front.Close()
	done := make(chan error, 1)
	go func() {
		resp, err := http.Post(front.URL+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`))
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	<-got
	if strings.Contains(rec.String(), "tools/call") {
		t.Fatalf("recorded before its answer or the stop: %s", rec.String())
	}
	p.recordPending()
	if n := strings.Count(rec.String(), `"tools/call"`); n != 1 {
		t.Fatalf("the pending request recorded %d times at the stop: %s", n, rec.String())
	}
	close(answer)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(rec.String(), `"tools/call"`); n != 1 {
		t.Errorf("the request recorded %d times once answered: %s", n, rec.String())
	}
	if !strings.Contains(rec.String(), `"result"`) {
		t.Errorf("the answer after the stop is not recorded: %s", rec.String())
	}
}
