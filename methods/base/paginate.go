package base

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/mcpstack/mcpstack/wire"
)

// DefaultPageSize is the page size of a Paginator whose PageSize is not set.
const DefaultPageSize = 50

// cursorPrefix versions the cursor format, so a later format can tell old
// cursors apart.
const cursorPrefix = "v1:"

// Paginator cuts lists into pages addressed by opaque cursors. The zero
// value serves pages of DefaultPageSize.
//
// A cursor is base64url of "v1:<list>:<offset>": clients must treat it as
// opaque (the spec says so), and the list name makes a cursor of tools/list
// invalid for prompts/list. Cursors are stateless, so any replica can
// continue any listing.
type Paginator struct {
	// PageSize is the number of items per page (DefaultPageSize when <= 0).
	PageSize int
}

func (p Paginator) size() int {
	if p.PageSize <= 0 {
		return DefaultPageSize
	}
	return p.PageSize
}

// Paginate returns the page of items that cursor addresses ("" for the
// first page) and the cursor of the next page ("" on the last page). A
// cursor that this paginator did not issue for list is an error -32602 with
// data {field: "/params/cursor", reason}. A cursor past the end of a list
// that has shrunk since it was issued addresses an empty last page.
func Paginate[T any](p Paginator, list string, items []T, cursor string) (page []T, next string, err error) {
	start := 0
	if cursor != "" {
		start, err = DecodeCursor(list, cursor)
		if err != nil {
			return nil, "", err
		}
	}
	if start >= len(items) {
		return []T{}, "", nil
	}
	end := min(start+p.size(), len(items))
	if end < len(items) {
		next = EncodeCursor(list, end)
	}
	return items[start:end:end], next, nil
}

// EncodeCursor returns the cursor of the page of list starting at offset.
func EncodeCursor(list string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + list + ":" + strconv.Itoa(offset)))
}

// DecodeCursor returns the offset a cursor of list addresses, or an error
// -32602 when the cursor is malformed or belongs to another list.
func DecodeCursor(list, cursor string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, invalidCursor(cursor, "not a cursor issued by this server")
	}
	rest, ok := strings.CutPrefix(string(raw), cursorPrefix)
	if !ok {
		return 0, invalidCursor(cursor, "not a cursor issued by this server")
	}
	i := strings.LastIndexByte(rest, ':')
	if i < 0 {
		return 0, invalidCursor(cursor, "not a cursor issued by this server")
	}
	if rest[:i] != list {
		return 0, invalidCursor(cursor, "the cursor belongs to another list")
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 || strconv.Itoa(n) != rest[i+1:] {
		return 0, invalidCursor(cursor, "not a cursor issued by this server")
	}
	return n, nil
}

func invalidCursor(cursor, reason string) *wire.Error {
	e := wire.NewError(wire.CodeInvalidParams, "invalid cursor %q", cursor)
	e.Data = map[string]any{"field": "/params/cursor", "reason": reason}
	return e
}
