package core

import (
	"context"
	"sync"
)

// A task of 2025-11-25 runs after its request has been answered: its
// requests to the client (elicitation, sampling) and its notifications go
// on the response of a tasks/result for it that is open in its session, as
// the spec has the client call tasks/result when it sees input_required;
// else on the session's stream. A request waits for either to be there.
// (Another session of the task's owner may wait for its result, but the
// answers to its requests must come where their ids are known.)

// taskStreams are the open tasks/result responses of a task.
type taskStreams struct {
	mu     sync.Mutex
	open   []*resultStream
	opened chan struct{} // closed when one opens
}

// resultStream is one open tasks/result response (a pointer, so that any
// Outbox, comparable or not, can be told apart).
type resultStream struct{ out Outbox }

// openStream adds the response of a tasks/result to the task's streams
// until the returned func is called.
func (t *task) openStream(out Outbox) (closeStream func()) {
	ts := &t.streams
	rs := &resultStream{out}
	ts.mu.Lock()
	ts.open = append(ts.open, rs)
	if ts.opened != nil {
		close(ts.opened)
		ts.opened = nil
	}
	ts.mu.Unlock()
	return func() {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		for i, o := range ts.open {
			if o == rs {
				ts.open = append(ts.open[:i], ts.open[i+1:]...)
				break
			}
		}
	}
}

// current are the open tasks/result responses, newest first, and a
// channel closed when another opens.
func (ts *taskStreams) current() ([]*resultStream, <-chan struct{}) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.opened == nil {
		ts.opened = make(chan struct{})
	}
	outs := make([]*resultStream, len(ts.open))
	for i, o := range ts.open {
		outs[len(outs)-1-i] = o
	}
	return outs, ts.opened
}

// deliver sends a message of the task: on an open tasks/result response,
// else on the session's stream; a request (wait) waits for one of them
// until ctx ends, a notification is dropped (ErrNoStream).
func (t *task) deliver(ctx context.Context, sess *Session, msg []byte, wait bool) error {
	sess.srv.tap(sess.id, ServerToClient, msg) // once, whichever stream takes it
	failed := map[*resultStream]bool{}
	for {
		streams, opened := t.streams.current()
		for _, rs := range streams {
			if failed[rs] {
				continue
			}
			if err := rs.out.Send(msg); err == nil {
				return nil
			}
			failed[rs] = true // its client went away
		}
		if s := sess.stream(); s != nil {
			return s.Send(msg)
		}
		if !wait {
			return ErrNoStream
		}
		select {
		case <-opened:
		case <-ctx.Done():
			return ctx.Err()
		case <-sess.Done():
			return ErrClosed
		}
	}
}
