// Package stdio is the stdio transport of MCP: newline-delimited JSON-RPC
// messages on stdin and stdout. Logs belong on stderr; nothing but messages
// is ever written to out.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpstack/mcpstack/internal/core"
	"github.com/mcpstack/mcpstack/internal/jsonrpc"
	"github.com/mcpstack/mcpstack/server"
	"github.com/mcpstack/mcpstack/wire"
)

// Option configures Serve.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	maxLine int
}

// WithMaxLine bounds one message (default 4 MiB). A longer line is answered
// with -32700 and skipped; the connection goes on.
func WithMaxLine(n int) Option { return optionFunc(func(c *config) { c.maxLine = n }) }

// writer serializes messages onto out, one per line.
type writer struct {
	mu  sync.Mutex
	out io.Writer
	err error
}

func (w *writer) Send(msg []byte) error {
	if bytes.IndexByte(msg, '\n') >= 0 {
		return errors.New("stdio: a message must not contain a newline")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	buf := make([]byte, 0, len(msg)+1)
	buf = append(append(buf, msg...), '\n')
	_, w.err = w.out.Write(buf)
	return w.err
}

// maxConcurrent is how many requests are served at once.
const maxConcurrent = 256

// Serve runs one session over in and out until in ends (EOF), ctx is
// cancelled, or writing fails (that error is Serve's). Requests are
// handled concurrently; initialize, notifications and responses are
// handled in the order they arrive, before the next line is read. On EOF
// it waits for the requests in flight to be answered; on cancellation it
// cancels them and returns within 5 seconds, even while a write to a
// client that reads nothing blocks: its goroutines may then still hold in
// and out, until that write returns or the process exits.
func Serve(ctx context.Context, facade *server.Server, in io.Reader, out io.Writer, opts ...Option) error {
	// Once ctx is cancelled, Serve returns within drainTimeout even when
	// the loop is blocked writing to a client that reads nothing (a
	// write to a pipe cannot be interrupted): the loop is left to the
	// process's exit.
	timeout := drainTimeout // read once: the loop may outlive Serve
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, timeout, facade, in, out, opts...) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	select {
	case err := <-errc:
		return err
	case <-time.After(timeout):
		return ctx.Err()
	}
}

func serve(ctx context.Context, timeout time.Duration, facade *server.Server, in io.Reader, out io.Writer, opts ...Option) error {
	srv := core.Of(facade)
	cfg := config{maxLine: 4 << 20}
	for _, o := range opts {
		o.apply(&cfg)
	}
	w := &writer{out: out}
	sess, err := srv.NewSession("", w, core.Transport("stdio"), core.NeverIdle())
	if err != nil {
		return err
	}
	defer sess.Close()
	stop := context.AfterFunc(ctx, sess.Close)
	defer stop()

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		readErr <- readLines(in, cfg.maxLine, lines, w, sess.Done())
		close(lines)
	}()
	var wg sync.WaitGroup
	defer drain(ctx, &wg, timeout)
	var writeErr atomic.Pointer[error] // a handler's failed write ends the session
	// Backpressure: past maxConcurrent requests served at once, a request
	// is refused (-32000) by a write to the client, so a client that writes
	// without reading its answers fills its pipe instead of the server's
	// memory.
	slots := make(chan struct{}, maxConcurrent)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				err := <-readErr
				switch {
				case errors.Is(err, io.EOF):
					drain(ctx, &wg, timeout) // the calls in flight are answered, or fail to be
				case err != nil:
					return err
				}
				// EOF, or the reader stopped as the session ended (ctx,
				// a failed write): the same end as sess.Done's.
				return ended(ctx, &writeErr)
			}
			incoming := srv.Parse(line)
			if !incoming.HasRequests() {
				sess.Serve(ctx, incoming, w)
				continue
			}
			if incoming.InitializeAlone() {
				// Nothing after initialize can be served before it is
				// answered, so a client that pipelines is served in order.
				// (A batch with one runs as calls do: a call in it may
				// wait on the client, whose answer is read only after.)
				if reply := sess.Serve(ctx, incoming, w); reply != nil {
					if err := w.Send(reply); err != nil {
						return err
					}
				}
				continue
			}
			select {
			case slots <- struct{}{}:
			default:
				// Refused at once (answers in the body still count), and the
				// next line is read: it may be the answer a call in flight
				// waits for.
				if reply := sess.ServeBusy(ctx, incoming, w); reply != nil {
					if err := w.Send(reply); err != nil {
						return err
					}
				}
				continue
			}
			wg.Add(1)
			srv.Go(func() {
				defer wg.Done()
				defer func() { <-slots }()
				if reply := sess.Serve(ctx, incoming, w); reply != nil {
					if err := w.Send(reply); err != nil {
						srv.Logger().Error("stdio: write failed", "err", err)
						writeErr.CompareAndSwap(nil, &err)
						sess.Close()
					}
				}
			})
		case <-sess.Done():
			return ended(ctx, &writeErr)
		}
	}
}

// ended is what Serve returns when the session ended: ctx's error, else a
// failed write's, else nil.
func ended(ctx context.Context, writeErr *atomic.Pointer[error]) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := writeErr.Load(); err != nil {
		return fmt.Errorf("stdio: writing to the client: %w", *err)
	}
	return nil
}

// drainTimeout bounds how long a cancelled Serve waits for its calls: one
// blocked writing to a client that reads nothing would hold it for ever.
var drainTimeout = 5 * time.Second // a variable: tests lower it

// drain waits for the calls in flight: for ever after EOF (each is
// answered), at most timeout once ctx is cancelled (those still blocked
// in a write are left to the process's exit).
func drain(ctx context.Context, wg *sync.WaitGroup, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	select {
	case <-done:
	case <-time.After(timeout):
	}
}

// readLines sends each non-empty line to lines. An over-long line is
// answered with -32700 right away and skipped.
func readLines(in io.Reader, max int, lines chan<- []byte, w *writer, done <-chan struct{}) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var long bool
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max {
			long = true
			buf = buf[:0]
		} else if !long {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			if err == nil || errors.Is(err, io.EOF) {
				long = false
				_ = w.Send(jsonrpc.EncodeError(wire.ID{}, &wire.Error{Code: wire.CodeParseError, Message: fmt.Sprintf("Parse error: message longer than %d bytes", max)}))
			}
		} else if line := bytes.TrimSpace(buf); len(line) > 0 {
			msg := make([]byte, len(line))
			copy(msg, line)
			select {
			case lines <- msg:
			case <-done:
				return nil
			}
		}
		buf = buf[:0]
		if err != nil {
			return err
		}
	}
}
