// Command canned-echo is the floor of `make bench`: a bare net/http handler
// that answers each MCP message with a canned JSON answer, with no SDK, no
// parsing and no validation. A tools/call answer is the canned result with
// the request's id and text spliced in (the load generator checks both), found
// by two byte searches that assume the generator's own layout. It shows what
// the HTTP round trip alone costs on this machine; it is not an MCP server.
package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcpstack/mcpstack/internal/tools/bench/peers/internal/serve"
)

const name = "canned-echo"

const initializeResult = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"canned-echo","version":"1"}}`

// canned is the handler: a buffer pool and the session counter.
type canned struct {
	bufs     sync.Pool
	sessions atomic.Int64
}

func newCanned() *canned {
	return &canned{bufs: sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}}
}

// ServeHTTP answers a POST at /mcp: 202 for a notification, the canned
// initialize result, or the echo of a tools/call's text.
func (c *canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	bp := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(bp)
	body, err := readAll(r.Body, (*bp)[:0], 1<<20)
	*bp = body[:0]
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, ok := between(body, `"id":`, `,`)
	if !ok { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out := c.bufs.Get().(*[]byte)
	defer c.bufs.Put(out)
	a := append((*out)[:0], `{"jsonrpc":"2.0","id":`...)
	a = append(a, id...)
	if bytes.Contains(body, []byte(`"method":"initialize"`)) {
		w.Header().Set("Mcp-Session-Id", "canned-"+strconv.FormatInt(c.sessions.Add(1), 10))
		a = append(a, `,"result":`...)
		a = append(a, initializeResult...)
	} else {
		text, _ := between(body, `"text":"`, `"`)
		a = append(a, `,"result":{"content":[{"type":"text","text":"`...)
		a = append(a, text...)
		a = append(a, `"}]}`...)
	}
	a = append(a, '}')
	*out = a[:0]
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(a)
}

// between returns the bytes of b after the first from and before the next to.
func between(b []byte, from, to string) ([]byte, bool) {
	i := bytes.Index(b, []byte(from))
	if i < 0 {
		return nil, false
	}
	b = b[i+len(from):]
	j := bytes.Index(b, []byte(to))
	if j < 0 {
		return nil, false
	}
	return b[:j], true
}

// readAll reads r into buf, up to limit bytes.
func readAll(r io.Reader, buf []byte, limit int) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= limit {
				return buf, io.ErrShortBuffer
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

func main() {
	o := serve.Parse(name, os.Args[1:])
	if o.Stdio {
		serve.Fatal(name, errStdio{})
	}
	ctx, stop := serve.Context()
	defer stop()
	serve.Fatal(name, serve.ServeHTTP(ctx, o, newCanned()))
}

type errStdio struct{}

func (errStdio) Error() string { return "serves HTTP only" }
