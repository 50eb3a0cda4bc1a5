package jsontree

// vocabulary holds the member names, values and methods that nearly every
// MCP message carries, so that Parse returns them without allocating: the
// string for a name, the boxed string for a value. Any other string is
// copied as usual; the list changes only what costs an allocation.
var vocabulary = newWords(
	// JSON-RPC
	"jsonrpc", "2.0", "id", "method", "params", "result", "error", "code", "message", "data",
	// MCP members found in most requests and results
	"_meta", "progressToken", "name", "arguments", "cursor", "nextCursor",
	"content", "type", "text", "isError", "structuredContent", "annotations",
	"uri", "mimeType", "title", "description",
	"protocolVersion", "capabilities", "clientInfo", "serverInfo", "version",
	"tools", "prompts", "resources", "inputSchema", "outputSchema", "properties", "required",
	"progress", "total", "requestId", "reason", "level", "logger",
	// the methods most messages name
	"initialize", "notifications/initialized", "ping", "tools/call", "tools/list",
	"resources/read", "resources/list", "prompts/get", "prompts/list",
	"notifications/progress", "notifications/cancelled", "completion/complete",
)

// word is a vocabulary entry: the string, and the same string boxed once
// (nil for a string that is not in the vocabulary).
type word struct {
	s string
	v any
}

// words is an open-addressing table of words, hashed on their length and
// end bytes: cheaper than a map's hash of the whole string, which would
// cost about as much as the allocation it saves.
type words struct {
	slots [256]word
}

func newWords(list ...string) *words {
	w := &words{}
	for _, s := range list {
		i := wordHash(s)
		for w.slots[i].s != "" {
			i = (i + 1) % len(w.slots)
		}
		w.slots[i] = word{s: s, v: s}
	}
	return w
}

func wordHash[T ~string | ~[]byte](b T) int {
	if len(b) == 0 {
		return 0
	}
	return (len(b)*31 + int(b[0])*7 + int(b[len(b)-1])) % 256
}

// lookup finds text among the words.
func (w *words) lookup(text []byte) (word, bool) {
	if len(text) == 0 {
		return word{}, false
	}
	for i := wordHash(text); w.slots[i].s != ""; i = (i + 1) % len(w.slots) {
		if w.slots[i].s == string(text) {
			return w.slots[i], true
		}
	}
	return word{}, false
}
