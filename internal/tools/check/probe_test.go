package check

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/generated"
	"github.com/mcpstack/mcpstack/internal/record"
	"github.com/mcpstack/mcpstack/wire"
)

// An answer past what the check reads is reported as such, never cut
// short in silence or taken for a server that exited.
func TestAnswerTooLarge(t *testing.T) {
	huge := strings.Repeat("a", answerLimit+1)
	exact := `{"jsonrpc":"2.0","id":1,"result":{"x":"` + huge[:answerLimit-len(`{"jsonrpc":"2.0","id":1,"result":{"x":""}}`)] + `"}}`
	tests := []struct {
		name, contentType, body string
		messages                int
		tooLarge                string // words of the report; "": none
	}{
		{"JSON", "application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, 1, ""},
		{"JSON array", "application/json", `[{"jsonrpc":"2.0","id":1,"result":{}}]`, 1, ""},
		{"JSON of exactly the bound", "application/json", exact, 1, ""},
		{"JSON too large", "application/json", `{"jsonrpc":"2.0","id":1,"result":{"x":"` + huge + `"}}`, 0, "an answer of more than 16 MiB"},
		{"event stream", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", 1, ""},
		{"event stream too large", "text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\ndata: " + huge + "\n\n", 1, "an answer of more than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{Header: http.Header{"Content-Type": {tt.contentType}}, Body: io.NopCloser(strings.NewReader(tt.body))}
			msgs, _, tooLarge := readBody(resp, nil)
			if len(msgs) != tt.messages {
				t.Errorf("%d messages, want %d", len(msgs), tt.messages)
			}
			if tt.tooLarge == "" && tooLarge != "" || !strings.Contains(tooLarge, tt.tooLarge) {
				t.Errorf("tooLarge %q, want %q", tooLarge, tt.tooLarge)
			}
			if got := (expect{any: true}).judge(answer{status: 200, messages: msgs, incomplete: tooLarge}); (got != "") != (tt.tooLarge != "") {
				t.Errorf("judged %q", got)
			}
		})
	}
}

// A stdio line past what the check reads ends the reading and says so; a
// line of exactly the bound is read.
func TestLineTooLong(t *testing.T) {
	for _, tt := range []struct {
		name    string
		input   string
		lines   int
		tooLong bool
	}{
		{"lines", "{}\n{}\n", 2, false},
		{"exactly the bound", strings.Repeat("a", answerLimit) + "\n{}\n", 2, false},
		{"too long", "{}\n" + strings.Repeat("a", answerLimit+1) + "\n{}\n", 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lines, tooLong := readLines(context.Background(), strings.NewReader(tt.input))
			n := 0
			for range lines {
				n++
			}
			if n != tt.lines || *tooLong != tt.tooLong {
				t.Errorf("%d lines, too long %v; want %d, %v", n, *tooLong, tt.lines, tt.tooLong)
			}
		})
	}
}

// fakeStdio, set in the environment, makes this test binary a stdio
// server that answers one request with a line past the check's bound:
// "early" the first (the request before initialize), "init" initialize;
// or "silent", none at all.
const fakeStdio = "MCPSTACK_CHECK_FAKE_STDIO"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeStdio); mode != "" {
		serveFake(mode)
		return
	}
	os.Exit(m.Run())
}

func serveFake(mode string) {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(nil, 1<<20)
	huge := `{"jsonrpc":"2.0","id":%s,"result":{"x":"` + strings.Repeat("a", answerLimit) + `"}}` + "\n"
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		switch {
		case mode == "silent":
			continue
		case mode == "early" && m.Method == "tools/list", mode == "init" && m.Method == "initialize":
			fmt.Printf(huge, m.ID)
		case m.Method == "initialize":
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}}`+"\n", m.ID)
		default:
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"Method not found"}}`+"\n", m.ID)
		}
	}
}

// A stdio server whose answer is past the bound is told so, against the
// check's bound, not the crash rule; one whose initialize is gets no probe.
func TestStdioAnswerTooLarge(t *testing.T) {
	spec := generated.Lookup("2025-11-25")
	for _, tt := range []struct {
		mode     string
		findings []string // words of each finding
		log      string
	}{
		{"early", []string{"request before initialize: a line of more than 16 MiB", "[spec: mcpstack check reads at most 16 MiB"}, ""},
		{"init", nil, "probes skipped: initialize: a line of more than 16 MiB"},
	} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Setenv(fakeStdio, tt.mode)
			var log bytes.Buffer
			c := &checker{cfg: Config{Command: []string{os.Args[0]}, Timeout: 5 * time.Second, ServerLog: io.Discard, Log: &log},
				rec: newRecording(record.New(io.Discard), 0)}
			c.probeStdio(context.Background(), spec)
			if len(c.findings) != min(len(tt.findings), 1) {
				t.Fatalf("findings %+v, want one saying %q", c.findings, tt.findings)
			}
			for _, want := range tt.findings {
				if !strings.Contains(c.findings[0].Reason, want) {
					t.Errorf("finding %q, want it to say %q", c.findings[0].Reason, want)
				}
			}
			if !strings.Contains(log.String(), tt.log) {
				t.Errorf("log %q, want %q", log.String(), tt.log)
			}
		})
	}
}

// When the check's own time runs out, a stdio server that has not
// answered yet is not said to have exited.
func TestStdioCheckTimeUp(t *testing.T) {
	t.Setenv(fakeStdio, "silent")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	c := &checker{cfg: Config{Command: []string{os.Args[0]}, Timeout: 5 * time.Second, ServerLog: io.Discard},
		rec: newRecording(record.New(io.Discard), 0)}
	start := time.Now()
	c.probeStdio(ctx, generated.Lookup("2025-11-25"))
	if len(c.findings) != 0 {
		t.Errorf("findings %+v, want none: the check ran out of time, the server did nothing wrong", c.findings)
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("the probes took %v after the check's time was up", d)
	}
}

// brokenReader gives its bytes, then an error.
type brokenReader struct{ rest string }

func (r *brokenReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		return 0, errors.New("connection reset by peer")
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

// An HTTP answer that breaks off is reported as such, not judged on the
// part that came.
func TestAnswerBrokeOff(t *testing.T) {
	resp := &http.Response{Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(&brokenReader{rest: `{"jsonrpc":"2.0","id":1,"res`})}
	msgs, _, incomplete := readBody(resp, nil)
	if len(msgs) != 0 || !strings.Contains(incomplete, "the answer broke off after 28 bytes: connection reset by peer") {
		t.Errorf("messages %d, incomplete %q", len(msgs), incomplete)
	}
}

// An event stream that stays open after the response to the probe (the
// server may send more on it) is read up to that response: reading on
// would make every such probe a timeout.
func TestEventStreamReadUntilItsResponse(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		_, _ = io.WriteString(pw, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
		_, _ = io.WriteString(pw, "data: {\"jsonrpc\":\"2.0\",\"id\":\"other\",\"result\":{}}\n\n")
		_, _ = io.WriteString(pw, "data: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}}\n\n")
		// and nothing more, the stream still open
	}()
	resp := &http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr}
	done := make(chan struct{})
	var msgs []json.RawMessage
	var incomplete string
	go func() {
		defer close(done)
		msgs, _, incomplete = readBody(resp, []wire.ID{wire.IntID(7)})
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the check read on past the response to its probe")
	}
	if len(msgs) != 3 || incomplete != "" {
		t.Errorf("%d messages (%q), want 3 and the answer complete", len(msgs), incomplete)
	}
	// A batch's answer, in one event.
	pr2, pw2 := io.Pipe()
	defer pw2.Close()
	go func() {
		_, _ = io.WriteString(pw2, "data: [{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}},{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}]\n\n")
	}()
	batchDone := make(chan struct{})
	go func() {
		defer close(batchDone)
		msgs, _, incomplete = readBody(&http.Response{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr2}, []wire.ID{wire.IntID(1), wire.IntID(2)})
	}()
	select {
	case <-batchDone:
	case <-time.After(5 * time.Second):
		t.Fatal("the check read on past the answer to its batch")
	}
	if len(msgs) != 1 || incomplete != "" {
		t.Errorf("the batch: %d messages (%q), want its answer", len(msgs), incomplete)
	}
}
