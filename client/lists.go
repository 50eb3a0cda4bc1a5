package client

import (
	"context"
	"fmt"
	"hash/maphash"
	"iter"

	"github.com/mcpstack/mcpstack/mcp"
)

// The bounds of a paginated list: a server that never ends its list (a
// fresh cursor every time, or cursors in a cycle, with empty pages or
// full ones) ends the loop with an error, not with an endless one or
// memory that grows without bound.
var (
	maxPages     = 10_000    // a variable for the tests alone (export_test.go)
	maxListItems = 1_000_000 // likewise
)

// pages walks a paginated list: fetch gets the page after cursor ("" for
// the first) and returns its items and the next cursor.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		// The cursors seen are kept as hashes: a server's cursors may be
		// long, and there may be maxPages of them.
		seed := maphash.MakeSeed()
		cursor, seen, items := "", map[uint64]bool{}, 0
		for {
			page, next, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range page {
				if items++; items > maxListItems {
					yield(zero, fmt.Errorf("client: the list has more than %d items; stopped", maxListItems))
					return
				}
				if !yield(it, nil) {
					return
				}
			}
			seen[maphash.String(seed, cursor)] = true
			switch {
			case next == "":
				return
			case seen[maphash.String(seed, next)]:
				yield(zero, fmt.Errorf("client: the server gave the cursor %q twice: its list goes round in a cycle", excerpt(next)))
				return
			case len(seen) == maxPages:
				yield(zero, fmt.Errorf("client: the list has more than %d pages; stopped", maxPages))
				return
			}
			cursor = next
		}
	}
}

func page(cursor string) *mcp.PaginatedRequestParams {
	return &mcp.PaginatedRequestParams{Cursor: cursor}
}

// Tools lists every tool of the server, page by page as the loop goes. Like
// every list of the session, it ends with an error where the server gives
// a cursor twice, or more than 10,000 pages or 1,000,000 items.
func (s *Session) Tools(ctx context.Context) iter.Seq2[*mcp.Tool, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*mcp.Tool, string, error) {
		r, err := s.ListTools(ctx, page(cursor))
		if err != nil {
			return nil, "", err
		}
		return r.Tools, r.NextCursor, nil
	})
}

// Resources lists every resource of the server.
func (s *Session) Resources(ctx context.Context) iter.Seq2[*mcp.Resource, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
		r, err := s.ListResources(ctx, page(cursor))
		if err != nil {
			return nil, "", err
		}
		return r.Resources, r.NextCursor, nil
	})
}

// ResourceTemplates lists every resource template of the server.
func (s *Session) ResourceTemplates(ctx context.Context) iter.Seq2[*mcp.ResourceTemplate, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
		r, err := s.ListResourceTemplates(ctx, page(cursor))
		if err != nil {
			return nil, "", err
		}
		return r.ResourceTemplates, r.NextCursor, nil
	})
}

// Prompts lists every prompt of the server.
func (s *Session) Prompts(ctx context.Context) iter.Seq2[*mcp.Prompt, error] {
	return pages(ctx, func(ctx context.Context, cursor string) ([]*mcp.Prompt, string, error) {
		r, err := s.ListPrompts(ctx, page(cursor))
		if err != nil {
			return nil, "", err
		}
		return r.Prompts, r.NextCursor, nil
	})
}
