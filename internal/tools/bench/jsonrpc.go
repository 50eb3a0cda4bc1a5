package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/generated"
)

// isModern reports whether revision v has no initialize and no sessions
// (every request carries the protocol version in params._meta), as the
// generated revision table says; a revision the table does not know is
// taken to be like the newest it knows.
func isModern(v string) bool {
	spec := generated.Lookup(v)
	if spec == nil {
		spec = generated.Latest()
	}
	return spec.Stateless()
}

// Error kinds, the keys of Result.Errors.
const (
	errHTTP      = "http-status"   // an HTTP status other than 2xx
	errTransport = "transport"     // connection, I/O or process error
	errTimeout   = "timeout"       // no answer within --timeout
	errRPC       = "jsonrpc-error" // a JSON-RPC error response
	errToolError = "tool-error"    // a CallToolResult with isError
	errContent   = "wrong-content" // not exactly one text content with the sent text
	errMalformed = "malformed"     // a body or line that is not the expected JSON-RPC response
	errNoAnswer  = "no-response"   // an SSE stream or a JSON body without the response
	errSession   = "session"       // initialize failed
)

// callError is a failed call: its kind and a message.
type callError struct {
	kind string
	msg  string
}

func (e *callError) Error() string { return e.kind + ": " + e.msg }

func failf(kind, format string, args ...any) *callError {
	return &callError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// rpcMessage is any JSON-RPC message from the server, decoded as far as the
// benchmark needs: the result shapes of initialize and tools/call share it.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *rpcResult      `json:"result"`
	Error  *rpcError       `json:"error"`
}

type rpcResult struct {
	ProtocolVersion string        `json:"protocolVersion"` // initialize
	Content         []textContent `json:"content"`         // tools/call
	IsError         bool          `json:"isError"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// idEquals reports whether raw is the JSON number id.
func idEquals(raw json.RawMessage, id int64) bool {
	var buf [24]byte
	return bytes.Equal(bytes.TrimSpace(raw), strconv.AppendInt(buf[:0], id, 10))
}

// decodeMessage decodes one JSON-RPC message. It reports whether the
// message is the response to id; messages that are not (notifications and
// requests from the server, responses to other ids) are for the caller to
// skip.
func decodeMessage(b []byte, id int64, m *rpcMessage) (bool, *callError) {
	if err := decodeAny(b, m); err != nil {
		return false, err
	}
	if m.Method != "" || !idEquals(m.ID, id) {
		return false, nil
	}
	return true, m.check(b)
}

// decodeAny decodes one JSON-RPC message into m.
func decodeAny(b []byte, m *rpcMessage) *callError {
	*m = rpcMessage{}
	if err := json.Unmarshal(b, m); err != nil {
		return failf(errMalformed, "%v in %s", err, clip(b))
	}
	return nil
}

// check reports the error a response carries, or a response with neither
// result nor error (b is the raw message, for the report).
func (m *rpcMessage) check(b []byte) *callError {
	if m.Error != nil {
		return failf(errRPC, "%d %s", m.Error.Code, m.Error.Message)
	}
	if m.Result == nil {
		return failf(errMalformed, "response without result or error: %s", clip(b))
	}
	return nil
}

// checkEcho checks that a tools/call result is exactly one text content
// carrying text.
func checkEcho(r *rpcResult, text []byte) *callError {
	if r.IsError {
		msg := ""
		if len(r.Content) > 0 {
			msg = r.Content[0].Text
		}
		return failf(errToolError, "isError: %s", clipString(msg))
	}
	if len(r.Content) != 1 || r.Content[0].Type != "text" {
		return failf(errContent, "want one text content, got %d items", len(r.Content))
	}
	if r.Content[0].Text != string(text) {
		return failf(errContent, "echo text differs: sent %q, got %q", clip(text), clipString(r.Content[0].Text))
	}
	return nil
}

// requestBuilder writes the JSON-RPC requests of one session.
type requestBuilder struct {
	version string // requested protocol version
	modern  bool
}

func (b requestBuilder) meta(buf []byte) []byte {
	buf = append(buf, `"_meta":{"io.modelcontextprotocol/protocolVersion":`...)
	buf = strconv.AppendQuote(buf, b.version)
	return append(buf, `,"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpstack-bench","version":"1"}}`...)
}

func (b requestBuilder) initialize(buf []byte, id int64) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"initialize","params":{"protocolVersion":`...)
	buf = strconv.AppendQuote(buf, b.version)
	return append(buf, `,"capabilities":{},"clientInfo":{"name":"mcpstack-bench","version":"1"}}}`...)
}

func (b requestBuilder) initialized(buf []byte) []byte {
	return append(buf, `{"jsonrpc":"2.0","method":"notifications/initialized"}`...)
}

// call appends a tools/call of echo with text, which must need no JSON
// escaping (see fillText).
func (b requestBuilder) call(buf []byte, id int64, text []byte) []byte {
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = strconv.AppendInt(buf, id, 10)
	buf = append(buf, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...)
	buf = append(buf, text...)
	buf = append(buf, `"}`...)
	if b.modern {
		buf = append(buf, ',')
		buf = b.meta(buf)
	}
	return append(buf, `}}`...)
}

const textAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newText returns a text of n bytes that needs no JSON escaping.
func newText(n int) []byte {
	t := make([]byte, n)
	for i := range t {
		t[i] = textAlphabet[i%len(textAlphabet)]
	}
	return t
}

// stampText writes the low decimal digits of seq over the start of text (up
// to 12 of them), so that consecutive calls differ and an answer cannot be
// replayed from an earlier call.
func stampText(text []byte, seq int64) {
	n := min(len(text), 12)
	for i := n - 1; i >= 0; i-- {
		text[i] = byte('0' + seq%10)
		seq /= 10
	}
}

func clip(b []byte) string { return clipString(string(b)) }

func clipString(s string) string {
	const max = 120
	if len(s) > max {
		return s[:max] + "..."
	}
	return s
}
