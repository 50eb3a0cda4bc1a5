package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer is a minimal MCP server over Streamable HTTP with the bench
// profile's one tool, echo, and switches to misbehave.
type fakeServer struct {
	mode      string // "json", "sse" or "sse-fancy" (priming event, comments, notification first, data split over lines, CRLF)
	fault     string // "", "wrong-text", "rpc-error", "tool-error", "status-500", "expire" (404 every 50th call), "no-response", "linger" (SSE left open)
	stateless bool   // 2026-07-28: no initialize, check _meta and headers

	mu       sync.Mutex
	sessions map[string]bool
	nextSID  int
	calls    atomic.Int64
	deletes  atomic.Int64
	badHdr   atomic.Int64 // requests with wrong or missing headers
}

func newFakeServer(t *testing.T, mode, fault string) (*fakeServer, *httptest.Server) {
	t.Helper()
	f := &fakeServer{mode: mode, fault: fault, sessions: map[string]bool{}}
	srv := httptest.NewServer(f) // listens on 127.0.0.1
	t.Cleanup(srv.Close)
	return f, srv
}

type fakeRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		ProtocolVersion string `json:"protocolVersion"`
		Name            string `json:"name"`
		Arguments       struct {
			Text string `json:"text"`
		} `json:"arguments"`
		Meta map[string]json.RawMessage `json:"_meta"`
	} `json:"params"`
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/mcp" {
		http.NotFound(w, r)
		return
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodDelete {
		f.mu.Lock()
		delete(f.sessions, sid)
		f.mu.Unlock()
		f.deletes.Add(1)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if a := r.Header.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
		f.badHdr.Add(1)
		http.Error(w, "bad Accept", http.StatusNotAcceptable)
		return
	}
	if r.Header.Get("Content-Type") != "application/json" {
		f.badHdr.Add(1)
		http.Error(w, "bad Content-Type", http.StatusUnsupportedMediaType)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req fakeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if f.stateless {
		f.serveStateless(w, r, &req)
		return
	}
	if req.Method == "initialize" {
		f.mu.Lock()
		f.nextSID++
		sid = fmt.Sprintf("s%d", f.nextSID)
		f.sessions[sid] = true
		f.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
		f.respond(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"fake","version":"1"}}}`, req.ID, req.Params.ProtocolVersion))
		return
	}
	f.mu.Lock()
	live := f.sessions[sid]
	f.mu.Unlock()
	if !live {
		http.Error(w, "unknown session", http.StatusNotFound)
		return
	}
	if r.Header.Get("Mcp-Protocol-Version") != "2025-11-25" {
		f.badHdr.Add(1)
		http.Error(w, "bad MCP-Protocol-Version", http.StatusBadRequest)
		return
	}
	if req.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.call(w, &req, sid)
	if f.fault == "linger" {
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}
}

func (f *fakeServer) serveStateless(w http.ResponseWriter, r *http.Request, req *fakeRequest) {
	v := string(req.Params.Meta["io.modelcontextprotocol/protocolVersion"])
	if r.Header.Get("Mcp-Protocol-Version") != "2026-07-28" || v != `"2026-07-28"` ||
		r.Header.Get("Mcp-Method") != req.Method || r.Header.Get("Mcp-Name") != req.Params.Name ||
		r.Header.Get("Mcp-Session-Id") != "" || req.Params.Meta["io.modelcontextprotocol/clientCapabilities"] == nil {
		f.badHdr.Add(1)
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32020,"message":"header mismatch"}}`, req.ID)
		return
	}
	f.call(w, req, "")
}

func (f *fakeServer) call(w http.ResponseWriter, req *fakeRequest, sid string) {
	n := f.calls.Add(1)
	if req.Method != "tools/call" || req.Params.Name != "echo" {
		f.respond(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no"}}`, req.ID))
		return
	}
	text := req.Params.Arguments.Text
	switch {
	case f.fault == "status-500" && n%10 == 0:
		http.Error(w, "boom", http.StatusInternalServerError)
		return
	case f.fault == "expire" && n%50 == 0:
		f.mu.Lock()
		delete(f.sessions, sid)
		f.mu.Unlock()
		http.Error(w, "session expired", http.StatusNotFound)
		return
	case f.fault == "wrong-text" && n%10 == 0:
		text += "!"
	case f.fault == "rpc-error" && n%10 == 0:
		f.respond(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad"}}`, req.ID))
		return
	case f.fault == "tool-error" && n%10 == 0:
		f.respond(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"nope"}],"isError":true}}`, req.ID))
		return
	case f.fault == "no-response" && n%10 == 0:
		f.respond(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`)
		return
	}
	tb, _ := json.Marshal(text)
	f.respond(w, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`, req.ID, tb))
}

// respond writes one JSON-RPC message as the mode says.
func (f *fakeServer) respond(w http.ResponseWriter, msg string) {
	switch f.mode {
	case "json":
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, msg)
	case "sse":
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
	case "sse-fancy":
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		fl := w.(http.Flusher)
		io.WriteString(w, "id: 0\r\nretry: 1000\r\ndata:\r\n\r\n: a comment\r\n\r\n")
		fl.Flush()
		io.WriteString(w, "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\r\ndata: \"params\":{\"progressToken\":1,\"progress\":1}}\r\n\r\n")
		fl.Flush()
		io.WriteString(w, "event: ping\r\ndata: not json\r\n\r\n")
		// The response, split over data lines after its first comma.
		i := strings.IndexByte(msg, ',')
		fmt.Fprintf(w, "id: 1\r\nevent: message\r\ndata: %s\r\ndata: %s\r\n\r\n", msg[:i+1], msg[i+1:])
	default:
		panic("bad mode " + f.mode)
	}
}

// The test binary doubles as a stdio echo server: TestMain runs it when
// BENCH_TEST_STDIO is set (to "ok", or to a fault like the HTTP server's).
func TestMain(m *testing.M) {
	if fault, ok := os.LookupEnv("BENCH_TEST_STDIO"); ok {
		stdioEchoServer(fault)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func stdioEchoServer(fault string) {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	n := 0
	for in.Scan() {
		var req fakeRequest
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fmt.Fprintln(os.Stderr, "bad line:", err)
			os.Exit(3)
		}
		if req.ID == nil {
			continue
		}
		n++
		switch {
		case req.Method == "initialize":
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{}}}`+"\n", req.ID, req.Params.ProtocolVersion)
		case fault == "exit" && n == 20:
			out.Flush()
			fmt.Fprintln(os.Stderr, "fake server: giving up")
			os.Exit(1)
		case fault == "wrong-text" && n%10 == 0:
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"x"}]}}`+"\n", req.ID)
		default:
			// A log notification first, then the answer.
			fmt.Fprintln(out, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"x"}}`)
			tb, _ := json.Marshal(req.Params.Arguments.Text)
			fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":%s}]}}`+"\n", req.ID, tb)
		}
		if fault == "hang" && n > 1 {
			out.Flush()
			time.Sleep(time.Hour) // never answers again (the watchdog kills it)
		}
		out.Flush()
	}
	out.Flush()
}
