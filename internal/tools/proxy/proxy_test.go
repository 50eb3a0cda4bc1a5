package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/internal/methods/conformance"
	"github.com/mcpstack/mcpstack/internal/syncbuf"
	"github.com/mcpstack/mcpstack/internal/tools/validate"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/server/stdio"
)

// The test binary is also the server the proxy starts: MCPSTACK_PROXY_CHILD
// says which (echo: a line on stderr, then stdin back to stdout unchanged;
// mcp: the conformance fixtures over stdio).
func TestMain(m *testing.M) {
	switch os.Getenv("MCPSTACK_PROXY_CHILD") {
	case "echo":
		_, _ = io.WriteString(os.Stderr, "the server's own log\n")
		_, _ = io.Copy(os.Stdout, os.Stdin)
		os.Exit(0)
	case "mcp":
		srv := server.New(conformance.New(conformance.WithStepDelay(0)))
		_ = stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout)
		srv.Close()
		os.Exit(0)
	case "exit3":
		os.Exit(3)
	case "orphan": // leaves a child holding its stdout, and exits
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MCPSTACK_PROXY_CHILD=sleep")
		cmd.Stdout = os.Stdout
		_ = cmd.Start()
		os.Exit(0)
	case "twice": // one message, and another a moment later
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}`)
		time.Sleep(100 * time.Millisecond)
		fmt.Println(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":2}}`)
		os.Exit(0)
	case "sleep":
		time.Sleep(12 * time.Second)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func child(t *testing.T, kind string) []string {
	t.Setenv("MCPSTACK_PROXY_CHILD", kind)
	return []string{os.Args[0]}
}

// Bytes pass unchanged both ways (here through a server that echoes
// them), however they are cut: CRLF, blank lines, a line that is not JSON,
// a last line without its newline; every line is recorded.
func TestStdioIsTransparent(t *testing.T) {
	in := []byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n\n  {\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\nnot json at all \xff\n" +
		strings.Repeat("x", 200000) + "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}")
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	var out, errOut bytes.Buffer
	code := runWith(t, []string{"--record", rec, "--"}, child(t, "echo"), bytes.NewReader(in), &out, &errOut)
	if code != 0 || !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("exit %d; out differs from in (%d vs %d bytes); stderr %s", code, out.Len(), len(in), errOut.String())
	}
	if errOut.String() != "the server's own log\n" {
		t.Errorf("stderr %q, want the server's own, passed through alone", errOut.String())
	}
	b, _ := os.ReadFile(rec)
	recorded := strings.Count(string(b), "\n")
	if recorded != 11 { // 5 lines each way, and the client's end
		t.Errorf("%d records, want 11:\n%.600s", recorded, b)
	}
}

// player plays a client that waits for each answer before it goes on:
// each step is sent once out holds the text it waits for ("" first).
type player struct {
	mu    sync.Mutex
	out   bytes.Buffer
	grown chan struct{}
}

func (c *player) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out.Write(p)
	select {
	case c.grown <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (c *player) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// play writes each step once out holds its wait text, then ends.
func (c *player) play(w io.WriteCloser, steps [][2]string) {
	defer w.Close()
	for _, s := range steps {
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(c.String(), s[0]) && time.Now().Before(deadline); {
			select {
			case <-c.grown:
			case <-time.After(20 * time.Millisecond):
			}
		}
		_, _ = io.WriteString(w, s[1])
	}
}

func runWith(t *testing.T, flags, argv []string, in io.Reader, out, errOut io.Writer) int {
	t.Helper()
	// Command reads os.Stdin; the test hands its input through a pipe.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.Copy(w, in); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old }()
	return Command(append(flags, argv...), out, errOut)
}

// A session through the proxy with --check: a server that speaks the
// protocol leaves nothing to find; a client that breaks it is found, and
// --fail-on error makes the exit status say so.
func TestStdioCheck(t *testing.T) {
	steps := [][2]string{
		{"", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"},
		{`"id":1`, `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_simple_text"}}` + "\n"},
	}
	session := func(steps [][2]string, wait string) (int, string, string) {
		r, w := io.Pipe()
		c := &player{grown: make(chan struct{}, 1)}
		go c.play(w, append(steps, [2]string{wait, ""}))
		var errOut bytes.Buffer
		code := runWith(t, []string{"--check", "--fail-on", "error", "--"}, child(t, "mcp"), r, c, &errOut)
		return code, c.String(), errOut.String()
	}
	code, out, errOut := session(steps, `"id":2`)
	if code != 0 || !strings.Contains(errOut, ": valid") || !strings.Contains(out, `"id":2`) {
		t.Fatalf("a good session: exit %d, stderr %s, client got %s", code, errOut, out)
	}
	bad := append(steps, [2]string{`"id":2`, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":7}}` + "\n"})
	code, _, errOut = session(bad, `"id":3`)
	if code != 1 || !strings.Contains(errOut, "proxied:6: error schema") {
		t.Errorf("a bad request: exit %d, stderr %q", code, errOut)
	}
}

// The proxy exits with the server's status, the command given after --
// or, for the MCP Inspector whose parser eats --, after the flags alone.
func TestStdioExitStatus(t *testing.T) {
	for _, flags := range [][]string{{"--"}, {"--record", filepath.Join(t.TempDir(), "rec.jsonl")}} {
		var out, errOut bytes.Buffer
		if code := runWith(t, flags, child(t, "exit3"), strings.NewReader(""), &out, &errOut); code != 3 {
			t.Errorf("%q: exit %d, want the server's 3 (stderr %s)", flags, code, errOut.String())
		}
	}
	_ = validate.Error
}

// --check reports a finding as its message passes, while the session goes
// on: not once the validator's chunk has filled, nor at the end.
func TestCheckIsLive(t *testing.T) {
	findings := &syncBuffer{}
	tp, err := newTap(nil, true, findings)
	if err != nil {
		t.Fatal(err)
	}
	// One short record (under the 256 bytes format detection would wait
	// for), and nothing after it yet.
	tp.message(stdioSession(), server.ClientToServer, []byte(`{"jsonrpc":"1.0","id":2,"method":"ping"}`))
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(findings.String(), "error envelope") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(findings.String(), "proxied:1: error envelope") {
		t.Errorf("no finding while the session is open; stderr so far: %q", findings.String())
	}
	if _, err := tp.end(); err != nil {
		t.Fatal(err)
	}
}

type syncBuffer = syncbuf.Buffer

// Runs appended to one recording (a client starts the proxy again each
// time) are sessions apart: the recording validates, rather than the
// second run's messages coming after the first's end.
func TestStdioRunsAppendAsSessions(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	steps := [][2]string{
		{"", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"},
		{`"id":1`, `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"},
		{`"id":2`, ""},
	}
	for range 2 {
		r, w := io.Pipe()
		c := &player{grown: make(chan struct{}, 1)}
		go c.play(w, steps)
		var errOut bytes.Buffer
		if code := runWith(t, []string{"--record", rec, "--"}, child(t, "mcp"), r, c, &errOut); code != 0 {
			t.Fatalf("exit %d: %s", code, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := validate.Command([]string{rec}, &out, &errOut); code != 0 {
		t.Errorf("validate of two runs in one recording: exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// A server that exits leaving a child holding its stdout does not hold
// the proxy: it ends with the server's status within WaitDelay.
func TestStdioServerChildHoldsStdout(t *testing.T) {
	start := time.Now()
	var out, errOut bytes.Buffer
	if code := runWith(t, []string{"--"}, child(t, "orphan"), strings.NewReader(""), &out, &errOut); code != 0 {
		t.Errorf("exit %d, want the server's 0: %s", code, errOut.String())
	}
	if d := time.Since(start); d > 10*time.Second { // WaitDelay is 5s; the child sleeps 12
		t.Errorf("the proxy ended %v after the server, whose child held its stdout", d.Round(time.Second))
	}
}

// brokenWriter is a client that has gone: every write fails.
type brokenWriter struct{}

func (brokenWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }

// A client that has gone (its end of the proxy's stdout closed) gets
// nothing more, and what the server still sends is recorded.
func TestStdioRecordsAfterTheClientWent(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "rec.jsonl")
	var errOut bytes.Buffer
	if code := runWith(t, []string{"--record", rec, "--"}, child(t, "twice"), strings.NewReader(""), brokenWriter{}, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	b, _ := os.ReadFile(rec)
	if n := strings.Count(string(b), "notifications/message"); n != 2 {
		t.Errorf("%d of the server's 2 messages recorded:\n%s", n, b)
	}
}

// A long line that comes in pieces is scanned once for its newline, not
// again with each piece: 16 MiB in 32 KiB pieces was 4 GiB scanned, in
// the path that forwards the bytes.
func TestLongLineScannedOnce(t *testing.T) {
	var got int
	l := &lines{max: maxLine, message: func(m []byte) { got = len(m) }}
	piece := bytes.Repeat([]byte("x"), 32<<10)
	for range 512 {
		_, _ = l.Write(piece)
	}
	_, _ = l.Write([]byte("\n"))
	if written := int64(512*len(piece) + 1); got != 16<<20 || l.looked != written {
		t.Errorf("a line of 16 MiB in 32 KiB pieces: %d bytes recorded, %d looked at for newlines; want it whole, each of the %d bytes looked at once", got, l.looked, written)
	}
}

// failingFile takes n bytes, then fails every write: a disk that filled.
type failingFile struct{ n int }

func (f *failingFile) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("no space left on device")
	}
	return len(p), nil
}

// A recording that cannot be written is told at once, not at the end; the
// live check goes on with every record after it; the end's status says
// the recording failed.
func TestRecordingFailureIsToldAtOnce(t *testing.T) {
	stderr := &syncBuffer{}
	tp, err := newTap(&failingFile{n: 100}, true, stderr)
	if err != nil {
		t.Fatal(err)
	}
	session := stdioSession()
	tp.message(session, server.ClientToServer, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`))
	if !strings.Contains(stderr.String(), "writing the recording failed") {
		t.Errorf("no word of the failed recording as it failed; stderr: %q", stderr.String())
	}
	tp.message(session, server.ClientToServer, []byte(`{"jsonrpc":"1.0","id":2,"method":"ping"}`))
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(stderr.String(), "error envelope") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "error envelope") {
		t.Errorf("the live check stopped with the recording; stderr: %q", stderr.String())
	}
	if _, err := tp.end(); err == nil {
		t.Error("the end says nothing of the failed recording")
	}
}
