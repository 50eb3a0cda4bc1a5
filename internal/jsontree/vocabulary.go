package jsontree

// vocabulary holds the member names (and a value) that nearly every MCP
// message carries, so that Parse returns them without allocating: the
// string for a name, the boxed string for a value. Any other string is
// copied as usual; the list changes only what costs an allocation.
var vocabulary = func() map[string]word {
	words := []string{
		// JSON-RPC
		"jsonrpc", "2.0", "id", "method", "params", "result", "error", "code", "message", "data",
		// MCP members found in most requests and results
		"_meta", "progressToken", "name", "arguments", "cursor", "nextCursor",
		"content", "type", "text", "isError", "structuredContent", "annotations",
		"uri", "mimeType", "title", "description",
		"protocolVersion", "capabilities", "clientInfo", "serverInfo", "version",
		"tools", "prompts", "resources", "inputSchema", "outputSchema", "properties", "required",
		"progress", "total", "requestId", "reason", "level", "logger",
	}
	m := make(map[string]word, len(words))
	for _, w := range words {
		m[w] = word{s: w, v: w}
	}
	return m
}()

// word is a vocabulary entry: the string, and the same string boxed once
// (nil for a string that is not in the vocabulary).
type word struct {
	s string
	v any
}
