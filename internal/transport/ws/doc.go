// Package ws serves MCP over WebSocket (RFC 6455), at /mcp/ws by default in
// `mcpstack serve`.
//
// WebSocket is not a transport of the MCP specification (no revision
// defines one); this is mcpstack's extension, a custom transport as the
// specification allows: it keeps the JSON-RPC messages and the lifecycle
// unchanged and only frames them. A client needs nothing MCP-specific
// beyond what follows.
//
// # Handshake
//
// The client opens the socket with a GET upgrade request that offers the
// subprotocol "mcp" (Sec-WebSocket-Protocol: mcp); the server selects it.
// Before upgrading, the server answers with an HTTP error and a JSON-RPC
// error body without id:
//
//	405  not a GET (Allow: GET)
//	426  not a WebSocket upgrade (Upgrade: websocket)
//	403  Origin present and not allowed: by default only loopback origins
//	     (localhost, 127.0.0.1, [::1], any port) and the request's own host
//	400  subprotocol "mcp" not offered (the handshake is refused rather than
//	     upgraded and closed, so that no session is opened)
//	503  server shutting down, or the session cap reached (Retry-After)
//
// Authentication happens on the upgrade request, like on any other HTTP
// request (Authorization header): a client that is refused gets 401 or 403
// and no socket.
//
// # Framing
//
// One socket is one MCP session, from initialize to the close. Each text
// message (a text frame, or a text frame and its continuation frames)
// carries exactly one JSON-RPC message, or one batch (a JSON array), UTF-8
// encoded, in either direction; there is no other envelope, no newline
// delimiting, and no session id. A message may be up to 4 MiB (after
// reassembly); permessage-deflate is not negotiated. Server-to-client requests
// (sampling/createMessage, elicitation/create, roots/list, ping) and
// notifications (progress, logging, list changes, cancellation) travel on
// the same socket as the responses; the client answers the server's
// requests with text frames too. A batch is answered with one frame holding
// the array of responses.
//
// Requests are handled concurrently, so responses may come in any order:
// match them by id. initialize, notifications and responses are handled in
// the order they arrive, each before the next frame is read. A frame that
// is not JSON is answered with a -32700 error (without id) and the session
// goes on; an invalid message gets its JSON-RPC error (-32600, -32601,
// -32602), as on every transport. Closing the socket ends the session and
// cancels its calls in flight.
//
// The server pings every 25 seconds by default; a client that does not
// answer within 15 seconds is dropped. WebSocket libraries answer pings by
// themselves.
//
// # Close codes
//
//	1000  the session ended (closed by the server, e.g. after
//	      --session-idle-timeout)
//	1001  the server is shutting down (after the calls in flight finished,
//	      or the drain timed out)
//	1002  WebSocket protocol error (sent by the WebSocket library)
//	1003  a binary frame: only text frames are accepted
//	1007  a text frame that is not valid UTF-8
//	1009  a frame larger than the limit (4 MiB by default)
//	1011  the client did not answer a keepalive ping in time
//
// A client that does not read for 10 seconds while the server has a
// message for it is cut off without a close frame (1006 on its side).
package ws
