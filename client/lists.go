package client

import (
	"context"
	"iter"

	"github.com/mcpstack/mcpstack/mcp"
)

// pages walks a paginated list: fetch gets the page after cursor ("" for
// the first) and returns its items and the next cursor.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, cursor string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		cursor := ""
		for {
			items, next, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" || next == cursor {
				return // the end (a cursor given twice would loop forever)
			}
			cursor = next
		}
	}
}

func page(cursor string) *mcp.PaginatedRequestParams {
	return &mcp.PaginatedRequestParams{Cursor: cursor}
}

// Tools lists every tool of the server, page by page as the loop goes.
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
