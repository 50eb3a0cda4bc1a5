package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/wire"
)

// listener is one open subscriptions/listen stream (2026-07-28): the
// notifications its filter asks for go to it, tagged with its id.
type listener struct {
	id     wire.ID
	spec   *protocol.Spec
	out    Outbox
	filter mcp.SubscriptionFilter
	queue  notifyQueue
	// tasks are the tasks whose status it follows (the tasks extension's
	// tasksStatus filter), those of its caller only.
	tasks map[string]bool
	// resources are the filter's resourceSubscriptions the handler
	// accepted, as a set: a resources/updated is matched in one look-up.
	resources map[string]bool
}

// tasksStatus is the filter member of the tasks extension: the ids of the
// tasks whose notifications/tasks/status a listen stream wants.
const tasksStatus = "tasksStatus"

// wants reports whether the filter asks for a notification.
func (l *listener) wants(method string, params any) bool {
	f := l.filter
	is := func(b *bool) bool { return b != nil && *b }
	switch method {
	case mcp.MethodToolListChanged:
		return is(f.ToolsListChanged)
	case mcp.MethodPromptListChanged:
		return is(f.PromptsListChanged)
	case mcp.MethodResourceListChanged:
		return is(f.ResourcesListChanged)
	case mcp.MethodTaskStatus:
		p, _ := params.(map[string]any)
		id, _ := p["taskId"].(string)
		return l.tasks[id]
	case mcp.MethodResourceUpdated:
		p, _ := params.(map[string]any)
		uri, _ := p["uri"].(string)
		return l.resources[uri]
	}
	return false
}

// send writes a notification on the stream, tagged with the subscription.
func (l *listener) send(s *Server, method string, params wire.Encoder) error {
	tree := jsontree.WithMeta(projectParams(l.spec, params), wire.MetaSubscriptionID, l.id.Value())
	msg, err := s.encodeMessage(l.spec, wire.ID{}, method, tree)
	if err != nil {
		return err
	}
	s.tap("", ServerToClient, msg)
	return l.out.Send(msg)
}

// listen serves subscriptions/listen: it acknowledges the filter, then
// forwards matching notifications until the client closes the stream or the
// server shuts down, and then ends the subscription with its result.
func (s *Server) listen(ctx context.Context, spec *protocol.Spec, m protocol.Method, msg *jsonrpc.Message, caps *mcp.ClientCapabilities, related Outbox) ([]byte, int) {
	if related == nil {
		return reject(msg.ID, &wire.Error{Code: wire.CodeInvalidRequest, Message: "Invalid Request: subscriptions/listen needs a streamed response (SSE, stdio or WebSocket)"})
	}
	params := new(mcp.SubscriptionsListenRequestParams)
	if err := params.DecodeValue(msg.Params, spec.Index); err != nil {
		return reject(msg.ID, wire.InvalidParams(jsontree.At(err, "params")))
	}
	uris, err := distinctSubscriptions(params.Notifications.ResourceSubscriptions)
	if err != nil {
		return reject(msg.ID, wire.InvalidParams(err))
	}
	// A listen stream is held open like a session, so it counts as one:
	// against the cap and the caller's share of it, taken before the
	// handler's Subscribe runs for its resources, so that a caller at its
	// share costs nothing more.
	key := CallerFrom(ctx).Key
	s.mu.Lock()
	_, err = s.reserveSessionLocked(key, len(s.sessions)+len(s.listeners)+s.listensStarting)
	if err == nil {
		s.listensStarting++ // counted against the cap until registered
	}
	s.mu.Unlock()
	if err != nil {
		return reject(msg.ID, &wire.Error{Code: wire.CodeServerBusy, Message: "Server busy: " + strings.TrimPrefix(err.Error(), "server: ")})
	}
	var l *listener
	defer func() {
		s.mu.Lock()
		if l == nil || !s.listeners[l] {
			s.listensStarting-- // it never registered (a panic in the handler's calls)
		}
		delete(s.listeners, l)
		s.releaseSessionLocked(key)
		s.mu.Unlock()
	}()
	params.Notifications.ResourceSubscriptions = s.subscribable(ctx, uris)
	l = &listener{id: msg.ID, spec: spec, out: related, filter: params.Notifications, resources: make(map[string]bool, len(params.Notifications.ResourceSubscriptions))}
	for _, uri := range params.Notifications.ResourceSubscriptions {
		l.resources[uri] = true
	}
	if ids, ok := params.Notifications.Extra[tasksStatus].([]any); ok {
		l.tasks = s.followable(ctx, spec, caps, ids)
		kept := make([]any, 0, len(l.tasks))
		for _, id := range ids {
			if id, _ := id.(string); l.tasks[id] {
				kept = append(kept, id)
			}
		}
		params.Notifications.Extra[tasksStatus] = kept
	}
	s.mu.Lock()
	if s.listeners == nil {
		s.listeners = map[*listener]bool{}
	}
	// The acknowledgement is the first in the stream's queue, before any
	// notification that comes once the listener is registered.
	ack := &mcp.SubscriptionsAcknowledgedNotificationParams{Notifications: params.Notifications}
	l.queue.push(mcp.MethodSubscriptionsAcknowledged, func() {
		if err := l.send(s, mcp.MethodSubscriptionsAcknowledged, ack); err != nil {
			s.log.Debug("listen stream: acknowledgement not sent", "err", err)
		}
	})
	s.listeners[l] = true
	s.listensStarting--
	s.mu.Unlock()
	expired, stop := CallerFrom(ctx).Expiry()
	defer stop()
	select {
	case <-ctx.Done():
		return nil, 0 // the client closed the stream
	case <-expired:
		return nil, 0 // its credentials expired: the stream ends without a result
	case <-s.stop:
	case <-s.draining:
	}
	res := map[string]any{"resultType": "complete", "_meta": map[string]any{wire.MetaSubscriptionID: msg.ID.Value()}}
	return s.encodeTree(spec, m, msg.ID, res), 0
}

// distinctSubscriptions drops repeated URIs from a listen filter and refuses
// one that names more than maxSubscriptions distinct resources, the bound a
// session's resources/subscribe has: each URI costs a call of the handler's
// Subscribe, so an unbounded list let one request cost seconds of CPU.
func distinctSubscriptions(uris []string) ([]string, error) {
	seen := make(map[string]bool, min(len(uris), maxSubscriptions))
	kept := make([]string, 0, min(len(uris), maxSubscriptions))
	for _, uri := range uris {
		if seen[uri] {
			continue
		}
		if len(kept) == maxSubscriptions {
			return nil, &wire.ValidationError{Pointer: "/params/notifications/resourceSubscriptions", Reason: fmt.Sprintf("more than %d distinct resources", maxSubscriptions), Keyword: "maxItems"}
		}
		seen[uri] = true
		kept = append(kept, uri)
	}
	return kept, nil
}

// subscribable keeps the URIs the handler lets the caller subscribe to,
// asking its Subscribe as resources/subscribe does in the session
// revisions: a resource the caller may not see (another user's) is never
// announced on its stream. The acknowledgement lists what was kept.
func (s *Server) subscribable(ctx context.Context, uris []string) []string {
	var kept []string
	for _, uri := range uris {
		_, err := s.guard(mcp.MethodSubscribe, func() (wire.Encoder, error) {
			return s.handler.Subscribe(ctx, &mcp.SubscribeRequestParams{URI: uri})
		})
		if err == nil {
			kept = append(kept, uri)
		}
	}
	return kept
}

// followable keeps the ids of tasks the caller may follow on a listen
// stream: its own tasks of the revision's tasks extension, where the
// caller declares it; at most maxFollowed. The acknowledgement lists what
// was kept.
func (s *Server) followable(ctx context.Context, spec *protocol.Spec, caps *mcp.ClientCapabilities, ids []any) map[string]bool {
	kept := map[string]bool{}
	ext := tasksExtension(spec)
	if ext == "" || !declares(caps, ext) {
		return kept
	}
	owner := extensionOwner(ctx)
	for _, id := range ids[:min(len(ids), maxFollowed)] {
		id, _ := id.(string)
		if _, found := s.lookupTask(owner, ext, id); found {
			kept[id] = true
		}
	}
	return kept
}

// tasksExtension is the extension of the revision that brings tasks, or
// "".
func tasksExtension(spec *protocol.Spec) string {
	for _, x := range spec.Extensions {
		if x.Tasks != nil {
			return x.ID
		}
	}
	return ""
}

// maxFollowed bounds the tasks one listen stream follows.
const maxFollowed = 256

// tellListeners sends notifications/tasks/status, the task as tasks/get
// would show it, to the listen streams that follow the task.
func (s *Server) tellListeners(t *task) {
	s.mu.Lock()
	ls := make([]*listener, 0, len(s.listeners))
	for l := range s.listeners {
		if l.tasks[t.id] {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	for _, l := range ls {
		l := l
		l.queue.push("task:"+t.id, func() { // one waiting to be sent sends the task as it is by then
			if err := l.send(s, mcp.MethodTaskStatus, t.statusParams()); err != nil {
				s.log.Debug("listen stream: task status", "task", t.id, "err", err)
			}
		})
	}
}

// notifyListeners forwards a notification to the listen streams that ask
// for it; tree is its params' canonical tree, key its coalescing key.
func (s *Server) notifyListeners(method string, params wire.Encoder, tree any, key string) {
	s.mu.Lock()
	ls := make([]*listener, 0, len(s.listeners))
	for l := range s.listeners {
		ls = append(ls, l)
	}
	s.mu.Unlock()
	for _, l := range ls {
		if l.wants(method, tree) {
			l.queue.push(key, func() { // a stream that is not read delays no other
				if err := l.send(s, method, params); err != nil {
					s.log.Debug("listen stream", "err", err)
				}
			})
		}
	}
}
