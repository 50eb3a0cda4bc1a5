package chat

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/generated/mcp"
	"github.com/mcpstack/mcpstack/methods/base"
	"github.com/mcpstack/mcpstack/methods/chat/store"
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

var templates = []*mcp.ResourceTemplate{{
	URITemplate: URITemplate,
	Name:        "conversation",
	Title:       "Conversation",
	Description: "One of your chat conversations as JSON: its title and its turns ({\"messages\": [...]}), with who answered and the token usage.",
	MIMEType:    MIMEType,
}}

func (a *App) pageSize() int {
	if a.pager.PageSize <= 0 {
		return base.DefaultPageSize
	}
	return a.pager.PageSize
}

// ListResources lists the caller's conversations, oldest first, one page
// at a time.
func (a *App) ListResources(ctx context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	offset := 0
	if c := cursor(p); c != "" {
		if offset, err = base.DecodeCursor(resourcesList, c); err != nil {
			return nil, err
		}
	}
	convs, more, err := a.store.List(ctx, user, store.ListOptions{Offset: offset, Limit: a.pageSize()})
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

// ListResourceTemplates lists conversation://{id}.
func (a *App) ListResourceTemplates(_ context.Context, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	page, next, err := base.Paginate(a.pager, "resourceTemplates", templates, cursor(p))
	if err != nil {
		return nil, err
	}
	defs := make([]*mcp.ResourceTemplate, len(page))
	for i, t := range page {
		d := *t
		defs[i] = &d
	}
	ttl := int64(0)
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: defs, NextCursor: next, CacheScope: "public", TTLMs: &ttl}, nil
}

// ReadResource returns a conversation of the caller as JSON. Anything
// else, another user's conversation included, is -32002.
func (a *App) ReadResource(ctx context.Context, p *mcp.ReadResourceRequestParams) (*mcp.ReadResourceResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	c, err := a.lookup(ctx, user, p.URI)
	if err != nil {
		return nil, err
	}
	body, err := wire.Marshal(conversationTree(c))
	if err != nil {
		return nil, err
	}
	ttl := int64(0)
	return &mcp.ReadResourceResult{
		Contents:   []mcp.ReadResourceResultContentsItem{&mcp.TextResourceContents{URI: p.URI, MIMEType: MIMEType, Text: string(body)}},
		CacheScope: "private", TTLMs: &ttl,
	}, nil
}

// lookup reads the conversation a URI names, for user; -32002 when there
// is none (for user).
func (a *App) lookup(ctx context.Context, user, uri string) (*store.Conversation, error) {
	id, ok := conversationID(uri)
	if !ok {
		return nil, resourceNotFound(uri)
	}
	c, err := a.store.Get(ctx, user, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, resourceNotFound(uri)
	}
	return c, err
}

// Subscribe records that the calling session wants
// notifications/resources/updated when a conversation of the caller
// changes. Another user's conversation is -32002.
func (a *App) Subscribe(ctx context.Context, p *mcp.SubscribeRequestParams) (*mcp.EmptyResult, error) {
	user, err := a.caller(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := a.lookup(ctx, user, p.URI); err != nil {
		return nil, err
	}
	sid := sessionID(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	set := a.subs[sid]
	if set == nil {
		set = map[string]struct{}{}
		a.subs[sid] = set
	}
	set[p.URI] = struct{}{}
	return &mcp.EmptyResult{}, nil
}

// Unsubscribe forgets a subscription of the calling session; forgetting
// one that does not exist is not an error.
func (a *App) Unsubscribe(ctx context.Context, p *mcp.UnsubscribeRequestParams) (*mcp.EmptyResult, error) {
	if _, err := a.caller(ctx); err != nil {
		return nil, err
	}
	sid := sessionID(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	if set := a.subs[sid]; set != nil {
		delete(set, p.URI)
		if len(set) == 0 {
			delete(a.subs, sid)
		}
	}
	return &mcp.EmptyResult{}, nil
}

func resourceNotFound(uri string) *wire.Error {
	return &wire.Error{Code: wire.CodeResourceNotFound, Message: "Resource not found", Data: map[string]any{"uri": uri}}
}
