package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/sse"
)

// newTransport returns the HTTP transport that all sessions of one run
// share: plain HTTP/1.1 keep-alive connections, enough idle ones per host
// that no session ever waits for or re-dials a connection, no proxy, no
// compression.
func newTransport(sessions int) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   sessions + 64,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		ResponseHeaderTimeout: 0, // the per-call context bounds the whole call
		WriteBufferSize:       16 << 10,
		ReadBufferSize:        16 << 10,
	}
}

// Header names as the Go server canonicalizes them; the map is filled
// directly to skip canonicalization on every call.
const (
	hAccept      = "Accept"
	hContentType = "Content-Type"
	hSession     = "Mcp-Session-Id"
	hVersion     = "Mcp-Protocol-Version"
	hMethod      = "Mcp-Method"
	hName        = "Mcp-Name"
)

// httpSession is one MCP session over Streamable HTTP. It is used by one
// goroutine at a time: one call in flight.
type httpSession struct {
	client  http.RoundTripper // the shared transport, used directly: no redirects, no header copies
	url     string
	rb      requestBuilder
	timeout time.Duration
	rec     *recorder

	sid     string // Mcp-Session-Id, "" before initialize or without sessions
	version string // negotiated protocol version, sent in MCP-Protocol-Version
	ready   bool   // initialized (always true in the stateless revisions)
	nextID  int64

	sse  *sse.Reader
	body bytes.Buffer
	msg  rpcMessage
}

func newHTTPSession(client http.RoundTripper, url string, c *Config, rec *recorder) *httpSession {
	s := &httpSession{
		client:  client,
		url:     url,
		rb:      requestBuilder{version: c.ProtocolVersion, modern: isModern(c.ProtocolVersion)},
		timeout: c.Timeout,
		rec:     rec,
		sse:     sse.NewReader(nil, 0),
	}
	if s.rb.modern {
		s.ready, s.version = true, c.ProtocolVersion
	}
	return s
}

func (s *httpSession) header(method string) http.Header {
	h := make(http.Header, 6)
	h[hAccept] = []string{"application/json, text/event-stream"}
	h[hContentType] = []string{"application/json"}
	if s.sid != "" {
		h[hSession] = []string{s.sid}
	}
	if s.version != "" {
		h[hVersion] = []string{s.version}
	}
	if s.rb.modern && method != "" {
		h[hMethod] = []string{method}
		if method == "tools/call" {
			h[hName] = []string{"echo"}
		}
	}
	return h
}

// initialize runs the initialize handshake: initialize, then
// notifications/initialized.
func (s *httpSession) initialize(ctx context.Context) error {
	s.sid, s.version, s.ready = "", "", false
	s.nextID++
	id := s.nextID
	m, sid, err := s.request(ctx, "initialize", s.rb.initialize(nil, id), id)
	if err != nil {
		return &callError{kind: errSession, msg: "initialize: " + err.Error()}
	}
	s.sid = sid
	s.version = m.Result.ProtocolVersion
	if s.version == "" {
		return failf(errSession, "initialize result without protocolVersion")
	}
	if err := s.notify(ctx, s.rb.initialized(nil)); err != nil {
		return &callError{kind: errSession, msg: "notifications/initialized: " + err.Error()}
	}
	s.ready = true
	return nil
}

// call makes one tools/call of echo with text and checks the answer.
func (s *httpSession) call(ctx context.Context, text []byte) error {
	s.nextID++
	id := s.nextID
	stampText(text, id)
	m, _, err := s.request(ctx, "tools/call", s.rb.call(make([]byte, 0, len(text)+256), id, text), id)
	if err != nil {
		return err
	}
	if err := checkEcho(m.Result, text); err != nil {
		return err
	}
	return nil
}

// request POSTs one JSON-RPC request and reads the response with its id
// from a JSON body or an SSE stream. It returns the response's session id
// header too.
func (s *httpSession) request(ctx context.Context, method string, body []byte, id int64) (*rpcMessage, string, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	req.Header = s.header(method)
	resp, err := s.client.RoundTrip(req)
	if err != nil {
		return nil, "", s.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, "", s.statusError(resp)
	}
	ct := resp.Header.Get(hContentType)
	var m *rpcMessage
	switch {
	case hasMediaType(ct, "text/event-stream"):
		s.rec.kinds["sse"]++
		m, err = s.readSSE(resp.Body, id, cancel)
	case hasMediaType(ct, "application/json"):
		s.rec.kinds["json"]++
		m, err = s.readJSON(resp.Body, id)
	default:
		return nil, "", failf(errMalformed, "HTTP %d with Content-Type %q", resp.StatusCode, ct)
	}
	if err != nil {
		if ce := (*callError)(nil); !errors.As(err, &ce) {
			err = s.transportError(ctx, err)
		}
		return nil, "", err
	}
	return m, resp.Header.Get(hSession), nil
}

func (s *httpSession) readJSON(r io.Reader, id int64) (*rpcMessage, error) {
	s.body.Reset()
	if _, err := s.body.ReadFrom(r); err != nil {
		return nil, err
	}
	match, cerr := decodeMessage(s.body.Bytes(), id, &s.msg)
	if cerr != nil {
		return nil, cerr
	}
	if !match {
		return nil, failf(errNoAnswer, "JSON body is not the response to id %d: %s", id, clip(s.body.Bytes()))
	}
	return &s.msg, nil
}

// sseLinger is how long a stream may stay open after the response before
// the connection is dropped (servers SHOULD close it right away).
var sseLinger = time.Second

// readSSE reads events until the response to id, skipping the server's
// notifications and requests, then reads the stream to its end so that the
// connection can be reused. A stream still open sseLinger after the
// response is cut (cancel) and counted under "sse-left-open"; the call
// itself has succeeded.
func (s *httpSession) readSSE(r io.Reader, id int64, cancel context.CancelFunc) (*rpcMessage, error) {
	s.sse.Reset(r)
	defer s.sse.Reset(nil)
	for {
		ev, err := s.sse.Next()
		if err == io.EOF {
			return nil, failf(errNoAnswer, "SSE stream ended without the response to id %d", id)
		}
		if err != nil {
			return nil, err
		}
		if ev.Type != "" && ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // another event type, or a priming event (an id, empty data)
		}
		match, cerr := decodeMessage(ev.Data, id, &s.msg)
		if cerr != nil {
			return nil, cerr
		}
		if match {
			t := time.AfterFunc(sseLinger, cancel)
			if err := s.sse.Drain(); err != nil {
				s.rec.kinds["sse-left-open"]++
			}
			t.Stop()
			return &s.msg, nil
		}
	}
}

// notify POSTs a notification and expects 202 Accepted (any 2xx passes).
func (s *httpSession) notify(ctx context.Context, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = s.header("")
	resp, err := s.client.RoundTrip(req)
	if err != nil {
		return s.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return s.statusError(resp)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// close ends the session with DELETE; servers may answer 405.
func (s *httpSession) close(ctx context.Context) {
	if s.sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, s.url, nil)
	if err != nil {
		return
	}
	req.Header = s.header("")
	if resp, err := s.client.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.sid, s.ready = "", false
}

func (s *httpSession) statusError(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode == http.StatusNotFound && s.sid != "" {
		s.ready = false // the session is gone: initialize again
	}
	return failf(fmt.Sprintf("http-%d", resp.StatusCode), "%s", clip(bytes.TrimSpace(b)))
}

func (s *httpSession) transportError(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return failf(errTimeout, "no answer within %v", s.timeout)
	}
	// The connection broke: the session itself may be fine.
	return failf(errTransport, "%v", err)
}

// hasMediaType reports whether Content-Type value ct names media type mt,
// ignoring parameters and case.
func hasMediaType(ct, mt string) bool {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	return strings.EqualFold(strings.TrimSpace(ct), mt)
}
