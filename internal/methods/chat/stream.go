package chat

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mcpstack/mcpstack/internal/jsontree"
	"github.com/mcpstack/mcpstack/internal/methods/chat/agent"
	"github.com/mcpstack/mcpstack/internal/protocol"
	"github.com/mcpstack/mcpstack/mcp"
	"github.com/mcpstack/mcpstack/peer"
	"github.com/mcpstack/mcpstack/schema"
	"github.com/mcpstack/mcpstack/wire"
)

// ContentStreamCapability is the experimental capability of the content
// events. A client opts in by declaring it in initialize:
//
//	"capabilities": {"experimental": {"io.mcpstack/content-stream": {}}}
//
// and the server announces it (when it can send the events) with the
// notification method and the events it sends:
//
//	"experimental": {"io.mcpstack/content-stream": {
//	    "method": "notifications/io.mcpstack/content",
//	    "events": ["content_start", "content_delta", "content_end"]}}
//
// During a chat call the client then receives, on the call's own stream
// and before the call's result, notifications of ContentNotification whose
// params are the events of schema/ext:
//
//	{"type": "content_start", "_meta": {...}}
//	{"type": "content_delta", "delta": "Quantum computing", "_meta": {...}}   (one per fragment)
//	{"type": "content_end", "conversation_id": "conv_...", "usage":
//	    {"prompt_tokens": 20, "completion_tokens": 150, "total_tokens": 170}, "_meta": {...}}
//
// Every event's _meta has "io.mcpstack/conversation_id", and
// "progressToken" when the call carried one, to tell concurrent calls
// apart. A call that fails after content_start still ends with content_end
// (without usage, with "io.mcpstack/error" in _meta).
const ContentStreamCapability = "io.mcpstack/content-stream"

// ContentNotification is the method of the content events.
const ContentNotification = "notifications/io.mcpstack/content"

// Definitions of the content events in schema/ext.
const (
	defContentStart = "ContentStartEvent"
	defContentDelta = "ContentDeltaEvent"
	defContentEnd   = "ContentEndEvent"
)

// ExtensionNotifier is implemented by a peer.Peer whose server can send
// notifications that are not in the negotiated revision's method table
// (the server's Notify refuses those). The server must:
//   - send {"jsonrpc":"2.0","method":method,"params":params} on the stream
//     of the current call (like Notify), without projecting params;
//   - accept only methods under "notifications/io.mcpstack/", so an
//     extension can never pass for a protocol message;
//   - in strict mode, validate params against definition of schema/ext
//     (protocol.NewValidator(schema.FS, "ext")) and refuse invalid ones.
//
// The chat app validates every event itself before it calls this.
type ExtensionNotifier interface {
	NotifyExtension(ctx context.Context, method, definition string, params any) error
}

// canStreamContent reports whether the server behind p can send content
// events.
func canStreamContent(p peer.Peer) bool {
	_, ok := p.(ExtensionNotifier)
	return ok
}

// wantsContentStream reports whether the client opted in.
func wantsContentStream(p peer.Peer) bool {
	if p == nil {
		return false
	}
	c := p.ClientCapabilities()
	if c == nil {
		return false
	}
	_, ok := c.Experimental[ContentStreamCapability]
	return ok
}

func contentStreamInfo() mcp.JSONObject {
	return mcp.JSONObject{
		"method": ContentNotification,
		"events": []any{"content_start", "content_delta", "content_end"},
	}
}

// extValidator holds the compiled schema/ext definitions.
var extValidator = sync.OnceValues(func() (*protocol.Validator, error) {
	return protocol.NewValidator(schema.FS, schema.Ext)
})

// stream sends the progress of one chat answer: each fragment as
// notifications/progress (when the call has a progress token) and as
// content events (when the client opted in and the server can). Failures
// to send are logged, never fatal to the call.
type stream struct {
	ctx    context.Context
	log    *slog.Logger
	convID string
	token  wire.ID
	ext    ExtensionNotifier // nil: no content events
	n      int               // fragments sent
	open   bool              // content_start sent, content_end not yet
}

func newStream(ctx context.Context, log *slog.Logger, convID string) *stream {
	s := &stream{ctx: ctx, log: log, convID: convID}
	p := peer.From(ctx)
	if p == nil {
		return s
	}
	s.token = p.ProgressToken()
	if en, ok := p.(ExtensionNotifier); ok && wantsContentStream(p) {
		s.ext = en
	}
	return s
}

func (s *stream) meta() map[string]any {
	m := map[string]any{"io.mcpstack/conversation_id": s.convID}
	if !s.token.IsZero() {
		m["progressToken"] = s.token.Value()
	}
	return m
}

// event validates an event against its schema/ext definition and sends
// it, with extra members in its _meta. An invalid event is a bug: it is
// logged and the events of the call stop.
func (s *stream) event(def string, ev map[string]any, extra map[string]any) {
	if s.ext == nil {
		return
	}
	m := s.meta()
	for k, v := range extra {
		m[k] = v
	}
	ev["_meta"] = m
	b, err := jsontree.Marshal(ev)
	var tree any
	if err == nil {
		tree, err = jsontree.Parse(b)
	}
	if err == nil {
		var v *protocol.Validator
		if v, err = extValidator(); err == nil {
			err = v.Validate(def, tree)
		}
	}
	if err != nil {
		s.log.Error("chat: invalid content event; no more events for this call", "definition", def, "err", err)
		s.ext = nil
		return
	}
	if err := s.ext.NotifyExtension(s.ctx, ContentNotification, def, tree); err != nil {
		s.log.Debug("chat: content event not sent", "definition", def, "err", err)
	}
}

func (s *stream) start() {
	s.open = true
	s.event(defContentStart, map[string]any{"type": "content_start"}, nil)
}

// delta passes one fragment on.
func (s *stream) delta(d string) error {
	if d == "" {
		return nil
	}
	if err := s.ctx.Err(); err != nil {
		return err
	}
	s.n++
	if !s.token.IsZero() {
		if err := peer.Progress(s.ctx, float64(s.n), nil, d); err != nil {
			s.log.Debug("chat: progress not sent", "err", err)
		}
	}
	s.event(defContentDelta, map[string]any{"type": "content_delta", "delta": d}, nil)
	return nil
}

// end closes the events: with usage after an answer, with the error
// after a failure.
func (s *stream) end(u *agent.Usage, failure error) {
	if !s.open {
		return
	}
	s.open = false
	ev := map[string]any{"type": "content_end", "conversation_id": s.convID}
	if u != nil {
		ev["usage"] = usageTree(*u, false)
	}
	var extra map[string]any
	if failure != nil {
		extra = map[string]any{"io.mcpstack/error": failure.Error()}
	}
	s.event(defContentEnd, ev, extra)
}

// usageTree renders usage as in the docs (StreamUsage), with
// "estimated": true when the counts are estimates and withEstimated.
func usageTree(u agent.Usage, withEstimated bool) map[string]any {
	m := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.TotalTokens,
	}
	if withEstimated && u.Estimated {
		m["estimated"] = true
	}
	return m
}
