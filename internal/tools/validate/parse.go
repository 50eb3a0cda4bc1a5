package validate

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The log reader parses every line once, with this parser rather than
// encoding/json: it builds the same trees as jsontree.Parse (map[string]any,
// []any, string, json.Number, bool, nil; the last of duplicate keys wins,
// invalid UTF-8 becomes U+FFFD) at several times the speed, bounds the
// nesting, and can report where each member of the top-level object lies,
// so that findings quote a recorded message as it was written.
// FuzzParse holds it to encoding/json.

// maxDepth bounds the nesting of arrays and objects in a line.
const maxDepth = 1000

// syntaxError is a line that is not JSON.
type syntaxError struct {
	offset int // byte offset into the line
	msg    string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at column %d: %s", e.offset+1, e.msg)
}

type parser struct {
	data  []byte
	pos   int
	depth int
}

// span is where a member of the top-level object lies in the line.
type span struct {
	key        string
	start, end int
}

// parseJSON parses one JSON document.
func parseJSON(data []byte) (any, error) {
	p := parser{data: data}
	v, err := p.document(nil)
	return v, err
}

// parseJSONSpans parses one JSON document and, when it is an object,
// appends the span of each of its members' values to spans.
func parseJSONSpans(data []byte, spans []span) (any, []span, error) {
	p := parser{data: data}
	v, err := p.document(&spans)
	return v, spans, err
}

func (p *parser) document(spans *[]span) (any, error) {
	p.ws()
	var v any
	var err error
	if spans != nil && p.pos < len(p.data) && p.data[p.pos] == '{' {
		v, err = p.object(spans)
	} else {
		v, err = p.value()
	}
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.pos < len(p.data) {
		return nil, p.fail("unexpected %s after the top-level value", p.quoteAt())
	}
	return v, nil
}

func (p *parser) fail(format string, args ...any) error {
	return &syntaxError{offset: p.pos, msg: fmt.Sprintf(format, args...)}
}

func (p *parser) quoteAt() string {
	if p.pos >= len(p.data) {
		return "end of line"
	}
	c := p.data[p.pos]
	if c < 0x20 || c >= 0x7f {
		return fmt.Sprintf("byte 0x%02x", c)
	}
	return strconv.QuoteRune(rune(c))
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) value() (any, error) {
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of line, want a value")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(nil)
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	default:
		return nil, p.fail("unexpected %s, want a value", p.quoteAt())
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos >= len(word) && string(p.data[p.pos:p.pos+len(word)]) == word {
		p.pos += len(word)
		return nil
	}
	return p.fail("unexpected %s, want %q", p.quoteAt(), word)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.fail("nesting deeper than %d", maxDepth)
	}
	return nil
}

func (p *parser) object(spans *[]span) (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // {
	m := make(map[string]any, 4)
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for {
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return nil, p.fail("unexpected %s, want a member name", p.quoteAt())
		}
		k, err := p.key()
		if err != nil {
			return nil, err
		}
		p.ws()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.fail("unexpected %s, want ':'", p.quoteAt())
		}
		p.pos++
		p.ws()
		start := p.pos
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		if spans != nil {
			*spans = append(*spans, span{key: k, start: start, end: p.pos})
		}
		m[k] = v
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of line, want ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			p.depth--
			return m, nil
		default:
			return nil, p.fail("unexpected %s, want ',' or '}'", p.quoteAt())
		}
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // [
	a := make([]any, 0, 4)
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		p.ws()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of line, want ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			p.depth--
			return a, nil
		default:
			return nil, p.fail("unexpected %s, want ',' or ']'", p.quoteAt())
		}
	}
}

// keys that occur in almost every message: returned without allocating.
var interned = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"jsonrpc", "id", "method", "params", "result", "error", "code", "message", "data",
		"_meta", "progressToken", "progress", "total", "name", "arguments", "content", "type",
		"text", "isError", "structuredContent", "uri", "mimeType", "blob", "contents", "tools",
		"description", "inputSchema", "outputSchema", "properties", "required", "items",
		"annotations", "title", "resources", "prompts", "cursor", "nextCursor", "level", "logger",
		"requestId", "reason", "capabilities", "protocolVersion", "clientInfo", "serverInfo",
		"version", "role", "messages", "ts", "session", "dir", "msg", "event", "resultType",
		"enum", "default", "minimum", "maximum", "format", "additionalProperties",
	} {
		m[k] = k
	}
	return m
}()

// key reads a member name.
func (p *parser) key() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			if k, ok := interned[string(p.data[start:i])]; ok {
				p.pos = i + 1
				return k, nil
			}
			break
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	return p.str()
}

// str reads a string value.
func (p *parser) str() (string, error) {
	start := p.pos + 1
	plain, ascii := true, true
	i := start
	for ; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			break
		}
		if c == '\\' {
			plain = false
			i++ // skip the escaped byte; it is checked by unquote
			continue
		}
		if c < 0x20 {
			p.pos = i
			return "", p.fail("control character 0x%02x in a string", c)
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if i >= len(p.data) {
		p.pos = len(p.data)
		return "", p.fail("unexpected end of line in a string")
	}
	raw := p.data[start:i]
	p.pos = i + 1
	if plain && (ascii || utf8.Valid(raw)) {
		return string(raw), nil
	}
	s, off, msg := unquote(raw)
	if msg != "" {
		p.pos = start + off
		return "", p.fail("%s", msg)
	}
	return s, nil
}

// unquote decodes the body of a string with escapes or invalid UTF-8 as
// encoding/json does: invalid bytes and lone surrogates become U+FFFD.
func unquote(s []byte) (string, int, string) {
	b := make([]byte, 0, len(s)+8)
	for r := 0; r < len(s); {
		c := s[r]
		switch {
		case c == '\\':
			if r+1 >= len(s) {
				return "", r, "unfinished escape"
			}
			switch e := s[r+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
				r += 2
			case 'b':
				b = append(b, '\b')
				r += 2
			case 'f':
				b = append(b, '\f')
				r += 2
			case 'n':
				b = append(b, '\n')
				r += 2
			case 'r':
				b = append(b, '\r')
				r += 2
			case 't':
				b = append(b, '\t')
				r += 2
			case 'u':
				rr := hex4(s[r+2:])
				if rr < 0 {
					return "", r, `invalid \u escape`
				}
				r += 6
				if utf16.IsSurrogate(rr) {
					if r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if rr2 := hex4(s[r+2:]); rr2 >= 0 {
							if dec := utf16.DecodeRune(rr, rr2); dec != utf8.RuneError {
								r += 6
								b = utf8.AppendRune(b, dec)
								break
							}
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
			default:
				return "", r, fmt.Sprintf("invalid escape \\%s", string(rune(e)))
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			r += size
			b = utf8.AppendRune(b, rr)
		}
	}
	return string(b), 0, ""
}

func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

func (p *parser) number() (any, error) {
	start := p.pos
	d := p.data
	i := p.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	default:
		p.pos = i
		return nil, p.fail("unexpected %s in a number", p.quoteAt())
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.fail("unexpected %s after the decimal point", p.quoteAt())
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.fail("unexpected %s in an exponent", p.quoteAt())
		}
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
		}
	}
	p.pos = i
	return json.Number(d[start:i]), nil
}
