// Package websocket serves MCP over WebSocket beside mcphttp's transports:
// one socket is one session, one text message one JSON-RPC message (or
// batch), subprotocol "mcp". No revision of the specification defines a
// WebSocket transport; this is mcpstack's extension, which `mcpstack
// serve` offers at /mcp/ws, and client.WebSocket speaks. The README's
// "Transports" section has the handshake, the close codes and the limits.
//
// A package of its own, so that a server that does not serve WebSocket
// does not link it.
package websocket

import (
	"context"
	"net/http"

	"github.com/mcpstack/mcpstack/internal/transport/ws"
	"github.com/mcpstack/mcpstack/mcphttp"
	"github.com/mcpstack/mcpstack/server"
)

// Path is where Transport is served.
const Path = "/mcp/ws"

// Transport is the WebSocket transport, for mcphttp.WithTransport. Its
// sockets are held to the handler's limits: a message to the largest
// body, each write to the write timeout, a socket's requests in flight to
// the handler's maximum, and a client's messages to its rate limits,
// counted apart from its HTTP requests.
func Transport() mcphttp.Transport { return transport{} }

type transport struct{}

func (transport) Path() string { return Path }

func (transport) Serve(srv *server.Server, l mcphttp.Limits) (http.Handler, func(context.Context) error) {
	h := ws.New(srv, ws.WithReadLimit(l.MaxBody), ws.WithWriteTimeout(l.WriteTimeout), ws.WithMaxConcurrent(l.MaxConcurrent),
		ws.WithRateLimit(l.Requests, l.RequestWindow), ws.WithByteRateLimit(l.Bytes, l.ByteWindow))
	return h, h.Shutdown
}
