package proxy

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/server"
)

// maxLine bounds what the tap buffers of one line (a longer one is
// recorded in pieces, and still passed whole).
const maxLine = 64 << 20

// stdioSession names the one session of a stdio proxy in the recording:
// one of its own for each run, so that runs appended to one recording (a
// client starts the proxy again each time) are sessions apart, not one
// that ends and goes on.
func stdioSession() string {
	return "stdio-" + strconv.FormatInt(time.Now().UnixMilli(), 36) + "-" + strconv.FormatUint(rand.Uint64()&0xffffff, 36)
}

// runStdio starts the server command and passes the client's bytes to
// it and its bytes back, unchanged, recording each line; its exit status
// is the server's. serverErr is where the server's stderr goes.
func runStdio(argv []string, in io.Reader, out, errOut, serverErr io.Writer, t *tap) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = serverErr // the server's log passes through
	// A server that leaves a child holding its stdout or stderr must not
	// hold the proxy past its own exit for longer than this; a client
	// still reading the server's last output has as long to take it.
	cmd.WaitDelay = 5 * time.Second
	toServer, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 1
	}
	session := stdioSession()
	c2s := &lines{max: maxLine, message: func(m []byte) { t.message(session, server.ClientToServer, m) }}
	s2c := &lines{max: maxLine, message: func(m []byte) { t.message(session, server.ServerToClient, m) }}
	// exec copies the server's output, so that WaitDelay bounds it too: a
	// child the server leaves holding its stdout does not hold the proxy.
	// A client that has gone (its end of our stdout closed) gets nothing
	// more, and the recording goes on: with SIGPIPE notified (not
	// ignored, which the server would inherit), a broken pipe is an error
	// to write, not the proxy's end.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	// Recorded before the client has it: what the client sends on seeing
	// it cannot come before it in the recording.
	cmd.Stdout = io.MultiWriter(s2c, &lenient{w: out})
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 1
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s) // the server decides how to end
		}
	}()
	go func() { // client -> server, until the client closes its end
		_, _ = io.Copy(toServer, io.TeeReader(in, c2s))
		c2s.flush()
		toServer.Close() // the client's end: the server answers what it has, then exits
	}()
	err = cmd.Wait() // once the server has exited and its output is copied (or WaitDelay passed)
	s2c.flush()
	// The session is over once the server's output is: its answers to
	// what the client sent last come before the end.
	t.shutdown(session, server.ClientToServer)
	var exit *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrWaitDelay): // exited; a child of its held its output
		return max(cmd.ProcessState.ExitCode(), 0)
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if code := exit.ExitCode(); code >= 0 {
			return code
		}
		return 1 // killed by a signal
	}
	fmt.Fprintln(errOut, "mcpstack proxy:", err)
	return 1
}
