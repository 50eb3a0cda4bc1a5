// Module peers holds the benchmark-only echo servers that `make bench`
// compares mcpstack against: the same one-tool server (`echo {text}`
// answering one text content with the same text) built on the official
// go-sdk (gosdk-echo) and on mark3labs/mcp-go (mcpgo-echo), and the floor
// under them all: canned-echo, a bare net/http handler that answers with a
// canned JSON answer (no SDK, no parsing, no validation).
//
// It is a separate module so that the root module never depends on either
// SDK; `go test ./...` and `go vet ./...` in the root skip it. Build it from
// this folder: `go build -o ../../../bin/ ./gosdk-echo ./mcpgo-echo ./canned-echo`.
//
// Both mains take the same flags as `mcpstack serve --profile bench`:
//
//	--http ADDR           serve Streamable HTTP on ADDR (default 127.0.0.1:0) at /mcp
//	--addr-file FILE      write the bound host:port to FILE once listening
//	--response-mode MODE  sse or json: how a POST carrying a request is answered
//	--stdio               serve newline-delimited JSON-RPC on stdin/stdout instead
package peers
