package mcphttp

import "github.com/mcpstack/mcpstack/internal/transport/streamable"

// ResponseMode says how a POST carrying requests is answered over
// Streamable HTTP.
type ResponseMode string

// The response modes.
const (
	// ResponseAuto, the default, answers with one JSON body when the call
	// ends quickly without sending anything else, and as ResponseSSE's
	// resumable event stream from its first notification or server
	// request on (or once it has run 10 to 15 ms, so that a long call can
	// be resumed).
	ResponseAuto ResponseMode = "auto"
	// ResponseSSE answers with an event stream: notifications and server
	// requests about the call come first, the answer last; the stream has
	// event ids, so that a client that loses it resumes with Last-Event-ID.
	ResponseSSE ResponseMode = "sse"
	// ResponseJSON answers with one JSON body; what the call sends before
	// its answer goes to the session's GET stream.
	ResponseJSON ResponseMode = "json"
)

// EventStore keeps the events of resumable streams, so that a client that
// reconnects with Last-Event-ID gets what it missed. It sits beside
// server.SessionStore and server.TaskStore: the default is in memory,
// bounded by WithEventLimits; WithEventStore puts another behind it (one
// that replicas share, for a client that reconnects to another). It must
// be safe for concurrent use.
type EventStore interface {
	// Append stores the next event of a session's stream and returns its
	// id, which the client may send back as Last-Event-ID: it must name
	// the stream and the event's place in it. The numbers of a stream
	// never repeat; a stream whose name starts with "_" is the session's
	// GET stream, which lives as long as the session, quiet or not, so
	// its numbering is kept while the session is.
	Append(session, stream string, data []byte) (id string, err error)
	// Replay calls fn, in order, for each event of the session's stream
	// of lastID that came after it, and returns that stream. It fails with
	// ErrEventsGone when events after lastID have been dropped, and with
	// ErrUnknownEvent when lastID names no stream of the session; any
	// other error before an event is replayed is answered 503 with
	// Retry-After (the store is down: the client tries again).
	Replay(session, lastID string, fn func(id string, data []byte) error) (stream string, err error)
	// Forget drops a session's events: it has ended.
	Forget(session string)
}

// Errors of EventStore.Replay: the client gets 410 Gone for the first and
// 400 for the second (not 404, which would tell it its session is gone),
// and opens a fresh stream.
var (
	ErrEventsGone   = streamable.ErrEventsGone
	ErrUnknownEvent = streamable.ErrUnknownEvent
)

// WithEventStore keeps stream events in s instead of in memory (then
// WithEventLimits is s's to enforce). A store that replicas share may
// also give the per-client rate limits a counter they share, with a
// method RateCounter() httprate.LimitCounter (github.com/go-chi/httprate),
// called once per limit, so that a client's rates hold for the service;
// redisstore.NewEvents has one.
func WithEventStore(s EventStore) Option { return func(c *config) { c.events = s } }

// eventBytes reports what a store holds, for the observer's gauge, where
// the store can tell.
func eventBytes(s EventStore) func() int64 {
	if b, ok := s.(interface{ Bytes() int64 }); ok {
		return b.Bytes
	}
	return func() int64 { return 0 }
}
