package check

import (
	"context"
	"encoding/json"
	"sync"

	"golang.org/x/time/rate"

	"github.com/mcpstack/mcpstack/client"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/server"
)

// recording is the log of a check: every message the check's client sends
// and receives, one line each, in the recording format `mcpstack validate`
// reads. It numbers the lines, so that a finding names the line of the
// message it is about, and paces what is sent (--rate).
type recording struct {
	rec     *record.Recorder
	limiter *rate.Limiter

	mu    sync.Mutex
	line  int
	calls map[string]*exchange // by session: its last request and answer
}

// exchange is the lines of a session's last request and of its answer (0
// until it comes): the check asks one thing at a time.
type exchange struct {
	id              string
	request, answer int
}

func newRecording(rec *record.Recorder, perSecond float64) *recording {
	lim := rate.NewLimiter(rate.Inf, 1)
	if perSecond > 0 {
		lim = rate.NewLimiter(rate.Limit(perSecond), 1)
	}
	return &recording{rec: rec, limiter: lim, calls: map[string]*exchange{}}
}

// envelope is what the recording reads of a message to number it.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// message records msg and returns its line.
func (r *recording) message(session string, dir server.Direction, msg []byte) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rec.Message(session, dir, msg)
	r.line++
	x := r.calls[session]
	if x == nil {
		x = &exchange{}
		r.calls[session] = x
	}
	var e envelope
	if json.Unmarshal(msg, &e) != nil {
		if dir == server.ClientToServer {
			*x = exchange{request: r.line} // bytes that are not JSON: a probe's, its own exchange
		}
		return r.line
	}
	if len(e.ID) == 0 || string(e.ID) == "null" {
		return r.line
	}
	switch {
	case dir == server.ClientToServer && e.Method != "":
		*x = exchange{id: string(e.ID), request: r.line}
	case dir == server.ServerToClient && e.Method == "" && string(e.ID) == x.id:
		x.answer = r.line
	}
	return r.line
}

// at is the line a finding about the session's last request names: its
// answer's, or the request's when no answer came.
func (r *recording) at(session string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	x := r.calls[session]
	switch {
	case x == nil:
		return 0
	case x.answer > 0:
		return x.answer
	}
	return x.request
}

func (r *recording) wait(ctx context.Context) error { return r.limiter.Wait(ctx) }

// tapped is a client transport whose connections are recorded and paced.
type tapped struct {
	client.Transport
	rec     *recording
	session string
}

func (t *tapped) Connect(ctx context.Context) (client.Conn, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tappedConn{Conn: c, rec: t.rec, session: t.session}, nil
}

type tappedConn struct {
	client.Conn
	rec     *recording
	session string
}

func (c *tappedConn) Send(ctx context.Context, msg []byte) error {
	if err := c.rec.wait(ctx); err != nil {
		return err
	}
	c.rec.message(c.session, server.ClientToServer, msg)
	return c.Conn.Send(ctx, msg)
}

func (c *tappedConn) Read(ctx context.Context) ([]byte, error) {
	msg, err := c.Conn.Read(ctx)
	if err == nil {
		c.rec.message(c.session, server.ServerToClient, msg)
	}
	return msg, err
}
