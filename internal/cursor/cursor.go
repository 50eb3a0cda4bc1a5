// Package cursor is the one pagination of mcpstack's lists: the
// registration layer's (through internal/methods/base) and the core's tasks/list.
//
// A cursor is base64url of "v1:<list>:<offset>": clients must treat it as
// opaque (the spec says so), and the list name makes a cursor of
// tools/list invalid for prompts/list. Cursors are stateless, so any
// replica can continue any listing.
package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/wire"
)

// prefix versions the cursor format, so a later format can tell old
// cursors apart.
const prefix = "v1:"

// Page returns the page of size items that cursor addresses ("" for the
// first page) and the cursor of the next page ("" on the last page). A
// cursor not issued for list is an error -32602 with data {field:
// "/params/cursor", reason}. A cursor past the end of a list that has
// shrunk since it was issued addresses an empty last page.
func Page[T any](items []T, list, cursor string, size int) (page []T, next string, err error) {
	start := 0
	if cursor != "" {
		start, err = Decode(list, cursor)
		if err != nil {
			return nil, "", err
		}
	}
	if start >= len(items) {
		return []T{}, "", nil
	}
	end := min(start+size, len(items))
	if end < len(items) {
		next = Encode(list, end)
	}
	return items[start:end:end], next, nil
}

// Encode returns the cursor of the page of list starting at offset.
func Encode(list string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + list + ":" + strconv.Itoa(offset)))
}

// Decode returns the offset a cursor of list addresses, or an error
// -32602 (a *wire.Error) when the cursor is malformed or belongs to
// another list.
func Decode(list, cursor string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, invalid(cursor, "not a cursor issued by this server")
	}
	rest, ok := strings.CutPrefix(string(raw), prefix)
	if !ok {
		return 0, invalid(cursor, "not a cursor issued by this server")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return 0, invalid(cursor, "not a cursor issued by this server")
	}
	if rest[:i] != list {
		return 0, invalid(cursor, "the cursor belongs to another list")
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != rest[i+1:] {
		return 0, invalid(cursor, "not a cursor issued by this server")
	}
	return n, nil
}

func invalid(cursor, reason string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "invalid cursor %q", cursor)
	e.Data = map[string]any{"field": "/params/cursor", "reason": reason}
	return e
}
