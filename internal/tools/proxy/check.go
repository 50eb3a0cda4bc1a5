package proxy

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcpstack/mcpstack/internal/httpfacts"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// tap records what passes through the proxy, to a file (--record) and to
// a live check (--check), in the recording format of internal/record.
type tap struct {
	rec    *record.Recorder
	close  []func() error
	report chan validate.Report // the check's, when it ends
	// redact are the names (lower case) of the JSON members and headers
	// whose values the recording masks (--redact).
	redact map[string]bool
	file   *lenient // the recording's file; nil without --record
}

// lenient passes writes on to w until one fails, then takes the rest
// without passing them, so that what else the bytes go to goes on: the
// recording and the live check after the client has gone (the server's
// output), the live check after the recording's file failed. The first
// failure is told to warn, when set, at once.
type lenient struct {
	w    io.Writer
	warn io.Writer
	mu   sync.Mutex
	err  error
}

func (l *lenient) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		if _, l.err = l.w.Write(p); l.err != nil && l.warn != nil {
			fmt.Fprintln(l.warn, "mcpstack proxy: writing the recording failed; the session goes on unrecorded:", l.err)
		}
	}
	return len(p), nil
}

// failed is the first write's error (nil for none, or no writer).
func (l *lenient) failed() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
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
		t.file = &lenient{w: w, warn: findings}
		outs = append(outs, t.file)
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
// at any depth and inside strings (see maskString); msg itself when
// nothing is named or masked, and a placeholder when it is not JSON (a
// secret in it could not be found) or, masked, cannot be written again.
func (t *tap) masked(msg []byte) []byte {
	if len(t.redact) == 0 {
		return msg
	}
	tree, err := jsontree.Parse(msg)
	if err != nil {
		return []byte(redacted + " (not JSON: what it holds cannot be told)")
	}
	tree, did := t.maskValue(tree, 0)
	if !did {
		return msg
	}
	b, err := encodeJSON(tree)
	if err != nil {
		return []byte(redacted + " (masked, but could not be written again)")
	}
	return b
}

// encodeJSON writes a masked tree again: compact, and without escaping
// <, > and & (the text as it was, but for what is masked). A variable: a
// tree that jsontree.Parse made always encodes, and a test needs one that
// does not.
var encodeJSON = jsontree.Marshal

// maxEmbedded bounds how deep maskValue looks into JSON held in strings
// (JSON in a string in JSON...): a string beyond it that may hold a named
// member is masked whole.
const maxEmbedded = 8

// maskValue is v with the values of the named members masked (maps and
// slices in place), and whether anything was; embedded counts the
// strings around v.
func (t *tap) maskValue(v any, embedded int) (any, bool) {
	changed := false
	switch x := v.(type) {
	case string:
		return t.maskString(x, embedded)
	case map[string]any:
		for k, e := range x {
			if t.redact[strings.ToLower(k)] {
				x[k], changed = redacted, true
				continue
			}
			if blob, ok := e.(string); ok && k == "blob" {
				if m, did := t.maskBlob(blob, embedded); did {
					x[k], changed = m, true
				}
				continue
			}
			if m, did := t.maskValue(e, embedded); did {
				x[k], changed = m, true
			}
		}
	case []any:
		for i, e := range x {
			if m, did := t.maskValue(e, embedded); did {
				x[i], changed = m, true
			}
		}
	}
	return v, changed
}

// maskString is s with the named members in it masked, and whether
// anything was: a string may carry JSON (a tool's text content its
// structured result, a log its lines). One that starts as JSON does ({,
// [ or ", after space), or that mentions a named member (see mentions),
// is read as JSON, exactly, failing closed: as one value or a sequence
// of them (JSON Lines), the space around and between them kept, a string
// literal read for the text it holds (and that read the same way), each
// masked and written again. One that does not read so (text around JSON,
// a fenced block, a fragment, a Python dict), or is nested past
// maxEmbedded, is masked whole if it mentions a named member, as what in
// it is a secret cannot be told, and kept if it does not.
func (t *tap) maskString(s string, embedded int) (any, bool) {
	looks := startsJSON(s)
	if !looks && !t.mentions(s) {
		return s, false
	}
	if embedded < maxEmbedded {
		if m, did, ok := t.maskDocs(s, embedded); ok {
			return m, did
		}
	}
	if looks && !t.mentions(s) {
		return s, false
	}
	return redacted, true
}

// blobEncodings are the base64 encodings a blob is read in, the one MCP
// names (standard, padded) first; a masked blob is written again in the
// one it was read in.
var blobEncodings = []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}

// maskBlob is a blob (base64) with the named members in what it holds
// masked, as a string is (maskString: JSON read exactly, failing closed),
// and encoded again, and whether anything was. Whatever its mimeType says
// (it may say nothing, or name JSON Lines as text/plain or
// application/x-ndjson), a blob is read: one that holds UTF-8 text is
// masked as a string; text in UTF-16 or UTF-32 (NUL bytes between its
// letters) that names a member once they are dropped is masked whole, as
// what in it is a secret cannot be told; other bytes (an image) are kept.
// A blob that is not base64, even once its white space is dropped, is
// masked whole: a lenient reader may still decode it.
func (t *tap) maskBlob(blob string, embedded int) (any, bool) {
	compact := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' || r == '\f' || r == '\v' {
			return -1
		}
		return r
	}, blob)
	for _, enc := range blobEncodings {
		b, err := enc.DecodeString(compact)
		if err != nil {
			continue
		}
		text := string(b)
		var m any
		did := false
		switch {
		case utf8.ValidString(text) && strings.IndexByte(text, 0) < 0:
			m, did = t.maskString(text, embedded+1)
		case strings.IndexByte(text, 0) >= 0 && t.mentions(strings.ReplaceAll(text, "\x00", "")):
			m, did = redacted, true
		}
		if !did {
			return blob, false
		}
		s, _ := m.(string)
		return enc.EncodeToString([]byte(s)), true
	}
	return redacted, true
}

// startsJSON reports whether s, after space, starts as an object, an
// array or a string literal does.
func startsJSON(s string) bool {
	s = strings.TrimLeft(s, " \t\r\n")
	return s != "" && (s[0] == '{' || s[0] == '[' || s[0] == '"')
}

// maskDocs masks s read as a sequence of JSON values; ok is false when it
// does not read so (or what is masked cannot be written again).
func (t *tap) maskDocs(s string, embedded int) (masked string, did, ok bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var out strings.Builder
	last := 0
	for {
		var v any
		if err := dec.Decode(&v); err == io.EOF {
			break
		} else if err != nil {
			return "", false, false
		}
		end := int(dec.InputOffset())
		raw := s[last:end] // the value and the space before it
		doc := strings.TrimLeft(raw, " \t\r\n")
		out.WriteString(raw[:len(raw)-len(doc)])
		m, changed := t.maskValue(v, embedded+1)
		if changed {
			b, err := encodeJSON(m)
			if err != nil {
				return "", false, false
			}
			out.Write(b)
			did = true
		} else {
			out.WriteString(doc)
		}
		last = end
	}
	if !did {
		return s, false, true
	}
	out.WriteString(s[last:])
	return out.String(), true, true
}

// mentions reports whether s may hold a member --redact names: a name, in
// any case, between quotes (" as a JSON member's is written, or ' as a
// Python dict's), in s or in what s is once the escapes of a JSON string
// are undone, one level at a time (unescapeJSON) as strings in strings in
// JSON put them, until nothing changes: to maxEmbedded levels, and a
// string escaped deeper than that may hide one and counts as one that
// does. The bare name would do too much: every message, description or
// URI that merely says "password" would be masked whole, and with a
// short name (key, token) most of the text of a recording, which is kept
// to be read and validated; a name between quotes is how every JSON
// carrier, however loose, writes a member.
func (t *tap) mentions(s string) bool {
	for level := 0; ; level++ {
		if t.quotedName(strings.ToLower(s)) {
			return true
		}
		u := unescapeJSON(s)
		if u == s {
			return false
		}
		if level == maxEmbedded {
			return true
		}
		s = u
	}
}

// quotedName reports whether lower has a name --redact names in it
// between quotes.
func (t *tap) quotedName(lower string) bool {
	for name := range t.redact {
		for i := 0; ; {
			j := strings.Index(lower[i:], name)
			if j < 0 {
				break
			}
			j += i
			if end := j + len(name); j > 0 && end < len(lower) && isQuote(lower[j-1]) && isQuote(lower[end]) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

func isQuote(c byte) bool { return c == '"' || c == '\'' }

// unescapeJSON is s with the escapes of a JSON string undone, one level,
// as a JSON decoder reads them: \" \\ \/ \b \f \n \r \t, and \u with
// four hex digits (a surrogate pair one character, a lone surrogate
// U+FFFD); and \', a quote as Python and JavaScript escape it (a Python
// repr of a dict names its members so), which JSON never holds. A
// backslash before anything else is no escape and is kept, as is what
// follows it. s itself when it has no escape.
func unescapeJSON(s string) string {
	i := strings.IndexByte(s, '\\')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch e := s[i+1]; e {
		case '"', '\\', '/', '\'':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, i+2)
			if !ok {
				b.WriteByte(c) // no escape: the backslash kept, the u read next
				i++
				continue
			}
			i += 6
			if utf16.IsSurrogate(r) {
				if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2, ok := hex4(s, i+2); ok {
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							b.WriteRune(d)
							i += 6
							continue
						}
					}
				}
				r = utf8.RuneError
			}
			b.WriteRune(r)
			continue
		default:
			b.WriteByte(c) // no escape: the backslash kept, what follows read next
			i++
			continue
		}
		i += 2
	}
	return b.String()
}

// hex4 is the rune that the four hex digits at s[i:] stand for.
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
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
	err := errors.Join(t.file.failed(), t.rec.Close())
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
	scanned int   // bytes at the start of buf known to hold no newline
	looked  int64 // bytes looked at for newlines, in all: about those written
	max     int
	message func(msg []byte)
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	for {
		// Only the bytes not looked at yet: a long line that comes in
		// pieces is scanned once, not again with each piece.
		i := bytes.IndexByte(l.buf[l.scanned:], '\n')
		if i < 0 {
			l.looked += int64(len(l.buf) - l.scanned)
			l.scanned = len(l.buf)
			break
		}
		l.looked += int64(i + 1)
		i += l.scanned
		if line := trimCR(l.buf[:i]); len(line) > 0 {
			l.message(append([]byte(nil), line...))
		}
		l.buf, l.scanned = l.buf[i+1:], 0
	}
	if len(l.buf) > l.max { // a line longer than any message: recorded as it is, in pieces
		l.message(append([]byte(nil), l.buf...))
		l.buf, l.scanned = l.buf[:0], 0
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
	l.buf, l.scanned = nil, 0
}

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}
