// Package auth makes the HTTP transports of an MCP server an OAuth 2.1
// resource server: it verifies bearer JWTs, answers what the MCP
// authorization spec (2025-06-18 and later) asks of a server that refuses
// a request, serves the RFC 9728 protected resource metadata, and hands
// the caller's identity to handwritten methods through the context.
// stdio needs none of it: a local process trusts its parent.
//
// # Modes
//
//   - off: no authentication. A server bound to a non-loopback address
//     refuses to start this way unless told --insecure (CheckBind).
//   - hs256: the embedded default. Tokens are HS256 JWTs signed with a
//     shared secret (at least 32 bytes, from a file or MCPSTACK_AUTH_SECRET);
//     `mcpstack token` mints them; NewHS256 verifies them.
//   - oauth: tokens come from an external authorization server and are
//     RS256 or ES256 JWTs checked against its JWKS (NewJWKS), which is
//     cached and refreshed; issuer and audience (the canonical URL of this
//     MCP endpoint, RFC 8707) are required.
//
// # What a refused request gets
//
// Tokens are read from the Authorization header only: a request with an
// access_token query parameter is refused with 400. Every refusal carries
// a JSON-RPC error body that answers no request (no id member, as
// jsonrpc.EncodeError writes it); the HTTP status and the WWW-Authenticate
// header are what clients act on.
//
//	no bearer token        401  WWW-Authenticate: Bearer realm="mcp", resource_metadata="URL"
//	invalid token          401  WWW-Authenticate: Bearer realm="mcp", error="invalid_token", error_description="...", resource_metadata="URL"
//	  (malformed, expired, not yet valid, wrong audience, wrong issuer,
//	  bad signature, algorithm not accepted, unknown key, no subject)
//	endpoint scope missing 403  WWW-Authenticate: Bearer realm="mcp", error="insufficient_scope", scope="...", error_description="...", resource_metadata="URL"
//	token in query string,
//	  two Authorization    400  WWW-Authenticate: Bearer realm="mcp", error="invalid_request", error_description="...", resource_metadata="URL"
//	another user's session 404  as an unknown session (the session is not revealed)
//
// scope="..." is added to a 401 challenge too when the endpoint requires
// scopes, and resource_metadata is left out when no metadata document is
// served (hs256 mode without an authorization server). The body codes are
// from JSON-RPC's implementation-defined server error range (MCP keeps
// -32000..-32019 for implementations):
//
//	CodeUnauthorized      -32001  401 bodies; data {"error": "invalid_token"} when a token was sent
//	CodeInsufficientScope -32003  403 bodies, and per-tool scope failures (below)
//	wire.CodeInvalidRequest -32600 400 bodies
//
// # Scopes
//
// Scopes the whole endpoint needs are checked by the middleware and refused
// with HTTP 403. Scopes one tool (or prompt, or resource) needs can only be
// known once the JSON-RPC message is dispatched, when the HTTP status may
// already be sent (an SSE stream) and a batch may mix allowed and refused
// calls; so RequireScopes and ScopeMap.Check return a JSON-RPC error that
// the server sends as it is:
//
//	{"code": -32003, "message": "Forbidden: insufficient scope: this needs \"notes:write\"",
//	 "data": {"error": "insufficient_scope", "scope": "notes:write", "missing": ["notes:write"]}}
//
// # Identity in methods
//
// The middleware puts the *Principal into the request's context; the
// Streamable HTTP transport hands that context (without its cancellation)
// to every call, so a method reads PrincipalFrom(ctx) or OwnerFrom(ctx).
// With authentication off, or over stdio, there is no principal:
// RequireScopes allows everything and OwnerFrom returns "", the one local
// user. Stores of per-user data (conversations) key their records by
// OwnerFrom(ctx) so that each user sees only their own.
//
// Every MCP session is bound to the principal that opened it, by the
// server core and on every transport: a request naming
// a session opened by someone else is answered 404, exactly like an
// unknown session. A stream held open on a request (SSE, listen,
// WebSocket) ends at its token's expiry (Principal.Deadline).
package auth
