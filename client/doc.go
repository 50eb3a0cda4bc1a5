// Package client is an MCP client on the generated types that checks
// everything it receives: every message from the server is validated
// against the schema of the negotiated revision, every result against the
// method it answers, and a message that breaks the protocol is a
// *Violation naming the rule, the JSON pointer and the reason.
//
//	c := client.New("my-client", "1.0.0", client.WithSampling(answer))
//	s, err := c.Connect(ctx, &client.StreamableHTTP{URL: "http://127.0.0.1:8000/mcp"})
//	if err != nil { ... }
//	defer s.Close()
//	for tool, err := range s.Tools(ctx) { ... }
//	res, err := s.CallTool(ctx, &mcp.CallToolRequestParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
//
// Negotiation is initialize for the session revisions (2024-11-05 to
// 2025-11-25) and server/discover for 2026-07-28, whose requests carry
// their version and the client's capabilities in _meta; an input-required
// result is answered by the client's own handlers and the request retried,
// transparently. The capabilities the client declares are those of the
// handlers it was given (WithSampling, WithElicitation, WithRoots); a
// request the server sends for anything else is refused with -32601.
//
// Tasks: under 2025-11-25 StartTool runs a call as a task, GetTask,
// ListTasks and CancelTask follow it and ToolResult fetches its result;
// under the 2026-07-28 tasks extension, WithTasks lets the server answer a
// call with a task, which CallTool follows to its end.
//
// Transports: Command (stdio), StreamableHTTP, SSE (HTTP+SSE of
// 2024-11-05) and WebSocket; any other is a Transport of a few lines. The
// HTTP ones follow no redirect to another origin (RedirectError): the
// client's headers and messages are for the server it was given.
package client
