// Package interop holds interoperability tests: mcpstack's server driven by
// other implementations' clients, with the content of every answer checked,
// not only its shape.
//
// gosdk_test.go drives the conformance profile with the official Go SDK
// client (github.com/modelcontextprotocol/go-sdk/mcp, a test-only
// dependency) for each session revision (2024-11-05, 2025-03-26,
// 2025-06-18, 2025-11-25) over both transports:
//
//   - http: an in-process httptest server on 127.0.0.1 serving
//     streamable.New(srv) at /mcp, reached with the SDK's
//     StreamableClientTransport;
//   - stdio: the mcpstack binary, built once in TestMain, run as
//     `mcpstack serve --stdio --profile conformance --strict` through the
//     SDK's CommandTransport.
//
// Subtests are named REVISION/TRANSPORT/SCENARIO, e.g.
// TestGoSDK/2025-06-18/http/sampling:
//
//	go test -race ./interop/ -run 'TestGoSDK/2025-06-18/stdio'
//
// The SDK proposes the revision itself (mcp.ClientSessionOptions
// ProtocolVersion); no transport rewriting is needed.
package interop
