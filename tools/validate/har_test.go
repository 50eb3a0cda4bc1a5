package validate

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
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
