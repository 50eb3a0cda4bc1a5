package wire

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// ID is a JSON value that is either a string or an integer, as JSON-RPC
// request ids and MCP progress tokens are. It is comparable, so it can key a
// map of requests in flight. The zero ID is absent.
type ID struct {
	str   string
	num   int64
	isNum bool
	set   bool
}

// StringID returns the ID holding s.
func StringID(s string) ID { return ID{str: s, set: true} }

// IntID returns the ID holding n.
func IntID(n int64) ID { return ID{num: n, isNum: true, set: true} }

// IsZero reports whether the ID is absent.
func (id ID) IsZero() bool { return !id.set }

// IsInt reports whether the ID holds an integer.
func (id ID) IsInt() bool { return id.isNum }

// Int returns the integer of an integer ID, and 0 otherwise.
func (id ID) Int() int64 { return id.num }

// Str returns the string of a string ID, and "" otherwise.
func (id ID) Str() string { return id.str }

// String formats the ID for logs: integers bare, strings quoted.
func (id ID) String() string {
	switch {
	case !id.set:
		return "<none>"
	case id.isNum:
		return strconv.FormatInt(id.num, 10)
	default:
		return strconv.Quote(id.str)
	}
}

// Value returns the ID as a JSON tree value (nil when absent).
func (id ID) Value() any {
	switch {
	case !id.set:
		return nil
	case id.isNum:
		return json.Number(strconv.FormatInt(id.num, 10))
	default:
		return id.str
	}
}

// IDFromValue converts a decoded tree value into an ID. It accepts strings and
// integral numbers, and rejects everything else, null included.
func IDFromValue(v any) (ID, error) {
	switch x := v.(type) {
	case string:
		return StringID(x), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil {
			f, ferr := x.Float64()
			if ferr != nil || f != float64(int64(f)) {
				return ID{}, fmt.Errorf("must be a string or an integer, got %s", x)
			}
			n = int64(f)
		}
		return IntID(n), nil
	case float64:
		if x != float64(int64(x)) {
			return ID{}, fmt.Errorf("must be a string or an integer, got %v", x)
		}
		return IntID(int64(x)), nil
	case int64:
		return IntID(x), nil
	case int:
		return IntID(int64(x)), nil
	default:
		return ID{}, fmt.Errorf("must be a string or an integer, got %s", jsontree.KindOf(v))
	}
}

// MarshalJSON encodes the ID as a JSON string or number (null when absent).
func (id ID) MarshalJSON() ([]byte, error) {
	switch {
	case !id.set:
		return []byte("null"), nil
	case id.isNum:
		return strconv.AppendInt(nil, id.num, 10), nil
	default:
		return json.Marshal(id.str)
	}
}

// UnmarshalJSON decodes a JSON string or integer.
func (id *ID) UnmarshalJSON(b []byte) error {
	v, err := jsontree.Parse(b)
	if err != nil {
		return err
	}
	x, err := IDFromValue(v)
	if err != nil {
		return err
	}
	*id = x
	return nil
}
