package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/sse"
	"github.com/mcpstack/mcpstack/wire"
)

// StreamableHTTP is the Streamable HTTP transport: each message is a POST
// to URL, answered by JSON or an event stream; a GET stream carries what
// the server sends unasked; a dropped response stream is resumed with
// Last-Event-ID; Close deletes the session.
type StreamableHTTP struct {
	URL string
	// Client makes the requests (default: an http.Client without a
	// timeout, since streams last). Whatever its CheckRedirect, a
	// redirect to another origin is not followed (RedirectError).
	Client *http.Client
	// Header is sent with every request: Authorization, custom headers.
	Header http.Header
	// MaxMessage bounds one message from the server (default 16 MiB).
	MaxMessage int
	// NoListen skips the GET stream (a client that only calls).
	NoListen bool
}

// ErrSessionEnded is returned when the server no longer knows the
// session (HTTP 404): a new Connect starts another.
var ErrSessionEnded = errors.New("client: the server ended the session (404)")

// Connect prepares the connection; nothing is sent before the first
// message.
func (t *StreamableHTTP) Connect(ctx context.Context) (Conn, error) {
	if t.URL == "" {
		return nil, errors.New("client: StreamableHTTP has no URL")
	}
	hc := sameOrigin(t.Client)
	max := messageLimit(t.MaxMessage)
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return &httpConn{t: t, hc: hc, max: max, in: make(chan inbound, 64), ctx: cctx, cancel: cancel}, nil
}

type httpConn struct {
	t      *StreamableHTTP
	hc     *http.Client
	max    int
	in     chan inbound
	ctx    context.Context // the connection's: streams end with it
	cancel context.CancelFunc

	mu        sync.Mutex
	session   string
	version   string
	listening bool
	closing   bool // no stream reader starts from here on (goStream)
	streams   sync.WaitGroup
	closeOnce sync.Once

	received atomic.Int64 // messages read from the server's streams and bodies
}

// inbound is a message for Read, or a broken answer to a request.
type inbound struct {
	msg []byte
	err error
}

// head is what the transport reads of an outgoing message: its headers
// depend on it (2026-07-28: Mcp-Method, Mcp-Name, the version of _meta).
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		// The members Mcp-Name may repeat (generated.NameParam).
		Name   string         `json:"name"`
		URI    string         `json:"uri"`
		TaskID string         `json:"taskId"`
		Meta   map[string]any `json:"_meta"`
	} `json:"params"`
}

// routingName is the value of the Mcp-Name header of the request.
func (hd *head) routingName() string {
	switch generated.NameParam(hd.Method) {
	case "name":
		return hd.Params.Name
	case "uri":
		return hd.Params.URI
	case "taskId":
		return hd.Params.TaskID
	}
	return ""
}

func (c *httpConn) header(h http.Header) {
	addHeader(h, c.t.Header)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != "" {
		h.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		h.Set("MCP-Protocol-Version", c.version)
	}
}

func (c *httpConn) Send(ctx context.Context, msg []byte) error {
	var hd head
	_ = json.Unmarshal(msg, &hd)
	// Only a request awaits an answer. The client's own answers to the
	// server carry the server's ids, which must not reach the calls of
	// the same numbers.
	var awaiting json.RawMessage
	if hd.Method != "" {
		awaiting = hd.ID
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.t.URL, bytes.NewReader(msg))
	if err != nil {
		return err
	}
	c.header(req.Header)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if v, ok := hd.Params.Meta[wire.MetaProtocolVersion].(string); ok {
		req.Header.Set("MCP-Protocol-Version", v) // a request that names its revision
	}
	for k, vs := range paramHeadersFrom(ctx) {
		req.Header[k] = vs
	}
	if hd.Method != "" {
		req.Header.Set("Mcp-Method", hd.Method)
		if name := hd.routingName(); name != "" {
			req.Header.Set("Mcp-Name", name)
		}
	}
	// The response outlives Send when it is a stream: it ends with the
	// call's context or the connection.
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(c.ctx, cancel)
	req = req.WithContext(rctx)
	resp, err := c.hc.Do(req)
	if err != nil {
		stop()
		cancel()
		return err
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		if !validSessionID(sid) {
			resp.Body.Close()
			stop()
			cancel()
			return fmt.Errorf("client: the server's Mcp-Session-Id is not 1 to %d visible ASCII characters (it is sent again with every request)", maxToken)
		}
		c.mu.Lock()
		if c.session == "" {
			c.session = sid
		}
		c.mu.Unlock()
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted:
		resp.Body.Close()
		stop()
		cancel()
		if len(awaiting) > 0 { // a request: nothing else will answer it
			return &AnswerError{RequestID: awaiting, Reason: "the server accepted it (202) without an answer"}
		}
		return nil
	case resp.StatusCode == http.StatusOK && mt == "text/event-stream":
		if !c.goStream(func() {
			defer stop()
			defer cancel()
			c.readStream(rctx, resp.Body, awaiting)
		}) {
			resp.Body.Close()
			stop()
			cancel()
			return ErrClosed
		}
		return nil
	}
	defer stop()
	defer cancel()
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(c.max)+1))
	if err != nil {
		return err
	}
	if len(body) > c.max {
		return fmt.Errorf("client: an answer of more than %d bytes", c.max)
	}
	if resp.StatusCode == http.StatusNotFound && c.sessionID() != "" {
		_ = c.push(ctx, inbound{err: ErrSessionEnded}) // the session is over: Read says so
		return ErrSessionEnded
	}
	switch {
	case resp.StatusCode/100 == 2 && len(awaiting) == 0:
		return nil // a notification or a response, accepted (202 is the rule; any 2xx will do)
	case resp.StatusCode == http.StatusOK && mt == "application/json":
		// A JSON body is all the answer a request gets: one without its
		// response fails it, rather than leaving it waiting for ever.
		switch {
		case len(awaiting) == 0 || !json.Valid(body): // not JSON: answer fails the request
		case answersIn(body, awaiting):
			return c.deliver(ctx, body)
		default:
			if err := notAnswered(body, awaiting); err != nil {
				return err
			}
			if err := c.deliver(ctx, body); err != nil { // its notifications are read
				return err
			}
			return &AnswerError{RequestID: awaiting, Reason: "the JSON body answering its POST holds no response with its id"}
		}
		return c.answer(ctx, awaiting, body)
	case resp.StatusCode == http.StatusOK:
		return fmt.Errorf("client: the server answered %q to a POST, not JSON or an event stream", resp.Header.Get("Content-Type"))
	}
	he := &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(body))}
	if items, _, perr := jsonrpc.Parse(body, jsonrpc.Limits{}); perr == nil && len(items) == 1 && items[0].Msg != nil && items[0].Msg.Error != nil {
		he.RPC = items[0].Msg.Error // the JSON-RPC error that came with the status (its id may be null)
	}
	return he
}

// HTTPError is an HTTP status the server answered instead of a message;
// RPC is the JSON-RPC error its body held, if any (errors.As finds it).
type HTTPError struct {
	Status int
	Body   string
	RPC    *wire.Error
}

func (e *HTTPError) Unwrap() error {
	if e.RPC == nil {
		return nil
	}
	return e.RPC
}

func (e *HTTPError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("client: HTTP %d", e.Status)
	}
	return fmt.Sprintf("client: HTTP %d: %.200s", e.Status, e.Body)
}

func (c *httpConn) sessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// push hands a message (or a broken answer) to Read, within ctx: a Send
// whose answer Read is not taking (the session is behind, or gone) fails
// with its context instead of waiting past it.
func (c *httpConn) push(ctx context.Context, in inbound) error {
	select {
	case c.in <- in:
		return nil
	case <-c.ctx.Done():
		return ErrClosed
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// answer pushes a body that answers request id: one that is not JSON
// fails that request (AnswerError) rather than leaving it waiting.
func (c *httpConn) answer(ctx context.Context, id json.RawMessage, body []byte) error {
	if len(id) > 0 && !json.Valid(body) {
		return c.push(ctx, inbound{err: &AnswerError{RequestID: id, Body: body, Reason: "not JSON"}})
	}
	return c.deliver(ctx, body)
}

// deliver pushes a message (or batch) of the server's, known to be JSON.
func (c *httpConn) deliver(ctx context.Context, body []byte) error {
	c.received.Add(1)
	return c.push(ctx, inbound{msg: body})
}

// readStream reads a POST's event stream; when it ends before the answer
// to request id came, it resumes with Last-Event-ID on a GET, as long as
// the server gave event ids: a few attempts, started again whenever a
// resumption brings a new event id (a polling server sends a fresh
// priming event each time, as 2025-11-25 asks).
func (c *httpConn) readStream(rctx context.Context, body io.ReadCloser, id json.RawMessage) {
	answered, last, retry := c.drain(body, id)
	defer func() {
		// Unless the call itself ended (its caller gave up: the session
		// tells the server) or the connection did.
		if !answered && len(id) > 0 && c.ctx.Err() == nil && rctx.Err() == nil {
			_ = c.push(c.ctx, inbound{err: &AnswerError{RequestID: id, Reason: "the response stream ended before the answer and could not be resumed"}})
		}
	}()
	for attempt := 0; !answered && last != "" && c.ctx.Err() == nil && rctx.Err() == nil && attempt < 5; attempt++ {
		select {
		case <-time.After(retry):
		case <-c.ctx.Done():
			return
		case <-rctx.Done(): // the call gave up: a long retry must not hold this
			return
		}
		resp, err := c.get(rctx, last) // the call's: it ends when the call does
		if err == nil && gone(resp.StatusCode) {
			resp.Body.Close()
			return // its events are not kept: trying again brings them no more than this did
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			if resp != nil {
				resp.Body.Close()
			}
			continue
		}
		var more string
		answered, more, retry = c.drain(resp.Body, id)
		if more != "" && more != last {
			last, attempt = more, -1 // progress: the attempts start again
		}
	}
}

// afterAnswer is how long a call's stream is read after its answer, for
// the server to end it and the connection to be reused.
const afterAnswer = 250 * time.Millisecond

// minRetry is the least delay before a stream is opened again, whatever
// the server's retry field says: a server that ends its streams at once
// with "retry: 1" would have the client open a thousand a second.
const minRetry = 100 * time.Millisecond

// drain pushes the events of a stream until it ends; it reports whether
// the answer to id came, the last event id and the retry delay.
func (c *httpConn) drain(body io.ReadCloser, id json.RawMessage) (answered bool, last string, retry time.Duration) {
	defer body.Close()
	r := sse.NewReader(body, c.max)
	tooLarge := false
	defer func() {
		last, retry = r.LastID(), r.Retry()
		if len(last) > maxToken {
			last = "" // not sent back as Last-Event-ID: no resumption from it
		}
		if tooLarge {
			last = ""
		}
		if retry <= 0 {
			retry = time.Second
		}
		retry = max(retry, minRetry)
	}()
	for {
		ev, err := r.Next()
		if errors.Is(err, sse.ErrTooLarge) {
			// Not resumed: a resumption starts before the event, and the
			// server would send it again, too large again.
			err = fmt.Errorf("client: an event of more than %d bytes on the stream: %w", c.max, err)
			if len(id) > 0 && !answered {
				_ = c.push(c.ctx, inbound{err: &AnswerError{RequestID: id, Reason: err.Error()}})
				return true, "", 0
			}
			tooLarge = true // a GET stream: listen opens a fresh one, without Last-Event-ID
			return answered, "", 0
		}
		if err != nil {
			return answered, "", 0
		}
		if ev.Type != "" && ev.Type != "message" || len(bytes.TrimSpace(ev.Data)) == 0 {
			continue // another event type, or a priming event (an id, no data)
		}
		if len(id) > 0 && answers(ev.Data, id) {
			answered = true
		}
		if c.answer(c.ctx, id, bytes.Clone(ev.Data)) != nil {
			return true, "", 0
		}
		if answered {
			// The response is a stream's last message. What follows is
			// read for a moment, so that the connection is reused when
			// the server ends the stream; one that keeps it open after
			// the response would hold the connection and this goroutine
			// for as long as the session lasts.
			t := time.AfterFunc(afterAnswer, func() { _ = body.Close() })
			_ = r.Drain()
			t.Stop()
			return true, "", 0
		}
	}
}

// maxToken bounds what the server gives the client to send back on
// every request or resumption: a session id, an event id.
const maxToken = 1024

// validSessionID reports whether s is 1 to maxToken visible ASCII
// characters (0x21 to 0x7E), as 2025-11-25 asks of a session id.
func validSessionID(s string) bool {
	return s != "" && len(s) <= maxToken && httpfacts.VisibleASCII(s)
}

// answers reports whether msg is the response to request id.
func answers(msg []byte, id json.RawMessage) bool {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Method == "" && bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(id))
}

// notAnswered is what fails request id whose JSON body holds a response
// but not its own: an error with no id (one the server could not tie to
// the request), as the server said it; a response to another id, a
// violation (the body is not read further). Nil for neither.
func notAnswered(body []byte, id json.RawMessage) error {
	items, _, err := jsonrpc.Parse(body, jsonrpc.Limits{})
	if err != nil {
		return nil
	}
	for _, it := range items {
		switch {
		case it.Msg == nil || it.Msg.Kind != jsonrpc.Response:
		case it.Msg.Error != nil && it.Msg.ID.IsZero() && len(items) == 1:
			return it.Msg.Error
		case !it.Msg.ID.IsZero():
			return (&Violation{Rule: RuleUnknownID, Pointer: "/id", Reason: "the JSON body answering request " + string(id) + " is the response to another", Message: body}).bound()
		}
	}
	return nil
}

// answersIn reports whether a JSON body, one message or an array of
// them, holds the response to request id.
func answersIn(body []byte, id json.RawMessage) bool {
	var batch []json.RawMessage
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '[' || json.Unmarshal(body, &batch) != nil {
		return answers(body, id)
	}
	return slices.ContainsFunc(batch, func(msg json.RawMessage) bool { return answers(msg, id) })
}

// gone reports whether a resumption's status says the events after its
// Last-Event-ID are not kept there (another replica, or they aged out):
// 410 or 400 from mcpstack, 404 from others.
func gone(status int) bool {
	return status == http.StatusGone || status == http.StatusBadRequest || status == http.StatusNotFound
}

// get opens a GET stream of the session (resuming after last, when set).
func (c *httpConn) get(ctx context.Context, last string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.t.URL, nil)
	if err != nil {
		return nil, err
	}
	c.header(req.Header)
	req.Header.Set("Accept", "text/event-stream")
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	return c.hc.Do(req)
}

// Negotiated records the revision for the MCP-Protocol-Version header and
// opens the GET stream of a session.
func (c *httpConn) Negotiated(revision string) {
	c.mu.Lock()
	c.version = revision
	listen := !c.t.NoListen && !c.listening && c.session != ""
	c.listening = c.listening || listen
	c.mu.Unlock()
	if listen {
		c.goStream(c.listen)
	}
}

// goStream runs fn, a stream's reader, unless the connection is closing:
// Close waits for every reader it started, and one started after the
// wait began would be left running (or make WaitGroup panic).
func (c *httpConn) goStream(fn func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return false
	}
	c.streams.Add(1)
	go func() {
		defer c.streams.Done()
		fn()
	}()
	return true
}

// maxQuietWait bounds the wait before a GET stream is opened again after
// streams that brought nothing; quickEnd is how soon a stream ends to be
// one of those (one that stayed open longer, as behind a proxy that cuts
// idle streams, is opened again at once).
const (
	maxQuietWait = 30 * time.Second
	quickEnd     = 5 * time.Second
)

// listen keeps the GET stream open, reconnecting after drops (with
// Last-Event-ID), until the connection closes or the server says it has
// none (405).
func (c *httpConn) listen() {
	last, failures, quiet := "", 0, 0
	for c.ctx.Err() == nil && failures < 5 {
		resp, err := c.get(c.ctx, last)
		var redirect *RedirectError
		switch {
		case errors.As(err, &redirect):
			return // the server sends the stream elsewhere: not followed, not asked again
		case err != nil:
			failures++
		case resp.StatusCode == http.StatusMethodNotAllowed:
			resp.Body.Close()
			return // no GET stream here
		case last != "" && gone(resp.StatusCode):
			// The events after last are not kept where the request
			// went: what they held is lost, the stream goes on. A
			// plain GET tells a session that ended (404 again) from
			// one that did not.
			resp.Body.Close()
			last = ""
			continue
		case resp.StatusCode == http.StatusNotFound:
			resp.Body.Close()
			_ = c.push(c.ctx, inbound{err: ErrSessionEnded})
			return
		case resp.StatusCode != http.StatusOK:
			resp.Body.Close()
			failures++
		default:
			failures = 0
			before, opened := c.received.Load(), time.Now()
			_, more, retry := c.drain(resp.Body, nil)
			if c.received.Load() != before || more != "" && more != last || time.Since(opened) >= quickEnd {
				quiet = 0
			} else {
				quiet++
			}
			if more != "" {
				last = more
			}
			// A server that ends stream after stream at once with nothing
			// in them (no message, no new event id) is asked again less and less
			// often: twice the wait each time, up to maxQuietWait, rather
			// than at its retry for the session's life.
			wait := retry
			if quiet > 0 && retry < maxQuietWait {
				wait = min(retry<<min(quiet, 10), maxQuietWait)
			}
			select {
			case <-time.After(wait):
			case <-c.ctx.Done():
			}
			continue
		}
		select {
		case <-time.After(time.Second):
		case <-c.ctx.Done():
		}
	}
}

func (c *httpConn) Read(ctx context.Context) ([]byte, error) {
	select {
	case in := <-c.in:
		return in.msg, in.err
	case <-c.ctx.Done():
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Close ends the streams, then deletes the session on the server: a GET
// stream still being opened would otherwise reach the server after the
// DELETE and get a 404 for the session it just ended.
func (c *httpConn) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.cancel()
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
		c.streams.Wait()
		if sid := c.sessionID(); sid != "" {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req, rerr := http.NewRequestWithContext(ctx, http.MethodDelete, c.t.URL, nil)
			if rerr == nil {
				c.header(req.Header)
				if resp, derr := c.hc.Do(req); derr == nil {
					resp.Body.Close()
				}
			}
		}
	})
	return err
}
