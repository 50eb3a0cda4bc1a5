package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
)

// Transport opens connections to a server.
type Transport interface {
	Connect(ctx context.Context) (Conn, error)
}

// Conn carries JSON-RPC messages between the client and one server, one
// message per call. It is what a transport is; Session does the rest.
type Conn interface {
	// Send writes one message. For HTTP it is one request, whose answer
	// (JSON or an event stream) Read returns.
	Send(ctx context.Context, msg []byte) error
	// Read returns the next message from the server; ErrClosed (or the
	// transport's error) once the connection is over.
	Read(ctx context.Context) ([]byte, error)
	// Negotiated tells the connection the revision agreed on, for the
	// transports that repeat it (MCP-Protocol-Version over HTTP).
	Negotiated(revision string)
	// Close ends the connection (HTTP: DELETE of the session).
	Close() error
}

// ErrClosed is returned by a connection that was closed.
var ErrClosed = errors.New("client: connection closed")

// AnswerError is what Read returns (and reads on after) when the answer
// to a known request cannot be delivered: over HTTP a POST's response is
// the answer to its request, so a body that is not JSON (Body set), or a
// response stream that ended for good before the answer, fails that
// request at once instead of leaving it waiting.
type AnswerError struct {
	RequestID []byte // the request's id, as JSON
	Body      []byte // the body that is not JSON; nil when none came
	Reason    string
}

func (e *AnswerError) Error() string {
	return fmt.Sprintf("client: the answer to request %s: %s", e.RequestID, e.Reason)
}

// messageLimit is a transport's MaxMessage, 16 MiB where it is unset.
func messageLimit[T int | int64](n T) T {
	if n <= 0 {
		return 16 << 20
	}
	return n
}

// addHeader adds the headers a transport's user set (Authorization and
// the like) to a request's.
func addHeader(dst, src http.Header) {
	for k, vs := range src {
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}
