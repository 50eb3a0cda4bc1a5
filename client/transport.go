package client

import (
	"context"
	"errors"
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
