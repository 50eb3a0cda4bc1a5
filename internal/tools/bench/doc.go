// Package bench is "mcpstack bench": a load generator for any MCP server
// over Streamable HTTP or stdio, built on the standard library only.
//
// # What it measures
//
// N concurrent sessions call the tool "echo" ({"text": string}, answered by
// one text content with the same text), as "mcpstack serve --profile bench"
// and the peer servers in internal/tools/bench/peers serve it. A run reports the
// calls answered correctly per second, nearest-rank latency percentiles
// (p50, p90, p99, max) over the measured window that follows the warmup,
// the errors by kind, and the CPU used by the generator and, when its
// process is known, by the server.
//
// # The client
//
// The MCP client is written here, minimal and allocation-light:
//
//   - Streamable HTTP (revisions up to 2025-11-25): initialize, then
//     notifications/initialized, then tools/call after tools/call, each a
//     POST with Accept: application/json, text/event-stream, the
//     Mcp-Session-Id the server gave and MCP-Protocol-Version. The answer
//     is read from a JSON body or from an SSE stream (parsed as the HTML
//     standard says: CR, LF and CRLF line ends, comments, multi-line data,
//     priming events without data), skipping other messages until the
//     response with the request's id; the stream is then read to its end so
//     that the keep-alive connection is reused. All sessions share one
//     http.Transport with enough idle connections per host. A 404 on a
//     session makes it initialize again; sessions end with DELETE.
//   - From 2026-07-28 on there is no initialize and no session: each call
//     carries params._meta (protocol version, client capabilities) and the
//     MCP-Protocol-Version, Mcp-Method and Mcp-Name headers.
//   - stdio: the server command runs once per session; requests and
//     responses are single lines of JSON. A reader goroutine matches
//     responses to the Inflight outstanding calls by id and sends each
//     slot's next call at once; a writer goroutine flushes whenever its queue
//     is empty, so that bursts share a write.
//
// Every answer is checked: HTTP status, JSON-RPC error, isError, and that
// the content is exactly one text content with the text sent. Each call's
// text is stamped with its id, so an answer cannot be replayed.
//
// # Idle sessions
//
// Idle opens N sessions (initialize only), holds them, and reads the
// server's VmRSS from /proc/PID/status before and after: the growth per
// session is what an idle session costs, including the garbage the server
// has not yet returned (an upper bound).
//
// # Comparisons
//
// Compare runs several targets in interleaved rounds (A, B, C, A, B, C, ...)
// so that drift of a shared machine spreads over all of them, aggregates
// each target over its rounds, relates it to a baseline measured in the same
// run, and evaluates checks such as "ours>=2*gosdk". scripts/bench.sh runs
// mcpstack, the go-sdk peer and the mcp-go peer this way, each server pinned
// to one core and the generator to the other.
package bench
