package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/mcpstack/mcpstack/client"
)

// endlessLine is a stdio server (the test binary, TestMain) that answers
// initialize when afterInitialize, then answers the next request with a
// line that never ends; it exits when its stdout is gone.
func endlessLine(afterInitialize bool) {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil || len(msg.ID) == 0 {
			continue // a notification
		}
		if msg.Method == "initialize" && afterInitialize {
			fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"endless","version":"1"}}}`+"\n", msg.ID)
			continue
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		if _, err := fmt.Printf(`{"jsonrpc":"2.0","id":%s,"result":{"x":"`, msg.ID); err != nil {
			os.Exit(0)
		}
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				os.Exit(0)
			}
		}
	}
	os.Exit(0)
}

// A server that writes a line over the bound, and keeps writing, ends the
// session with an error naming the bound (the call fails, it does not
// wait for its timeout), and Close kills it: reading stopped mid-line,
// the server blocks on its stdout, and waiting for it to exit was for
// ever (issue 20).
func TestStdioOverlongLine(t *testing.T) {
	const bound = 1 << 20
	tests := []struct {
		name string
		mode string
		call func(ctx context.Context, s *client.Session) error
	}{
		{"in the answer to initialize", "endless-line", nil},
		{"in the answer to a call", "endless-line-after-initialize",
			func(ctx context.Context, s *client.Session) error { _, err := s.Ping(ctx, nil); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "MCPSTACK_CLIENT_TEST_SERVER="+tc.mode)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			// Connect closes the session when it fails: bounded too.
			var s *client.Session
			err := within(t, 15*time.Second, "Connect", func() (err error) {
				s, err = client.New("t", "1").Connect(ctx, &client.Command{Cmd: cmd, Stderr: io.Discard, MaxMessage: bound})
				return err
			})
			if s != nil {
				err = within(t, 15*time.Second, "the call", func() error { return tc.call(ctx, s) })
			}
			t.Logf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
			if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprint(bound)) {
				t.Errorf("after %v: error %v, want one naming the bound %d", time.Since(start).Round(time.Millisecond), err, bound)
			}
			if s != nil {
				closing := time.Now()
				_ = within(t, 5*time.Second, "Close", s.Close)
				t.Logf("Close took %v", time.Since(closing).Round(time.Millisecond))
			}
			if cmd.ProcessState == nil {
				t.Errorf("the server process %d was not waited for", cmd.Process.Pid)
			}
		})
	}
}

// within runs fn, failing the test (without waiting for fn) when it takes
// longer than d.
func within(t *testing.T, d time.Duration, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("%s still running after %v", what, d)
		return nil
	}
}

// A server that does not read its stdin holds a Send until the Send's
// context ends, not for ever, and the next one too; Close still ends the
// connection.
func TestStdioSendEndsWithItsContext(t *testing.T) {
	conn := connectTestServer(t, "deaf")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	big := []byte(`{"jsonrpc":"2.0","method":"notifications/x","params":{"p":"` + strings.Repeat("x", 1<<20) + `"}}`)
	err := within(t, 5*time.Second, "Send", func() error { return conn.Send(ctx, big) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a server that does not read: %v, want the context's deadline", err)
	}
	// The rest of the line is being finished: the next Send waits for it
	// within its own context, not for ever.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel2()
	err = within(t, 5*time.Second, "the next Send", func() error { return conn.Send(ctx2, []byte(`{}`)) })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the next Send: %v, want its context's deadline", err)
	}
}

// A server that closes its stdout and runs on ends the session at once:
// nothing more can come from it, and waiting for its exit held every call
// until its own context ended, and the session never said it was over.
func TestStdioServerClosesStdout(t *testing.T) {
	conn := connectTestServer(t, "mute")
	err := within(t, 5*time.Second, "Read", func() error { _, err := conn.Read(context.Background()); return err })
	if !errors.Is(err, client.ErrClosed) || !strings.Contains(err.Error(), "stdout") {
		t.Errorf("Read from a server that closed its stdout: %v, want ErrClosed saying so", err)
	}
}

// connectTestServer connects to the test binary run as the stdio server
// mode names (TestMain); the connection is closed, within 10 s, when the
// test ends.
func connectTestServer(t *testing.T, mode string) client.Conn {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MCPSTACK_CLIENT_TEST_SERVER="+mode)
	conn, err := (&client.Command{Cmd: cmd, Stderr: io.Discard}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = within(t, 10*time.Second, "Close", conn.Close) })
	return conn
}
