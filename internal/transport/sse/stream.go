package sse

import (
	"net/http"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/httpx"
)

// stream writes server-sent events on the GET response; it is the
// session's core.Outbox. Events have no id: 2024-11-05 has no
// resumption, a client that reconnects opens a new session. A client that
// does not read its stream loses it (and its session) once a write waits
// past the write timeout or its unsent bytes pass the output bound.
type stream struct {
	*httpx.EventWriter
	out *core.Output
}

func newStream(srv *core.Server, w http.ResponseWriter, r *http.Request, timeout time.Duration) *stream {
	st := &stream{}
	st.out = srv.NewOutput(func() { st.Abort() })
	st.EventWriter = httpx.NewEventWriter(w, r, timeout, st.out)
	return st
}

// start writes the headers of an event stream and sends them.
func (s *stream) start() {
	s.Start()
	s.Flush()
}

// Send writes one JSON-RPC message (or batch answer) as a "message" event.
func (s *stream) Send(msg []byte) error { return s.Event("", "message", msg, false) }

// close marks the stream ended; later sends fail. The handler calls it
// before it returns, as the ResponseWriter is dead after that.
func (s *stream) close() {
	s.Close()
	s.out.Close()
}
