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
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = t.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	if cmd.WaitDelay == 0 {
		cmd.WaitDelay = 2 * time.Second // a grandchild holding stderr cannot hold Close
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	max := messageLimit(t.MaxMessage)
	r := bufio.NewReaderSize(stdout, 64<<10)
	return &stdioConn{cmd: cmd, stdin: stdin, out: r, max: max, exited: make(chan struct{}), eof: make(chan struct{})}, nil
}

type stdioConn struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
	max   int

	writeMu sync.Mutex
	once    sync.Once
	exited  chan struct{}
	waitErr error
	eofOnce sync.Once
	eof     chan struct{} // closed when stdout ended: everything was read
}

func (c *stdioConn) Send(_ context.Context, msg []byte) error {
	if bytes.ContainsAny(msg, "\r\n") {
		return errors.New("client: a stdio message must not contain a newline")
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if _, err := c.stdin.Write(append(msg, '\n')); err != nil {
		return fmt.Errorf("write to the server: %w", err)
	}
	return nil
}

func (c *stdioConn) Read(context.Context) ([]byte, error) {
	for {
		line, err := c.readLine()
		if err != nil {
			c.eofOnce.Do(func() { close(c.eof) })
			if errors.Is(err, io.EOF) {
				c.wait()
				if c.waitErr != nil {
					return nil, fmt.Errorf("the server exited: %w", c.waitErr)
				}
				return nil, ErrClosed
			}
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
			return nil, fmt.Errorf("a message from the server exceeds %d bytes", c.max)
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

// Close closes the server's stdin, which ends a well-behaved server, and
// kills it after two seconds otherwise.
func (c *stdioConn) Close() error {
	_ = c.stdin.Close()
	// What the server still writes is read first (Wait closes stdout).
	select {
	case <-c.eof:
	case <-time.After(2 * time.Second):
		_ = c.cmd.Process.Kill()
	}
	go c.wait()
	<-c.exited
	return nil
}

func (c *stdioConn) wait() {
	c.once.Do(func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	})
}
