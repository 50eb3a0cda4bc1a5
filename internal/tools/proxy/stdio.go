package proxy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/mcpstack/mcpstack/server"
)

// maxLine bounds what the tap buffers of one line (a longer one is
// recorded in pieces, and still passed whole).
const maxLine = 64 << 20

// stdioSession names the one session of a stdio proxy in the recording.
const stdioSession = "stdio"

// runStdio starts the server command and passes the client's bytes to
// it and its bytes back, unchanged, recording each line; its exit status
// is the server's. serverErr is where the server's stderr goes.
func runStdio(argv []string, in io.Reader, out, errOut, serverErr io.Writer, t *tap) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stderr = serverErr // the server's log passes through
	// A server that leaves a child holding a copied stderr must not hold
	// the proxy past its own exit.
	cmd.WaitDelay = 2 * time.Second
	toServer, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 1
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(errOut, "mcpstack proxy:", err)
		return 1
	}
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
	c2s := &lines{max: maxLine, message: func(m []byte) { t.message(stdioSession, server.ClientToServer, m) }}
	s2c := &lines{max: maxLine, message: func(m []byte) { t.message(stdioSession, server.ServerToClient, m) }}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // client -> server, until the client closes its end
		defer wg.Done()
		_, _ = io.Copy(toServer, io.TeeReader(in, c2s))
		c2s.flush()
		toServer.Close() // the client's end: the server answers what it has, then exits
	}()
	_, _ = io.Copy(out, io.TeeReader(fromServer, s2c)) // server -> client, until the server closes its end
	s2c.flush()
	// The session is over once the server's output is: its answers to
	// what the client sent last come before the end.
	t.shutdown(stdioSession, server.ClientToServer)
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
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
