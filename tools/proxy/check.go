package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/record"
	"github.com/mcpstack/mcpstack/tools/validate"
	"github.com/mcpstack/mcpstack/wire"
)

// tap records what passes through the proxy, to a file (--record) and to
// a live check (--check), in the recording format of server/record.
type tap struct {
	rec    *record.Recorder
	close  []func() error
	report chan validate.Report // the check's, when it ends
	// redact are the names (lower case) of the JSON members and headers
	// whose values the recording masks (--redact).
	redact map[string]bool
}

// newTap records to w (nil: nowhere) and checks when check is set; each
// finding goes to findings as the validator reaches it.
func newTap(w io.Writer, check bool, findings io.Writer, redact ...string) (*tap, error) {
	t := &tap{redact: map[string]bool{}}
	for _, name := range redact {
		t.redact[strings.ToLower(name)] = true
	}
	var outs []io.Writer
	if w != nil {
		outs = append(outs, w)
	}
	if check {
		pr, pw := io.Pipe()
		outs = append(outs, pw)
		v, err := validate.New(validate.WithLive(), validate.WithFormat(validate.FormatRecorded), validate.WithFindingHandler(func(f validate.Finding) { fmt.Fprintln(findings, "mcpstack proxy:", f) }))
		if err != nil {
			return nil, err
		}
		t.report = make(chan validate.Report, 1)
		go func() {
			t.report <- v.Check(context.Background(), []validate.Input{validate.ReaderInput("proxied", pr)})
			_, _ = io.Copy(io.Discard, pr) // a check that stopped early must not block the proxy
		}()
		t.close = append(t.close, pw.Close)
	}
	t.rec = record.New(io.MultiWriter(outs...), record.WithFlushInterval(0))
	return t, nil
}

// Each record is flushed as it is written: the live check sees it at
// once, and a proxy that dies loses nothing it passed.

// message records one message of a session.
func (t *tap) message(session string, dir server.Direction, msg []byte) {
	t.rec.Message(t.session(session), dir, t.masked(msg))
	_ = t.rec.Flush()
}

// messageHTTP records a message with the HTTP exchange that carried it.
func (t *tap) messageHTTP(session string, dir server.Direction, msg []byte, h *record.HTTP) {
	t.rec.MessageHTTP(t.session(session), dir, t.masked(msg), h)
	_ = t.rec.Flush()
}

// shutdown records the end of a session.
func (t *tap) shutdown(session string, dir server.Direction) {
	t.rec.Shutdown(t.session(session), dir)
	_ = t.rec.Flush()
}

// refused records an HTTP answer without a JSON-RPC body.
func (t *tap) refused(session string, status int, ids []wire.ID) {
	t.rec.Refused(t.session(session), status, ids)
	_ = t.rec.Flush()
}

// session is how the recording names a session: the id itself, or, when
// --redact names Mcp-Session-Id (a bearer of the session), a digest of
// it that still tells sessions apart.
func (t *tap) session(id string) string {
	if id == "" || !t.redact["mcp-session-id"] {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "redacted-" + hex.EncodeToString(sum[:8])
}

// redacted stands for a masked value in the recording.
const redacted = "[redacted]"

// masked is msg with the values of the members --redact names masked,
// at any depth; msg itself when nothing is named, and a placeholder when
// it is not JSON (a secret in it could not be found).
func (t *tap) masked(msg []byte) []byte {
	if len(t.redact) == 0 {
		return msg
	}
	tree, err := wire.Parse(msg)
	if err != nil {
		return []byte(redacted + " (not JSON: what it holds cannot be told)")
	}
	if !t.mask(tree, 0) {
		return msg
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return msg
	}
	return b
}

// maxEmbedded bounds how deep mask looks into JSON held in strings
// (JSON in a string in JSON...): a string beyond it that may hold a named
// member is masked whole.
const maxEmbedded = 8

// mask masks in place; it reports whether anything was. A string that is
// itself a JSON object or array (as a tool's text content carries its
// structured result) is searched too, and re-serialized in place when
// something in it is masked; embedded counts the strings around v.
func (t *tap) mask(v any, embedded int) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if t.redact[strings.ToLower(k)] {
				x[k], changed = redacted, true
				continue
			}
			if s, ok := e.(string); ok {
				if m, did := t.maskString(s, embedded); did {
					x[k], changed = m, true
				}
				continue
			}
			changed = t.mask(e, embedded) || changed
		}
	case []any:
		for i, e := range x {
			if s, ok := e.(string); ok {
				if m, did := t.maskString(s, embedded); did {
					x[i], changed = m, true
				}
				continue
			}
			changed = t.mask(e, embedded) || changed
		}
	}
	return changed
}

// maskString is s with the named members masked when s is a JSON object
// or array (space around it kept), and whether anything was.
func (t *tap) maskString(s string, embedded int) (string, bool) {
	doc := strings.TrimSpace(s)
	if len(doc) < 2 || (doc[0] != '{' && doc[0] != '[') {
		return s, false
	}
	if embedded >= maxEmbedded {
		// Too deep to parse again: masked whole if it may name one.
		lower := strings.ToLower(doc)
		for name := range t.redact {
			if strings.Contains(lower, name) {
				return redacted, true
			}
		}
		return s, false
	}
	tree, err := wire.Parse([]byte(doc))
	if err != nil || !t.mask(tree, embedded+1) {
		return s, false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the text as it was, but for what is masked
	if err := enc.Encode(tree); err != nil {
		return redacted, true
	}
	start := strings.Index(s, doc)
	return s[:start] + strings.TrimSuffix(b.String(), "\n") + s[start+len(doc):], true
}

// headers are the headers of an exchange the recording keeps
// (httpfacts.Kept), with the values --redact names masked.
func (t *tap) headers(h http.Header) map[string]string {
	out := httpfacts.Kept(h)
	for name := range out {
		if t.redact[strings.ToLower(name)] {
			out[name] = redacted
		}
	}
	return out
}

// end flushes the recording, ends the check and returns its report (nil
// without --check).
func (t *tap) end() (*validate.Report, error) {
	err := t.rec.Close()
	for _, c := range t.close {
		_ = c()
	}
	if t.report == nil {
		return nil, err
	}
	rep := <-t.report
	return &rep, err
}

// lines splits a stream of newline-delimited messages (stdio framing) for
// the tap, without changing what passes: Write gets the bytes as they
// flow, whole or in pieces.
type lines struct {
	mu      sync.Mutex
	buf     []byte
	max     int
	message func(msg []byte)
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		i := indexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		if line := trimCR(l.buf[:i]); len(line) > 0 {
			l.message(append([]byte(nil), line...))
		}
		l.buf = l.buf[i+1:]
	}
	if len(l.buf) > l.max { // a line longer than any message: recorded as it is, in pieces
		l.message(append([]byte(nil), l.buf...))
		l.buf = l.buf[:0]
	}
	return len(p), nil
}

// flush records what is left without a final newline.
func (l *lines) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line := trimCR(l.buf); len(line) > 0 {
		l.message(append([]byte(nil), line...))
	}
	l.buf = nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
