package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/app"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/methods/base"
	"github.com/mcpstack/mcpstack/internal/methods/chat/store"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// Conversations as resources.
const (
	URIScheme   = "conversation://"
	URITemplate = "conversation://{id}"
	MIMEType    = "application/json"
	// resourcesList names the list in cursors.
	resourcesList = "resources"
)

// URI is the resource URI of a conversation.
func URI(id string) string { return URIScheme + id }

// conversationID returns the id in a conversation:// URI.
func conversationID(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, URIScheme)
	if !ok || id == "" || strings.ContainsAny(id, "/?#") {
		return "", false
	}
	return id, true
}

func (a *App) addResources() {
	a.AddResourceTemplate(app.ResourceTemplate{
		URITemplate: URITemplate,
		Name:        "conversation",
		Title:       "Conversation",
		Description: "One of your chat conversations as JSON: its title and its turns ({\"messages\": [...]}), with who answered and the token usage.",
		MIMEType:    MIMEType,
		Complete:    map[string]app.Completer{"id": a.completeIDs},
	}, func(ctx context.Context, uri string, _ map[string]string) (*mcp.ReadResourceResult, error) {
		user, err := a.caller(ctx)
		if err != nil {
			return nil, err
		}
		c, err := a.lookup(ctx, user, uri)
		if err != nil {
			return nil, err
		}
		body, err := jsontree.Marshal(conversationOf(c))
		if err != nil {
			return nil, err
		}
		return app.Text(uri, MIMEType, string(body)), nil
	})
}

// ListResources lists the caller's conversations, oldest first, one page
// at a time: the list is per user, so it is the app's own, not the
// layer's.
func (a *App) ListResources(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	offset := 0
	if p != nil && p.Cursor != "" {
		if offset, err = base.DecodeCursor(resourcesList, p.Cursor); err != nil {
			return nil, err
		}
	}
	limit := a.pageSize
	if limit <= 0 {
		limit = base.DefaultPageSize
	}
	convs, more, err := a.store.List(ctx, user, store.ListOptions{Offset: offset, Limit: limit})
	if err != nil {
		return nil, err
	}
	res := make([]*mcp.Resource, len(convs))
	for i, c := range convs {
		res[i] = &mcp.Resource{
			URI:         URI(c.ID),
			Name:        c.ID,
			Title:       c.Title,
			Description: fmt.Sprintf("Conversation with %d messages, last updated %s.", c.MessageCount, timestamp(c.UpdatedAt)),
			MIMEType:    MIMEType,
		}
	}
	next := ""
	if more {
		next = base.EncodeCursor(resourcesList, offset+len(convs))
	}
	ttl := int64(0)
	return &mcp.ListResourcesResult{Resources: res, NextCursor: next, CacheScope: "private", TTLMs: &ttl}, nil
}

// lookup reads the conversation a URI names, for user; -32002 when there
// is none (for user).
func (a *App) lookup(ctx context.Context, user, uri string) (*store.Conversation, error) {
	id, ok := conversationID(uri)
	if !ok {
		return nil, wire.ResourceNotFound(uri)
	}
	c, err := a.store.Get(ctx, user, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, wire.ResourceNotFound(uri)
	}
	return c, err
}

// Subscribe accepts a subscription to a conversation of the caller (the
// server core keeps it for the session); another user's conversation is
// -32002, exactly like one that does not exist.
func (a *App) Subscribe(ctx context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.lookup(ctx, user, p.URI); err != nil {
		return nil, err
	}
	return &mcp.EmptyResult{}, nil
}

// Unsubscribe ends a subscription of the calling session (one that does
// not exist is not an error); a caller without a user is refused, as for
// every method.
func (a *App) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	if _, err := a.caller(ctx); err != nil {
		return nil, err
	}
	return a.layerHandler.Unsubscribe(ctx, p)
}
