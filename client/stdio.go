package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// Command is the stdio transport: it starts a server program and speaks
// newline-delimited JSON-RPC on its stdin and stdout. The program's stderr
// goes to Stderr (default os.Stderr): servers log there.
type Command struct {
	Cmd    *exec.Cmd
	Stderr io.Writer
	// MaxMessage bounds one message from the server (default 16 MiB).
	MaxMessage int
}

// Connect starts the program.
func (t *Command) Connect(ctx context.Context) (Conn, error) {
	cmd := t.Cmd
	if cmd == nil {
		return nil, errors.New("client: Command has no Cmd")
	}
	if cmd.Stdin != nil {
		return nil, errors.New("client: Command's Cmd has a Stdin already: the session writes to it")
	}
	// A pipe of our own rather than StdinPipe's: its *os.File takes write
	// deadlines, so that Send ends with its context even when the server
	// does not read.
	pr, stdin, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		pr.Close()
		stdin.Close()
		return nil, err
	}
	cmd.Stdin = pr
	cmd.Stderr = t.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second // a grandchild holding stderr cannot hold Close
	}
	err = cmd.Start()
	pr.Close() // the child has its copy
	if err != nil {
		stdin.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	max := messageLimit(t.MaxMessage)
	r := bufio.NewReaderSize(stdout, 64<<10)
	return &stdioConn{cmd: cmd, stdin: stdin, writing: make(chan struct{}, 1), out: r, max: max, exited: make(chan struct{}), stopped: make(chan struct{})}, nil
}

// closeGrace is how long Close lets the server exit on its own, once its
// stdin is closed, before it kills it.
const closeGrace = 2 * time.Second

// exitWait is how long the end of a server's stdout waits for its exit
// status, to say why the session ended.
const exitWait = 500 * time.Millisecond

type stdioConn struct {
	cmd   *exec.Cmd
	stdin *os.File
	out   *bufio.Reader
	max   int

	writing   chan struct{} // one token: the writer's
	broken    error         // a write cut short, after which the stream cannot go on; held with writing
	once      sync.Once
	exited    chan struct{}
	waitErr   error
	closeOnce sync.Once
	stopOnce  sync.Once
	stopped   chan struct{} // closed when reading stdout stopped: at its end, or at readErr
	readErr   error         // why reading stopped, other than the end of stdout (set before stopped closes)
}

// Send writes one line, within ctx: a server that does not read its stdin
// holds the call until ctx ends, not forever, and not the other calls
// beyond theirs. A line cut short by ctx is finished within finishLine
// (the call has failed, the connection goes on); when even that cannot
// be written, the connection is closed, as nothing written after half a
// message could be read.
func (c *stdioConn) Send(ctx context.Context, msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		return errors.New("client: a stdio message must not contain a newline")
	}
	select {
	case c.writing <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("write to the server: %w", context.Cause(ctx))
	}
	release := true
	defer func() {
		if release {
			<-c.writing
		}
	}()
	if c.broken != nil {
		return c.broken
	}
	// A context that can end sets the write's deadline when it does (a
	// deadline too: its Done closes then); one that cannot costs nothing.
	_ = c.stdin.SetWriteDeadline(time.Time{}) // a past call's expired one
	stop := func() bool { return true }
	var expired chan struct{}
	if ctx.Done() != nil {
		expired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			defer close(expired)
			_ = c.stdin.SetWriteDeadline(time.Unix(1, 0))
		})
	}
	line := append(msg, '\n')
	n, err := c.stdin.Write(line)
	if !stop() {
		<-expired // its deadline is set before the next Send clears it
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrDeadlineExceeded):
		<-ctx.Done() // both deadlines are ctx's: it ends at the same time
		err = context.Cause(ctx)
	}
	err = fmt.Errorf("write to the server: %w", err)
	if n > 0 && n < len(line) {
		// Half a line is on the server's stdin: it is finished in the
		// background, within a bound of the connection's, not the
		// call's, holding the writer's token; or the connection is over
		// (nothing written after half a line could be read).
		release = false
		rest := bytes.Clone(line[n:]) // line may share msg's array, the caller's again once Send returns
		go func() {
			defer func() { <-c.writing }()
			_ = c.stdin.SetWriteDeadline(time.Now().Add(finishLine))
			if _, ferr := c.stdin.Write(rest); ferr != nil {
				c.broken = fmt.Errorf("client: the connection is broken: a message was cut short (%w)", ferr)
				go c.Close() // the session ends with the error
			}
		}()
	}
	return err
}

// finishLine bounds the write of the rest of a line whose Send's context
// ended midway.
const finishLine = 10 * time.Second

// Read returns the next line of the server. Its first error is its last:
// a line over the bound leaves stdout mid-line, where nothing more can be
// read as messages, so the session ends with that error.
func (c *stdioConn) Read(context.Context) ([]byte, error) {
	select {
	case <-c.stopped:
		if c.readErr != nil {
			return nil, c.readErr
		}
		return nil, ErrClosed
	default:
	}
	for {
		line, err := c.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.stop(nil)
				// A server ends its stdout as it exits: its exit status
				// says why. One that closes stdout and runs on ends the
				// session all the same (nothing more can come), at once;
				// Close ends the process.
				go c.wait()
				exit := time.NewTimer(exitWait)
				defer exit.Stop()
				select {
				case <-c.exited:
				case <-exit.C:
					return nil, fmt.Errorf("the server closed its stdout and runs on: %w", ErrClosed)
				}
				if c.waitErr != nil {
					return nil, fmt.Errorf("the server exited: %w", c.waitErr)
				}
				return nil, ErrClosed
			}
			c.stop(err)
			return nil, err
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			return line, nil
		}
	}
}

// readLine reads one line of at most max bytes.
func (c *stdioConn) readLine() ([]byte, error) {
	var line []byte
	for {
		part, err := c.out.ReadSlice('\n')
		line = append(line, part...)
		if len(line) > c.max {
			return nil, fmt.Errorf("a line from the server exceeds the message bound of %d bytes (Command.MaxMessage)", c.max)
		}
		if err == nil || !errors.Is(err, bufio.ErrBufferFull) {
			if err != nil && len(line) > 0 && errors.Is(err, io.EOF) {
				return line, nil
			}
			return line, err
		}
	}
}

func (c *stdioConn) Negotiated(string) {}

// stop records that reading stdout stopped, and why (nil: its end).
func (c *stdioConn) stop(err error) {
	c.stopOnce.Do(func() {
		c.readErr = err
		close(c.stopped)
	})
}

// Close closes the server's stdin, which ends a well-behaved server, and
// kills it if it has not exited closeGrace later, in every case: a server
// that ignores its stdin, one that closed its stdout and lives on, one
// whose stdout is no longer read (after a line over the bound) and that
// blocks writing to it. So Close returns, and leaves no process behind.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		_ = c.stdin.Close()
		grace := time.NewTimer(closeGrace)
		defer grace.Stop()
		// What the server still writes is read first: Wait closes stdout,
		// so it waits for reading to stop (or for the kill).
		select {
		case <-c.stopped:
			if c.readErr != nil {
				// Nobody reads stdout any more: drain it, so that a
				// server blocked writing gets to see its stdin closed.
				go func() { _, _ = io.Copy(io.Discard, c.out) }()
			}
			go c.wait()
			select {
			case <-c.exited:
			case <-grace.C:
				_ = c.cmd.Process.Kill()
			}
		case <-grace.C:
			_ = c.cmd.Process.Kill()
			go c.wait()
		}
		<-c.exited
	})
	return nil
}

func (c *stdioConn) wait() {
	c.once.Do(func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	})
}
