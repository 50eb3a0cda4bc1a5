package jsontree

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Parse decodes one JSON document into a tree of map[string]any, []any,
// string, json.Number, bool and nil. Numbers stay json.Number so that large
// integer ids survive and the validator can tell integers from fractions.
//
// It reads as encoding/json does into an any with UseNumber (FuzzParse
// holds the two to the same trees and the same verdicts): the last of
// duplicate names wins, invalid UTF-8 and lone surrogates in strings
// become U+FFFD, nesting deeper than 10,000 is an error. It is a single
// pass with no reflection, a fifth of encoding/json's instructions.
//
// Every string is a copy of its own: a string kept from the tree (a chat
// message, a session's client name) keeps nothing else of the document.
// The names and values of the protocol's envelope (vocabulary.go) cost no
// allocation at all.
func Parse(data []byte) (any, error) {
	p := parser{data: data, maxDepth: maxParseDepth, stdDepth: true}
	return p.document()
}

// DepthError is ParseLimit's answer to a document that nests arrays and
// objects deeper than its limit.
type DepthError struct{ Limit int }

func (e *DepthError) Error() string { return fmt.Sprintf("JSON nests deeper than %d", e.Limit) }

// LengthError is ParseMembers' answer to a top-level array longer than its
// limit: a JSON-RPC batch, each of whose elements would be answered.
type LengthError struct{ Limit int }

func (e *LengthError) Error() string {
	return fmt.Sprintf("a top-level array of more than %d elements", e.Limit)
}

// ParseLimit is Parse with a bound on nesting: past maxDepth levels of
// arrays and objects it stops with a *DepthError, before it recurses
// further. Parse's bound is encoding/json's, 10,000.
func ParseLimit(data []byte, maxDepth int) (any, error) {
	p := parser{data: data, maxDepth: maxDepth}
	return p.document()
}

// Member is one name and value of an object, as the document gives it.
type Member struct {
	Name  string
	Value any
}

// ParseMembers is ParseLimit for a document whose top-level object is
// read as its members, appended to members in the document's order
// (duplicate names too: the last is the one a map would keep), rather
// than as a map: a JSON-RPC message's envelope, which its reader takes
// apart at once. Any other document is returned as ParseLimit returns it,
// with object false; a top-level array of more than maxTop elements (0: no
// bound) stops the parser there with a *LengthError, before it reads the
// rest.
func ParseMembers(data []byte, maxDepth, maxTop int, members []Member) (_ []Member, v any, object bool, err error) {
	p := parser{data: data, maxDepth: maxDepth, maxTop: maxTop}
	p.space()
	if p.i == len(p.data) {
		return members, nil, false, io.EOF
	}
	if p.data[p.i] != '{' || maxDepth < 1 {
		v, err := p.document()
		return members, v, false, err
	}
	for more, err := p.open(); more || err != nil; more, err = p.next() {
		if err != nil {
			return members, nil, false, err
		}
		key, v, err := p.member(1)
		if err != nil {
			return members, nil, false, err
		}
		members = append(members, Member{key, v})
	}
	p.space()
	if p.i != len(p.data) {
		return members, nil, false, errors.New("invalid character after top-level value")
	}
	return members, nil, true, nil
}

// document reads the one JSON value data holds.
func (p *parser) document() (any, error) {
	p.space()
	if p.i == len(p.data) {
		return nil, io.EOF
	}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i != len(p.data) {
		return nil, errors.New("invalid character after top-level value")
	}
	return v, nil
}

// maxParseDepth is encoding/json's bound on nesting.
const maxParseDepth = 10000

type parser struct {
	data     []byte
	i        int
	maxDepth int
	maxTop   int  // the most elements of a top-level array; 0: no bound
	stdDepth bool // Parse: encoding/json's bound, in its words
}

// tooDeep is the error past the parser's bound on nesting: encoding/json's
// words for Parse, a *DepthError for ParseLimit.
func (p *parser) tooDeep() error {
	if p.stdDepth {
		return errors.New("exceeded max depth")
	}
	return &DepthError{Limit: p.maxDepth}
}

func (p *parser) space() {
	for p.i < len(p.data) {
		switch p.data[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// syntax is the error at the current byte, worded as encoding/json's.
func (p *parser) syntax(context string) error {
	if p.i >= len(p.data) {
		return io.ErrUnexpectedEOF
	}
	return fmt.Errorf("invalid character %s %s", quoteChar(p.data[p.i]), context)
}

func quoteChar(c byte) string {
	switch c {
	case '\'':
		return `'\''`
	case '"':
		return `'"'`
	}
	s := strconv.Quote(string(rune(c)))
	return "'" + s[1:len(s)-1] + "'"
}

func (p *parser) value(depth int) (any, error) {
	if p.i >= len(p.data) {
		return nil, io.ErrUnexpectedEOF
	}
	switch c := p.data[p.i]; {
	case c == '{':
		if depth >= p.maxDepth {
			return nil, p.tooDeep()
		}
		return p.object(depth + 1)
	case c == '[':
		if depth >= p.maxDepth {
			return nil, p.tooDeep()
		}
		return p.array(depth + 1)
	case c == '"':
		return p.strValue()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	}
	return nil, p.syntax("looking for beginning of value")
}

func (p *parser) literal(word string) error {
	for k := 0; k < len(word); k++ {
		if p.i >= len(p.data) {
			return io.ErrUnexpectedEOF
		}
		if p.data[p.i] != word[k] {
			return p.syntax("in literal " + word + " (expecting " + quoteChar(word[k]) + ")")
		}
		p.i++
	}
	return nil
}

func (p *parser) object(depth int) (any, error) {
	obj := map[string]any{}
	for more, err := p.open(); more || err != nil; more, err = p.next() {
		if err != nil {
			return nil, err
		}
		key, v, err := p.member(depth)
		if err != nil {
			return nil, err
		}
		obj[key] = v
	}
	return obj, nil
}

// open steps over an object's '{' and reports whether a member follows.
func (p *parser) open() (bool, error) {
	p.i++ // {
	p.space()
	if p.i < len(p.data) && p.data[p.i] == '}' {
		p.i++
		return false, nil
	}
	return true, nil
}

// member reads one name and value of an object.
func (p *parser) member(depth int) (string, any, error) {
	if p.i >= len(p.data) {
		return "", nil, io.ErrUnexpectedEOF
	}
	if p.data[p.i] != '"' {
		return "", nil, p.syntax("looking for beginning of object key string")
	}
	key, err := p.key()
	if err != nil {
		return "", nil, err
	}
	p.space()
	if p.i >= len(p.data) {
		return "", nil, io.ErrUnexpectedEOF
	}
	if p.data[p.i] != ':' {
		return "", nil, p.syntax("after object key")
	}
	p.i++
	p.space()
	v, err := p.value(depth)
	return key, v, err
}

// next steps over what follows a member and reports whether another does.
func (p *parser) next() (bool, error) {
	p.space()
	if p.i >= len(p.data) {
		return false, io.ErrUnexpectedEOF
	}
	switch p.data[p.i] {
	case ',':
		p.i++
		p.space()
		return true, nil
	case '}':
		p.i++
		return false, nil
	}
	return false, p.syntax("after object key:value pair")
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	arr := []any{}
	p.space()
	if p.i < len(p.data) && p.data[p.i] == ']' {
		p.i++
		return arr, nil
	}
	for {
		if depth == 1 && p.maxTop > 0 && len(arr) == p.maxTop {
			return nil, &LengthError{Limit: p.maxTop}
		}
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
		p.space()
		if p.i >= len(p.data) {
			return nil, io.ErrUnexpectedEOF
		}
		switch p.data[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			return arr, nil
		default:
			return nil, p.syntax("after array element")
		}
	}
}

// key reads an object's member name; its quote is at p.i.
func (p *parser) key() (string, error) {
	if w, ok := p.short(); ok {
		return w.s, nil
	}
	return p.str()
}

// strValue reads a string value, boxed; its quote is at p.i.
func (p *parser) strValue() (any, error) {
	if w, ok := p.short(); ok {
		if w.v != nil {
			return w.v, nil
		}
		return w.s, nil
	}
	s, err := p.str()
	if err != nil {
		return nil, err
	}
	return s, nil
}

// short reads a string of printable ASCII without escapes, its quote at
// p.i: the vocabulary's word, or a copy of the text. For any other string
// it returns false and leaves p.i where it was.
func (p *parser) short() (word, bool) {
	start := p.i + 1
	end, ok := p.plain()
	if !ok {
		return word{}, false
	}
	if w, known := vocabulary.lookup(p.data[start:end]); known {
		return w, true
	}
	return word{s: string(p.data[start:end])}, true
}

// plain skips a string of printable ASCII without escapes, its quote at
// p.i, and returns where its text ends; false, p.i unmoved, for any other
// string.
func (p *parser) plain() (end int, ok bool) {
	data := p.data // a local: p.data would be loaded again each byte
	i := p.i + 1
	for i+8 <= len(data) && plainBits(binary.LittleEndian.Uint64(data[i:])) {
		i += 8
	}
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			p.i = i + 1
			return i, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return 0, false
		}
	}
	return 0, false
}

// str reads a string; its quote is at p.i.
func (p *parser) str() (string, error) {
	p.i++
	start := p.i
	// The common case: no escape, ASCII or valid UTF-8, one copy.
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			s := string(p.data[start:p.i])
			p.i++
			return s, nil
		case c == '\\':
			return p.unquote(start)
		case c < 0x20:
			return "", p.syntax("in string literal")
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			if r == utf8.RuneError && size == 1 {
				return p.unquote(start)
			}
			p.i += size
		}
	}
	return "", io.ErrUnexpectedEOF
}

// unquote reads a string with escapes or invalid UTF-8 from start, p.i
// anywhere inside it.
func (p *parser) unquote(start int) (string, error) {
	b := make([]byte, 0, p.i-start+16)
	b = append(b, p.data[start:p.i]...)
	for p.i < len(p.data) {
		c := p.data[p.i]
		switch {
		case c == '"':
			p.i++
			return string(b), nil
		case c < 0x20:
			return "", p.syntax("in string literal")
		case c == '\\':
			p.i++
			if p.i >= len(p.data) {
				return "", io.ErrUnexpectedEOF
			}
			switch e := p.data[p.i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				p.i++
			case 'b':
				b = append(b, '\b')
				p.i++
			case 'f':
				b = append(b, '\f')
				p.i++
			case 'n':
				b = append(b, '\n')
				p.i++
			case 'r':
				b = append(b, '\r')
				p.i++
			case 't':
				b = append(b, '\t')
				p.i++
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if p.i+1 < len(p.data) && p.data[p.i] == '\\' && p.data[p.i+1] == 'u' {
						save := p.i
						p.i++
						if r2, err = p.hex4(); err != nil {
							return "", err
						}
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							b = utf8.AppendRune(b, dec)
							continue
						}
						p.i = save // not a pair: the second escape stands alone
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				return "", p.syntax("in string escape code")
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.i++
		default:
			r, size := utf8.DecodeRune(p.data[p.i:])
			p.i += size
			b = utf8.AppendRune(b, r) // invalid UTF-8 becomes U+FFFD
		}
	}
	return "", io.ErrUnexpectedEOF
}

// hex4 reads the four hex digits after \u; p.i is at the u.
func (p *parser) hex4() (rune, error) {
	p.i++
	var r rune
	for k := 0; k < 4; k++ {
		if p.i >= len(p.data) {
			return 0, io.ErrUnexpectedEOF
		}
		c := p.data[p.i]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, p.syntax("in \\u hexadecimal character escape")
		}
		p.i++
	}
	return r, nil
}

// number reads a number as its text.
func (p *parser) number() (any, error) {
	start := p.i
	end, context := scanNumber(p.data, p.i)
	p.i = end
	switch {
	case context == "":
		return json.Number(p.data[start:p.i]), nil
	case p.i >= len(p.data):
		return nil, io.ErrUnexpectedEOF
	}
	return nil, p.syntax(context)
}

// scanNumber reads the number at s[i:], -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?,
// and returns where it ends; where it breaks off, also what it was
// reading, in encoding/json's words.
func scanNumber[T ~string | ~[]byte](s T, i int) (end int, context string) {
	digits := func() {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		digits()
	default:
		return i, "in numeric literal"
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, "after decimal point in numeric literal"
		}
		digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || s[i] < '0' || s[i] > '9' {
			return i, "in exponent of numeric literal"
		}
		digits()
	}
	return i, ""
}
