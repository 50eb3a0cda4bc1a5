// Package loggen writes synthetic message logs in the recording format of
// schema/ext/RecordedMessage.json for benchmarks: many sessions, a few at a
// time interleaved, each a valid exchange (initialize, tool listings and
// calls with text, images and progress, resources, prompts, logging,
// sampling and roots requests to the client, pings, shutdown). The output
// depends only on the options, and validates without findings.
package loggen

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
)

// Options shape a log.
type Options struct {
	Size       int64  // stop at the first session end past this many bytes
	Seed       uint64 // the same seed gives the same log
	Concurrent int    // sessions interleaved at a time (default 8)
}

// Stats count what was written.
type Stats struct {
	Bytes    int64
	Lines    int64
	Sessions int64
}

// revisions are the ones with sessions (initialize): the logs it makes
// are session logs.
var revisions = func() []string {
	var out []string
	for _, s := range generated.Specs {
		if !s.Stateless() {
			out = append(out, s.Revision)
		}
	}
	return out
}()

var words = strings.Fields(`the quick brown fox jumps over lazy dog weather forecast rain sun cloud
wind storm temperature humidity pressure north south east west city river mountain valley report
summary detail value result status error retry cache index query table record field number string`)

type session struct {
	id      string
	rev     string
	step    int
	steps   int
	nextID  int
	nextSrv int
	queue   [][2]any // pending lines: dir, msg
}

type gen struct {
	rng   *rand.Rand
	w     *bufio.Writer
	st    Stats
	clock time.Time
	n     int
	image string
}

// Write writes a log of about opts.Size bytes to w.
func Write(w io.Writer, opts Options) (Stats, error) {
	if opts.Concurrent <= 0 {
		opts.Concurrent = 8
	}
	g := &gen{
		rng:   rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
		w:     bufio.NewWriterSize(w, 1<<20),
		clock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	img := make([]byte, 6<<10)
	for i := range img {
		img[i] = byte(g.rng.IntN(256))
	}
	g.image = base64.StdEncoding.EncodeToString(img)
	live := make([]*session, 0, opts.Concurrent)
	for {
		for len(live) < opts.Concurrent {
			if g.st.Bytes >= opts.Size {
				break
			}
			live = append(live, g.newSession())
		}
		if len(live) == 0 {
			break
		}
		i := g.rng.IntN(len(live))
		s := live[i]
		if len(s.queue) == 0 {
			if s.step >= s.steps {
				g.line(s, "c2s", nil, "shutdown")
				live = append(live[:i], live[i+1:]...)
				continue
			}
			g.plan(s)
		}
		l := s.queue[0]
		s.queue = s.queue[1:]
		g.line(s, l[0].(string), l[1], "")
		if err := g.w.Flush(); err != nil && g.st.Lines%1024 == 0 {
			return g.st, err
		}
	}
	return g.st, g.w.Flush()
}

func (g *gen) newSession() *session {
	g.n++
	g.st.Sessions++
	return &session{
		id:    fmt.Sprintf("%016x%016x", g.rng.Uint64(), uint64(g.n)),
		rev:   revisions[g.rng.IntN(len(revisions))],
		steps: 20 + g.rng.IntN(60),
	}
}

func (g *gen) line(s *session, dir string, msg any, event string) {
	g.clock = g.clock.Add(time.Duration(1+g.rng.IntN(5000)) * time.Microsecond)
	rec := map[string]any{"ts": g.clock.Format(time.RFC3339Nano), "session": s.id, "dir": dir}
	if event != "" {
		rec["event"] = event
	} else {
		rec["msg"] = msg
	}
	b, _ := json.Marshal(rec)
	b = append(b, '\n')
	n, _ := g.w.Write(b)
	g.st.Bytes += int64(n)
	g.st.Lines++
}

func (g *gen) text(min, max int) string {
	n := min + g.rng.IntN(max-min+1)
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[g.rng.IntN(len(words))])
	}
	return b.String()
}

func req(id int, method string, params map[string]any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func note(method string, params map[string]any) map[string]any {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

func result(id int, r any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "result": r}
}

func (s *session) push(dir string, msg any) { s.queue = append(s.queue, [2]any{dir, msg}) }

func (s *session) call(method string, params map[string]any) int {
	s.nextID++
	s.push("c2s", req(s.nextID, method, params))
	return s.nextID
}

func (g *gen) tools() []any {
	var out []any
	for i := 0; i < 12; i++ {
		out = append(out, map[string]any{
			"name":        fmt.Sprintf("tool_%d", i),
			"description": g.text(40, 160),
			"inputSchema": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"query": map[string]any{"type": "string", "description": g.text(10, 40)},
					"limit": map[string]any{"type": "integer", "minimum": 1},
					"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
				},
				"required": []any{"query"},
			},
		})
	}
	return out
}

// plan queues the next exchange of a session.
func (g *gen) plan(s *session) {
	defer func() { s.step++ }()
	if s.step == 0 {
		id := s.call("initialize", map[string]any{
			"protocolVersion": s.rev,
			"capabilities":    map[string]any{"sampling": map[string]any{}, "roots": map[string]any{"listChanged": true}},
			"clientInfo":      map[string]any{"name": "bench-client", "version": "1.0.0"},
		})
		s.push("s2c", result(id, map[string]any{
			"protocolVersion": s.rev,
			"capabilities": map[string]any{
				"tools": map[string]any{"listChanged": true}, "resources": map[string]any{"subscribe": true},
				"prompts": map[string]any{}, "logging": map[string]any{},
			},
			"serverInfo":   map[string]any{"name": "bench-server", "version": "1.0.0"},
			"instructions": g.text(60, 200),
		}))
		s.push("c2s", note("notifications/initialized", nil))
		id = s.call("tools/list", nil)
		s.push("s2c", result(id, map[string]any{"tools": g.tools()}))
		return
	}
	switch k := g.rng.IntN(100); {
	case k < 45: // a tool call with text, sometimes progress and logs
		tok := fmt.Sprintf("%s-%d", s.id[:8], s.nextID+1)
		id := s.call("tools/call", map[string]any{
			"name": fmt.Sprintf("tool_%d", g.rng.IntN(12)), "arguments": map[string]any{"query": g.text(10, 60), "limit": 1 + g.rng.IntN(50)},
			"_meta": map[string]any{"progressToken": tok},
		})
		steps := g.rng.IntN(4)
		for i := 1; i <= steps; i++ {
			s.push("s2c", note("notifications/progress", map[string]any{"progressToken": tok, "progress": i, "total": steps}))
		}
		if g.rng.IntN(3) == 0 {
			s.push("s2c", note("notifications/message", map[string]any{"level": "info", "logger": "bench", "data": g.text(20, 120)}))
		}
		content := []any{map[string]any{"type": "text", "text": g.text(100, 1500)}}
		if g.rng.IntN(4) == 0 {
			content = append(content, map[string]any{"type": "text", "text": g.text(200, 2500)})
		}
		s.push("s2c", result(id, map[string]any{"content": content, "isError": false}))
	case k < 52: // an image
		id := s.call("tools/call", map[string]any{"name": "tool_0", "arguments": map[string]any{"query": "chart"}})
		s.push("s2c", result(id, map[string]any{"content": []any{
			map[string]any{"type": "image", "data": g.image[:(2+g.rng.IntN(6))<<10], "mimeType": "image/png"},
			map[string]any{"type": "text", "text": g.text(20, 100)},
		}}))
	case k < 64: // resources
		uri := fmt.Sprintf("file:///data/%d.txt", g.rng.IntN(100))
		id := s.call("resources/read", map[string]any{"uri": uri})
		s.push("s2c", result(id, map[string]any{"contents": []any{map[string]any{"uri": uri, "mimeType": "text/plain", "text": g.text(200, 3000)}}}))
	case k < 70:
		id := s.call("resources/list", nil)
		var rs []any
		for i := 0; i < 10; i++ {
			rs = append(rs, map[string]any{"uri": fmt.Sprintf("file:///data/%d.txt", i), "name": fmt.Sprintf("%d.txt", i), "mimeType": "text/plain"})
		}
		s.push("s2c", result(id, map[string]any{"resources": rs}))
	case k < 78: // prompts
		id := s.call("prompts/get", map[string]any{"name": "summarize", "arguments": map[string]any{"topic": g.text(5, 30)}})
		s.push("s2c", result(id, map[string]any{"description": g.text(10, 50), "messages": []any{
			map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": g.text(100, 800)}},
		}}))
	case k < 86: // the server asks the client's model
		s.nextSrv++
		s.push("s2c", req(s.nextSrv, "sampling/createMessage", map[string]any{
			"messages":  []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": g.text(50, 400)}}},
			"maxTokens": 200,
		}))
		s.push("c2s", result(s.nextSrv, map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": g.text(50, 600)}, "model": "bench-model", "stopReason": "endTurn"}))
	case k < 90:
		s.nextSrv++
		s.push("s2c", req(s.nextSrv, "roots/list", nil))
		s.push("c2s", result(s.nextSrv, map[string]any{"roots": []any{map[string]any{"uri": "file:///home/user/project", "name": "project"}}}))
	default:
		id := s.call("ping", nil)
		s.push("s2c", result(id, map[string]any{}))
	}
}
