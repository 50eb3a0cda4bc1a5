package base

import "github.com/mcpstack/mcpstack/internal/cursor"

// DefaultPageSize is the page size of a Paginator whose PageSize is not set.
const DefaultPageSize = 50

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
func Paginate[T any](p Paginator, list string, items []T, c string) (page []T, next string, err error) {
	return cursor.Page(items, list, c, p.size())
}

// EncodeCursor returns the cursor of the page of list starting at offset.
func EncodeCursor(list string, offset int) string { return cursor.Encode(list, offset) }

// DecodeCursor returns the offset a cursor of list addresses, or an error
// -32602 when the cursor is malformed or belongs to another list.
func DecodeCursor(list, c string) (int, error) { return cursor.Decode(list, c) }
