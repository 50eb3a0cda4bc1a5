package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// stdioConn is one server process spoken to over its stdin and stdout
// (newline-delimited JSON-RPC), with inflight calls outstanding at all
// times. One goroutine reads the responses and sends each slot's next call
// as soon as its answer is in; another writes, flushing whenever it has
// nothing more queued.
type stdioConn struct {
	argv     []string
	rb       requestBuilder
	inflight int
	textSize int
	timeout  time.Duration
	win      *window
	rec      *recorder

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	stderr *tailBuffer
	writes chan []byte
	wdone  chan struct{}
	werr   atomic.Value // error of the writer

	slots    []stdioSlot
	active   int          // slots with a call outstanding
	progress atomic.Int64 // unix ns of the last response
	line     []byte
	msg      rpcMessage

	cpu0, cpu1 time.Duration // server CPU at the first measured call and at the end
	cpuOK      bool
}

type stdioSlot struct {
	seq      int64
	id       int64
	start    time.Time
	measured bool
	busy     bool
	text     []byte
}

// runStdio runs one connection until its calls are done, and reports the
// server CPU time used while measuring (0 and false when unknown).
func runStdio(ctx context.Context, argv []string, c *Config, win *window, rec *recorder) (time.Duration, bool) {
	s := &stdioConn{
		argv:     argv,
		rb:       requestBuilder{version: c.ProtocolVersion, modern: isModern(c.ProtocolVersion)},
		inflight: c.Inflight,
		textSize: c.TextSize,
		timeout:  c.Timeout,
		win:      win,
		rec:      rec,
		stderr:   &tailBuffer{max: 2048},
	}
	if err := s.start(); err != nil {
		rec.fail(failf(errSession, "start %s: %v", argv[0], err), false, time.Now())
		return 0, false
	}
	stop := context.AfterFunc(ctx, func() { s.cmd.Process.Kill() })
	defer stop()
	done := make(chan struct{})
	go s.watchdog(done)
	err := s.handshake()
	if err == nil {
		err = s.loop()
	}
	close(done)
	if err != nil {
		rec.fail(err, false, time.Now())
	}
	s.finish()
	return s.cpu1 - s.cpu0, s.cpuOK
}

func (s *stdioConn) start() error {
	s.cmd = exec.Command(s.argv[0], s.argv[1:]...)
	s.cmd.Stderr = s.stderr
	in, err := s.cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := s.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.stdin, s.stdout = in, bufio.NewReaderSize(out, 64<<10)
	s.writes = make(chan []byte, s.inflight+4)
	s.wdone = make(chan struct{})
	s.progress.Store(time.Now().UnixNano())
	go s.writer()
	return nil
}

func (s *stdioConn) writer() {
	defer close(s.wdone)
	bw := bufio.NewWriterSize(s.stdin, 64<<10)
	var err error
	for b := range s.writes {
		if err != nil {
			continue // drain
		}
		if _, err = bw.Write(b); err == nil && len(s.writes) == 0 {
			err = bw.Flush()
		}
		if err != nil {
			s.werr.Store(err)
		}
	}
	if err == nil {
		bw.Flush()
	}
	s.stdin.Close()
}

// watchdog kills the server when calls are outstanding but nothing has
// come back for the timeout.
func (s *stdioConn) watchdog(done chan struct{}) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if time.Since(time.Unix(0, s.progress.Load())) > s.timeout {
				s.cmd.Process.Kill()
				return
			}
		}
	}
}

func (s *stdioConn) handshake() error {
	if s.rb.modern {
		return nil
	}
	s.writes <- append(s.rb.initialize(nil, 0), '\n')
	for {
		line, err := s.readLine()
		if err != nil {
			return failf(errSession, "initialize: %v", s.exitError(err))
		}
		match, cerr := decodeMessage(line, 0, &s.msg)
		if cerr != nil {
			return &callError{kind: errSession, msg: "initialize: " + cerr.Error()}
		}
		if match {
			break
		}
	}
	if s.msg.Result.ProtocolVersion == "" {
		return failf(errSession, "initialize result without protocolVersion")
	}
	s.writes <- append(s.rb.initialized(nil), '\n')
	return nil
}

func (s *stdioConn) loop() error {
	textSize := s.textSize
	s.slots = make([]stdioSlot, s.inflight)
	for i := range s.slots {
		s.slots[i].text = newText(textSize)
		s.issue(i)
	}
	for s.active > 0 {
		line, err := s.readLine()
		if err != nil {
			err = s.exitError(err)
			now := time.Now()
			for i := range s.slots {
				if s.slots[i].busy {
					s.rec.fail(err, s.slots[i].measured, now)
				}
			}
			return nil
		}
		if cerr := decodeAny(line, &s.msg); cerr != nil {
			s.rec.fail(cerr, false, time.Now())
			continue
		}
		if s.msg.Method != "" {
			continue // a notification or request from the server
		}
		id, err := strconv.ParseInt(string(bytes.TrimSpace(s.msg.ID)), 10, 64)
		slot := int(id % int64(s.inflight))
		if err != nil || id <= 0 || !s.slots[slot].busy || s.slots[slot].id != id {
			s.rec.fail(failf(errMalformed, "response to an unknown id: %s", clip(line)), false, time.Now())
			continue
		}
		now := time.Now()
		sl := &s.slots[slot]
		sl.busy = false
		s.active--
		cerr := s.msg.check(line)
		if cerr == nil {
			cerr = checkEcho(s.msg.Result, sl.text)
		}
		if cerr != nil {
			s.rec.fail(cerr, sl.measured, now)
		} else {
			s.rec.ok(sl.measured, sl.start, now)
		}
		s.issue(slot)
	}
	return nil
}

// issue sends the next call of a slot, if the window admits one.
func (s *stdioConn) issue(i int) {
	sl := &s.slots[i]
	now := time.Now()
	run, measured := s.win.admit(now)
	if !run {
		return
	}
	if measured && !s.cpuOK {
		s.cpu0, s.cpuOK = s.serverCPU()
	}
	sl.seq++
	sl.id = sl.seq*int64(s.inflight) + int64(i)
	sl.start, sl.measured, sl.busy = now, measured, true
	stampText(sl.text, sl.id)
	s.active++
	s.writes <- append(s.rb.call(make([]byte, 0, len(sl.text)+256), sl.id, sl.text), '\n')
}

func (s *stdioConn) serverCPU() (time.Duration, bool) {
	d, err := procCPU(s.cmd.Process.Pid)
	return d, err == nil
}

// readLine returns the next line of stdout without its newline.
func (s *stdioConn) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		chunk, err := s.stdout.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			s.line = append(s.line, chunk...)
			continue
		}
		if err != nil {
			return nil, err
		}
		s.progress.Store(time.Now().UnixNano())
		if len(s.line) > 0 {
			s.line = append(s.line, chunk...)
			chunk = s.line
		}
		chunk = bytes.TrimRight(chunk, "\r\n")
		if len(bytes.TrimSpace(chunk)) == 0 {
			continue
		}
		return chunk, nil
	}
}

// exitError describes why stdout ended: the exit status and the tail of
// stderr, when the process has gone.
func (s *stdioConn) exitError(err error) error {
	if time.Since(time.Unix(0, s.progress.Load())) > s.timeout {
		return failf(errTimeout, "no answer within %v; server killed", s.timeout)
	}
	msg := err.Error()
	if errors.Is(err, io.EOF) {
		msg = "server closed stdout"
		s.settleStderr()
	}
	if t := strings.TrimSpace(s.stderr.String()); t != "" {
		msg += "; stderr: " + clipString(lastLine(t))
	}
	return failf(errTransport, "%s", msg)
}

// settleStderr gives what the server wrote to stderr as it exited time to
// arrive (exec copies it in a goroutine of its own): up to half a second,
// until it stops growing.
func (s *stdioConn) settleStderr() {
	last := -1
	for deadline := time.Now().Add(500 * time.Millisecond); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		n := len(s.stderr.String())
		if n > 0 && n == last {
			return
		}
		last = n
	}
}

// finish closes stdin, then waits for the server to exit, sending SIGTERM
// and then SIGKILL if it does not.
func (s *stdioConn) finish() {
	if s.cpuOK {
		if d, ok := s.serverCPU(); ok {
			s.cpu1 = d
		} else {
			s.cpuOK = false
		}
	}
	close(s.writes)
	exited := make(chan struct{})
	go func() {
		io.Copy(io.Discard, s.stdout)
		s.cmd.Wait()
		close(exited)
	}()
	for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
		if sig != 0 {
			s.cmd.Process.Signal(sig)
		}
		select {
		case <-exited:
			<-s.wdone
			return
		case <-time.After(2 * time.Second):
		}
	}
	// Killed, yet its stdout is still open: a child of the server holds
	// it. Leave the goroutines to the end of the process.
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func lastLine(s string) string {
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// splitCommand splits a command line into words like a POSIX shell would
// for plain words, single quotes, double quotes and backslashes; it does
// no expansion of any kind.
func splitCommand(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		inW   bool
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inW = r, true
		case r == '\\':
			if i+1 == len(rs) {
				return nil, fmt.Errorf("command ends with a backslash")
			}
			i++
			cur.WriteRune(rs[i])
			inW = true
		case r == ' ' || r == '\t' || r == '\n':
			if inW {
				words = append(words, cur.String())
				cur.Reset()
				inW = false
			}
		default:
			cur.WriteRune(r)
			inW = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote in command", quote)
	}
	if inW {
		words = append(words, cur.String())
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	return words, nil
}
