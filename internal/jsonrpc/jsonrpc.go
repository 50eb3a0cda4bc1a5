// Package jsonrpc is the JSON-RPC 2.0 envelope of MCP: it splits a body into
// messages (single or batch), tells requests, notifications and responses
// apart by which members are present, and encodes answers. It knows nothing
// of MCP methods or revisions; the schema check of each message comes after.
package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/wire"
)

// Kind says what a message is.
type Kind int

const (
	Request      Kind = iota + 1 // method and id
	Notification                 // method, no id
	Response                     // result or error, and id
)

// Message is one decoded JSON-RPC message.
type Message struct {
	Kind   Kind
	ID     wire.ID     // zero for notifications (and error responses without id)
	Method string      // requests and notifications
	Params any         // nil when absent
	Result any         // responses: the result member
	Error  *wire.Error // responses: the error member

	// What Root needs besides: the members as sent that the fields above
	// do not keep.
	rawID  any               // the id as sent (1.0 stays 1.0)
	rawErr any               // the error member as sent
	has    uint8             // which members of the envelope are present
	extra  []jsontree.Member // the members the envelope does not name, or a kind does not use
}

// Root is the message as the object it came as, for what needs all of it:
// the reference validator, a relay. The reader takes the envelope apart
// without making this map, so Root makes one on each call.
func (m *Message) Root() map[string]any {
	obj := make(map[string]any, 4+len(m.extra))
	for _, e := range m.extra {
		obj[e.Name] = e.Value
	}
	obj["jsonrpc"] = "2.0"
	if m.has&hasID != 0 {
		obj["id"] = m.rawID
	}
	if m.Kind == Response {
		if m.has&hasError != 0 {
			obj["error"] = m.rawErr
		} else {
			obj["result"] = m.Result
		}
		return obj
	}
	obj["method"] = m.Method
	if m.Params != nil {
		obj["params"] = m.Params
	}
	return obj
}

// Item is one element of a body: a message, or the error that answers an
// element that is not a valid message.
type Item struct {
	Msg *Message
	Err *wire.Error
	ID  wire.ID // the id of an invalid element, when it had a usable one
}

// Limits bound what Parse accepts.
type Limits struct {
	MaxDepth int // deepest nesting of arrays and objects; 0 means 128
	MaxBatch int // most messages in a batch; 0 means DefaultMaxBatch
}

// DefaultMaxBatch bounds a batch where Limits does not: each element of a
// batch is answered, so a body of 4 MiB of [0,0,0,...] would otherwise be
// two million error responses and as many log lines from one request.
const DefaultMaxBatch = 256

// Parse splits a body into items. A body that is not JSON at all is a
// -32700 error; an empty batch is a -32600 error. Each element of a batch is
// checked on its own, so one bad element does not lose the others.
func Parse(body []byte, lim Limits) (items []Item, batch bool, err *wire.Error) {
	return ParseInto(body, lim, nil)
}

// Single is room for a body of one message, the usual body: ParseInto
// decodes into it rather than allocate the item and the message. A caller
// that keeps it beside what it makes of the body (core's Call does) spares
// two allocations a call; the items ParseInto returns point into it.
type Single struct {
	item [1]Item
	msg  Message
}

// ParseInto is Parse, decoding a body of one message into one when it is
// not nil.
func ParseInto(body []byte, lim Limits, one *Single) (items []Item, batch bool, err *wire.Error) {
	max, maxBatch := lim.MaxDepth, lim.MaxBatch
	if max <= 0 {
		max = 128
	}
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	// The envelope is read as its members, not as a map: the message's
	// fields take them (a hostile body cannot make the parser recurse
	// without bound).
	var room [6]jsontree.Member
	members, tree, object, perr := jsontree.ParseMembers(body, max, maxBatch, room[:0])
	if perr != nil {
		var deep *jsontree.DepthError
		var long *jsontree.LengthError
		if errors.As(perr, &long) {
			return nil, true, &wire.Error{Code: wire.CodeInvalidRequest, Message: fmt.Sprintf("Invalid Request: a batch of more than %d messages", long.Limit)}
		}
		if errors.As(perr, &deep) {
			return nil, false, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: " + perr.Error()}
		}
		return nil, false, &wire.Error{Code: wire.CodeParseError, Message: "Parse error: " + perr.Error()}
	}
	if object {
		if one == nil {
			one = new(Single)
		}
		one.item[0] = decode(members, &one.msg)
		return one.item[:], false, nil
	}
	v, isBatch := tree.([]any)
	if !isBatch {
		return []Item{{Err: invalid("a message must be an object, got %s", jsontree.KindOf(tree))}}, false, nil
	}
	if len(v) == 0 {
		return nil, true, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: empty batch"}
	}
	items = make([]Item, len(v))
	for i, e := range v {
		obj, ok := e.(map[string]any)
		if !ok {
			items[i] = Item{Err: invalid("a message must be an object, got %s", jsontree.KindOf(e))}
			continue
		}
		members := make([]jsontree.Member, 0, len(obj))
		for k, x := range obj {
			members = append(members, jsontree.Member{Name: k, Value: x})
		}
		items[i] = decode(members, new(Message))
	}
	return items, true, nil
}

func invalid(format string, args ...any) *wire.Error {
	return &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: " + fmt.Sprintf(format, args...)}
}

// The members of the envelope, as bits of Message.has.
const (
	hasJSONRPC uint8 = 1 << iota
	hasID
	hasMethod
	hasParams
	hasResult
	hasError
)

// envelopeBit is the bit of a member the envelope names, 0 for another.
func envelopeBit(name string) uint8 {
	switch name {
	case "jsonrpc":
		return hasJSONRPC
	case "id":
		return hasID
	case "method":
		return hasMethod
	case "params":
		return hasParams
	case "result":
		return hasResult
	case "error":
		return hasError
	}
	return 0
}

// decode checks the envelope of one message, given as its members (the
// last of a duplicate name wins, as in a map), decoded into m.
func decode(members []jsontree.Member, m *Message) Item {
	*m = Message{}
	var rawJSONRPC, rawID, rawMethod, params, res, errv any
	for _, mb := range members {
		bit := envelopeBit(mb.Name)
		m.has |= bit
		switch bit {
		case hasJSONRPC:
			rawJSONRPC = mb.Value
		case hasID:
			rawID = mb.Value
		case hasMethod:
			rawMethod = mb.Value
		case hasParams:
			params = mb.Value
		case hasResult:
			res = mb.Value
		case hasError:
			errv = mb.Value
		}
	}
	var id wire.ID
	withID := m.has&hasID != 0
	if withID && rawID != nil {
		x, err := wire.IDFromValue(rawID)
		if err != nil {
			return Item{Err: invalid("id %v", err)}
		}
		id = x
	}
	if jv, _ := rawJSONRPC.(string); jv != "2.0" {
		return Item{Err: invalid(`"jsonrpc" must be "2.0"`), ID: id}
	}
	m.ID, m.rawID = id, rawID
	used := hasJSONRPC | hasID // the members this message's fields keep; Root gives back the others
	if m.has&hasMethod != 0 {
		method, ok := rawMethod.(string)
		if !ok || method == "" {
			return Item{Err: invalid(`"method" must be a non-empty string`), ID: id}
		}
		if m.has&hasResult != 0 {
			return Item{Err: invalid(`a message has "method" or "result", not both`), ID: id}
		}
		if m.has&hasParams != 0 {
			if _, ok := params.(map[string]any); !ok {
				return Item{Err: invalid(`"params" must be an object`), ID: id}
			}
		}
		switch {
		case !withID:
			m.Kind = Notification
		case rawID == nil:
			return Item{Err: invalid(`"id" must be a string or an integer, not null`)}
		default:
			m.Kind = Request
		}
		m.Method, m.Params = method, params
		m.keepOthers(members, used|hasMethod|hasParams)
		return Item{Msg: m}
	}
	switch {
	case m.has&hasResult != 0 && m.has&hasError != 0:
		return Item{Err: invalid(`a response has "result" or "error", not both`), ID: id}
	case m.has&hasResult != 0:
		if id.IsZero() {
			return Item{Err: invalid(`a result must carry the id of its request`)}
		}
		m.Kind, m.Result = Response, res
		m.keepOthers(members, used|hasResult)
		return Item{Msg: m}
	case m.has&hasError != 0:
		e, err := wire.ErrorOf(errv)
		if err != nil {
			return Item{Err: invalid("error member: %v", err), ID: id}
		}
		m.Kind, m.Error, m.rawErr = Response, e, errv
		m.keepOthers(members, used|hasError)
		return Item{Msg: m}
	}
	return Item{Err: invalid(`a message needs "method", "result" or "error"`), ID: id}
}

// keepOthers keeps, for Root, the members outside used.
func (m *Message) keepOthers(members []jsontree.Member, used uint8) {
	for _, mb := range members {
		if bit := envelopeBit(mb.Name); bit == 0 || bit&used == 0 {
			m.extra = append(m.extra, mb)
		}
	}
}

// appendID writes an id, or null for the zero id.
func appendID(b []byte, id wire.ID) []byte {
	switch {
	case id.IsZero():
		return append(b, "null"...)
	case id.IsInt():
		return strconv.AppendInt(b, id.Int(), 10)
	default:
		s, _ := json.Marshal(id.Str())
		return append(b, s...)
	}
}

// EncodeResult encodes a success response; result is a tree.
func EncodeResult(id wire.ID, result any) ([]byte, error) {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"result":`...)
	b, err := jsontree.AppendMarshal(b, result)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return append(b, '}'), nil
}

// AppendResult encodes a success response whose result appends itself in
// revision rev's shape; false when it declines (the caller then encodes its
// tree with EncodeResult).
func AppendResult(id wire.ID, rev int, result func(b []byte, rev int) ([]byte, bool)) ([]byte, bool) {
	b := make([]byte, 0, 256)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = appendID(b, id)
	b = append(b, `,"result":`...)
	b, ok := result(b, rev)
	if !ok {
		return nil, false
	}
	return append(b, '}'), true
}

// EncodeError encodes an error response. An error that answers no known
// request (a body that is not JSON, say) has no id member: MCP ids are
// strings or integers, never null, and 2025-11-25 made the member optional.
func EncodeError(id wire.ID, e *wire.Error) []byte {
	r, err := jsontree.Marshal(e.Object())
	if err != nil {
		r = []byte(fmt.Sprintf(`{"code":%d,"message":%q}`, e.Code, e.Message))
	}
	b := make([]byte, 0, len(r)+48)
	b = append(b, `{"jsonrpc":"2.0",`...)
	if !id.IsZero() {
		b = append(b, `"id":`...)
		b = appendID(b, id)
		b = append(b, ',')
	}
	b = append(b, `"error":`...)
	b = append(b, r...)
	return append(b, '}')
}

// EncodeRequest encodes a request (or, with a zero id, a notification);
// params is a tree or nil.
func EncodeRequest(id wire.ID, method string, params any) ([]byte, error) {
	obj := map[string]any{"jsonrpc": "2.0", "method": method}
	if !id.IsZero() {
		obj["id"] = id.Value()
	}
	if params != nil {
		obj["params"] = params
	}
	return jsontree.Marshal(obj)
}

// Batch joins encoded messages into one JSON array.
func Batch(msgs [][]byte) []byte {
	n := 2
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}
