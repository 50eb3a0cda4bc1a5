package protocol

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// validURITemplate checks RFC 6570 syntax. The validator's built-in
// uri-template format parses the template as a URL, which refuses a
// variable in the host (conversation://{id}), though RFC 6570 allows it.
func validURITemplate(s string) error {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '{':
			j := strings.IndexByte(s[i+1:], '}')
			if j < 0 {
				return errors.New("expression without a closing brace")
			}
			if err := validExpression(s[i+1 : i+1+j]); err != nil {
				return err
			}
			i += j + 2
		case c == '}':
			return errors.New("closing brace without an expression")
		case c <= ' ' || c == 0x7f || strings.IndexByte("\"'<>\\^`|", c) >= 0:
			return fmt.Errorf("character %q is not allowed in a literal", c)
		default:
			i++
		}
	}
	return nil
}

func validExpression(e string) error {
	if e != "" && strings.IndexByte("+#./;?&=,!@|", e[0]) >= 0 {
		e = e[1:]
	}
	for _, spec := range strings.Split(e, ",") {
		name := strings.TrimSuffix(spec, "*")
		if k := strings.IndexByte(spec, ':'); k >= 0 {
			n, err := strconv.Atoi(spec[k+1:])
			if err != nil || n < 1 || n > 9999 || spec[k+1] == '+' {
				return fmt.Errorf("bad prefix length in %q", spec)
			}
			name = spec[:k]
		}
		if name == "" {
			return fmt.Errorf("empty variable name in {%s}", e)
		}
		for i := 0; i < len(name); i++ {
			c := name[i]
			switch {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '.':
			case c == '%' && i+2 < len(name) && isHex(name[i+1]) && isHex(name[i+2]):
				i += 2
			default:
				return fmt.Errorf("character %q is not allowed in variable name %q", c, name)
			}
		}
	}
	return nil
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
