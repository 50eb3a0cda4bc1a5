package validate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/jsontree"
)

// harOf builds a HAR document of entries given as
// {method, url, request headers, body, status, response headers, answer}.
func harOf(t *testing.T, entries ...map[string]any) string {
	t.Helper()
	var es []any
	for i, e := range entries {
		hs := func(m any) []any {
			var out []any
			for k, v := range m.(map[string]string) {
				out = append(out, map[string]any{"name": k, "value": v})
			}
			return out
		}
		entry := map[string]any{
			"startedDateTime": e["start"], "time": e["time"],
			"request":  map[string]any{"method": e["method"], "url": e["url"], "headers": hs(e["reqH"])},
			"response": map[string]any{"status": e["status"], "headers": hs(e["respH"]), "content": map[string]any{"mimeType": "", "text": e["answer"]}},
		}
		if b, ok := e["body"].(string); ok {
			entry["request"].(map[string]any)["postData"] = map[string]any{"mimeType": "application/json", "text": b}
		}
		_ = i
		es = append(es, entry)
	}
	b, err := json.Marshal(map[string]any{"log": map[string]any{"version": "1.2", "entries": es}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// HAR files of correct traffic validate with nothing found: HTTP+SSE at a
// Streamable HTTP revision (its POSTs answered 202, its answers on the GET
// stream), and a Streamable HTTP session whose DELETE ends its GET stream
// (the stream's events, placed at its end, come before the shutdown).
func TestHARCorrectTraffic(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	result := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"s","version":"1"}}}`
	initialized := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	listed := `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`
	json := map[string]string{"Content-Type": "application/json"}
	none := map[string]string{}
	for name, doc := range map[string]string{
		"http+sse": harOf(t,
			map[string]any{"start": "2026-12-01T10:00:00Z", "time": 5000.0, "method": "GET", "url": "http://127.0.0.1:9/sse", "reqH": map[string]string{"Accept": "text/event-stream"},
				"status": 200, "respH": map[string]string{"Content-Type": "text/event-stream"},
				"answer": "event: endpoint\ndata: /messages?sessionId=abc\n\nevent: message\ndata: " + result + "\n\nevent: message\ndata: " + listed + "\n\n"},
			map[string]any{"start": "2026-12-01T10:00:01Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=abc", "reqH": json, "body": init, "status": 202, "respH": none, "answer": ""},
			map[string]any{"start": "2026-12-01T10:00:02Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=abc", "reqH": json, "body": initialized, "status": 202, "respH": none, "answer": ""},
			map[string]any{"start": "2026-12-01T10:00:03Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=abc", "reqH": json, "body": list, "status": 202, "respH": none, "answer": ""},
		),
		"http+sse batch": harOf(t, // 2025-03-26 has batches: the batch's answer goes after its POST
			map[string]any{"start": "2026-12-01T10:00:00Z", "time": 5000.0, "method": "GET", "url": "http://127.0.0.1:9/sse", "reqH": map[string]string{"Accept": "text/event-stream"},
				"status": 200, "respH": map[string]string{"Content-Type": "text/event-stream"},
				"answer": "event: endpoint\ndata: /messages?sessionId=b\n\nevent: message\ndata: " + strings.ReplaceAll(result, "2025-11-25", "2025-03-26") +
					"\n\nevent: message\ndata: [" + listed + "," + strings.ReplaceAll(listed, `"id":1`, `"id":2`) + "]\n\n"},
			map[string]any{"start": "2026-12-01T10:00:01Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=b", "reqH": json, "body": strings.ReplaceAll(init, "2025-11-25", "2025-03-26"), "status": 202, "respH": none, "answer": ""},
			map[string]any{"start": "2026-12-01T10:00:02Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=b", "reqH": json, "body": initialized, "status": 202, "respH": none, "answer": ""},
			map[string]any{"start": "2026-12-01T10:00:03Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/messages?sessionId=b", "reqH": json,
				"body": "[" + list + "," + strings.ReplaceAll(list, `"id":1`, `"id":2`) + "]", "status": 202, "respH": none, "answer": ""},
		),
		"delete ends a stream": harOf(t,
			map[string]any{"start": "2026-12-01T10:00:00Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/mcp", "reqH": json, "body": init, "status": 200,
				"respH": map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": "s1"}, "answer": result},
			map[string]any{"start": "2026-12-01T10:00:01Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/mcp", "reqH": map[string]string{"Mcp-Session-Id": "s1", "Mcp-Protocol-Version": "2025-11-25"},
				"body": initialized, "status": 202, "respH": none, "answer": ""},
			map[string]any{"start": "2026-12-01T10:00:02Z", "time": 9000.0, "method": "GET", "url": "http://127.0.0.1:9/mcp", "reqH": map[string]string{"Mcp-Session-Id": "s1", "Mcp-Protocol-Version": "2025-11-25"},
				"status": 200, "respH": map[string]string{"Content-Type": "text/event-stream"}, "answer": "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"},
			map[string]any{"start": "2026-12-01T10:00:03Z", "time": 1.0, "method": "DELETE", "url": "http://127.0.0.1:9/mcp", "reqH": map[string]string{"Mcp-Session-Id": "s1", "Mcp-Protocol-Version": "2025-11-25"},
				"status": 204, "respH": none, "answer": ""},
		),
	} {
		t.Run(name, func(t *testing.T) {
			v, _ := New()
			rep := v.Check(context.Background(), []Input{{Name: name + ".har", Format: FormatHAR, Open: ReaderInput("", strings.NewReader(doc)).Open}})
			if len(rep.Findings) != 0 || len(rep.InputErrors) != 0 || rep.Messages < 4 {
				t.Errorf("%s: %v %v", Summary(&rep), rep.Findings, rep.InputErrors)
			}
		})
	}
}

// What a client sends after its DELETE is after the session's shutdown.
func TestHARAfterShutdown(t *testing.T) {
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	result := `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
	session := map[string]string{"Mcp-Session-Id": "s1", "Mcp-Protocol-Version": "2025-11-25"}
	doc := harOf(t,
		map[string]any{"start": "2026-12-01T10:00:00Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/mcp", "reqH": map[string]string{}, "body": init, "status": 200,
			"respH": map[string]string{"Content-Type": "application/json", "Mcp-Session-Id": "s1"}, "answer": result},
		map[string]any{"start": "2026-12-01T10:00:01Z", "time": 1.0, "method": "DELETE", "url": "http://127.0.0.1:9/mcp", "reqH": session, "status": 204, "respH": map[string]string{}, "answer": ""},
		map[string]any{"start": "2026-12-01T10:00:02Z", "time": 1.0, "method": "POST", "url": "http://127.0.0.1:9/mcp", "reqH": session,
			"body": `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "status": 202, "respH": map[string]string{}, "answer": ""},
	)
	v, _ := New()
	rep := v.Check(context.Background(), []Input{{Name: "late.har", Format: FormatHAR, Open: ReaderInput("", strings.NewReader(doc)).Open}})
	if len(rep.Findings) != 1 || rep.Findings[0].Rule != RuleAfterShutdown || rep.Findings[0].Line != 3 {
		t.Errorf("%s: %v, want after-shutdown at entry 3", Summary(&rep), rep.Findings)
	}
}

// peakHeap runs fn and returns the most heap its objects took meanwhile,
// above what they took before (sampled every 200µs; the collector runs at
// GOGC=20, so that garbage does not pass for what is held).
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	done, peak := make(chan struct{}), make(chan uint64)
	go func() {
		var top uint64
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			if v := read(); v > top {
				top = v
			}
			select {
			case <-done:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(done)
	top := <-peak
	if top < base {
		return 0
	}
	return top - base
}

// harBomb is a gzipped HAR document of size bytes at least (before gzip):
// entries answered with base64 NUL bytes as JSON (a record holds them
// escaped, six bytes each: 4.5 times the entry), or (one) a single entry
// of that size.
func harBomb(t *testing.T, size int, one bool) []byte {
	t.Helper()
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestSpeed)
	n := 0
	write := func(s string) { zw.Write([]byte(s)); n += len(s) }
	write(`{"log":{"version":"1.2","entries":[`)
	text := strings.Repeat("A", 64<<10)
	if one {
		text = strings.Repeat("A", size)
	}
	for i := 0; n < size; i++ {
		if i > 0 {
			write(",")
		}
		write(`{"startedDateTime":"2026-12-01T10:00:00Z","request":{"method":"POST","url":"http://127.0.0.1:9/mcp","headers":[]},` +
			`"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"content":{"mimeType":"application/json","encoding":"base64","text":"` + text + `"}}}`)
	}
	write(`]}}`)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return gz.Bytes()
}

// TestHARBomb: a HAR file is refused as soon as it is larger than maxHAR
// (read through gzip), and so is one whose records, with what is left to
// decode, would come to more (NUL bytes escaped are six times their
// size): in neither case does the reader hold much more than maxHAR. It
// held 7 times as much (1.76 GB for the 256 MiB bound) before refusing.
// Whatever --max-line is: a record is not made when it would not fit (one
// entry of a quarter of maxHAR, its record 1.1 times maxHAR, was encoded
// before it was refused, and took 4.5 times maxHAR with a --max-line
// above it; half of maxHAR took 8.9 times).
func TestHARBomb(t *testing.T) {
	defer func(old int) { maxHAR = old }(maxHAR)
	maxHAR = 16 << 20
	const held = "its messages need more than 16777216 bytes of memory: split the HAR file"
	for _, c := range []struct {
		name    string
		size    int
		one     bool
		maxLine int
		want    string
	}{
		{"just over the bound", maxHAR + 1<<10, false, 4 << 20, "a HAR file larger than 16777216 bytes"},
		{"one entry just over the bound", maxHAR + 1<<10, true, 4 << 20, "a HAR file larger than 16777216 bytes"},
		{"records over the bound", maxHAR / 2, false, 4 << 20, held},
		{"records over the bound, a large max-line", maxHAR / 2, false, 4 * maxHAR, held},
		{"one record over the bound, a large max-line", maxHAR / 4, true, 4 * maxHAR, held},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := harBomb(t, c.size, c.one)
			v, err := New(WithMaxLine(c.maxLine))
			if err != nil {
				t.Fatal(err)
			}
			var rep Report
			peak := peakHeap(func() {
				rep = v.Check(context.Background(), []Input{ReaderInput("bomb.har.gz", bytes.NewReader(doc))})
			})
			t.Logf("%d bytes gzipped, peak heap %.1f MiB", len(doc), float64(peak)/(1<<20))
			if len(rep.InputErrors) != 1 || !strings.Contains(rep.InputErrors[0].Error(), c.want) {
				t.Errorf("%s %v, want the error %q", Summary(&rep), rep.InputErrors, c.want)
			}
			if limit := 2 * uint64(maxHAR); peak > limit { // 3.5 to 5 times before, about 1.3 now (1.5 for one record)
				t.Errorf("peak heap %d bytes, want at most %d (twice maxHAR, the collector's slack included)", peak, limit)
			}
		})
	}
}

// TestAppendJSON: add writes records as encoding/json would (HTML
// characters as they are), in exactly the bytes encodedLen says before.
func TestAppendJSON(t *testing.T) {
	tree, err := jsontree.Parse([]byte(`{"jsonrpc":"2.0","id":-1.5e+3,"method":"x","params":{"a":[1,true,false,null,{},[]],` +
		`"s":"<&> \u0000\u001f\b\f\n\r\t \" \\ / \u00e9 \u2028\u2029 \ud83d\ude00 \u007f","":0}}`))
	if err != nil {
		t.Fatal(err)
	}
	values := []any{tree, nil, true, "", map[string]any{}, []any{}, 200, -7, json.Number("0"),
		map[string]any{"raw": "bad \xff\xfe UTF-8 \xe2\x80", "status": 401, "answers": []any{json.Number("3"), "a"}, "sse": true}}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200; i++ {
		b := make([]byte, rng.IntN(40))
		for j := range b {
			b[j] = byte(rng.IntN(256))
			if rng.IntN(2) == 0 {
				b[j] = "\x00\x1f \"\\<>&\xe2\x80\xa8\xff"[rng.IntN(12)]
			}
		}
		values = append(values, map[string]any{string(b): string(b)})
	}
	for _, v := range values {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(buf.String(), "\n")
		n, ok := encodedLen(v)
		got := appendJSON(nil, v)
		if !ok || string(got) != want || n != len(got) {
			t.Errorf("%#v: encoded %q (%d bytes foretold, %v), want %q", v, got, n, ok, want)
		}
	}
	if _, ok := encodedLen(map[string]any{"x": json.Number("1x")}); ok {
		t.Error("a number that is not JSON encodes")
	}
	if _, ok := encodedLen(map[string]any{"x": 1.5}); ok {
		t.Error("a float64 (records hold none) encodes")
	}
}
