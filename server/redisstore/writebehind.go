package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/semaphore"
)

// Bounds of the write-behind queue: events waiting for Redis, and their
// bytes (the in-memory event store's total: a stream whose client is gone
// only stores its events, so nothing else slows it); events in one round
// trip; and how long an append waits for room before it fails.
const (
	writeBehindQueue = 8192
	writeBehindBytes = 64 << 20
	writeBehindBatch = 128
	writeBehindWait  = time.Second
)

var errBehind = errors.New("redisstore: the events written behind do not reach Redis fast enough")

// writeBehind numbers the events of the streams this process carries and
// writes them to Redis from one goroutine, in order, many per round trip.
// The events are on their way to the client at once; what is queued when
// the process dies (a round trip's worth) is not replayed elsewhere. A
// replay or a Forget here waits for the queue first.
type writeBehind struct {
	mu    sync.Mutex
	next  map[streamKey]*numbering // the streams this process numbers
	queue chan pending             // made, with its writer, by start
	room  *semaphore.Weighted      // bytes of the queued events' data
	stop  <-chan struct{}          // the store closed: nothing more is taken
}

var errClosed = errors.New("redisstore: the event store is closed")

// numbering is a stream's next number, and when it was last used.
type numbering struct {
	n    int64
	used time.Time
}

// start makes the queue and its writer, which runs until stop closes.
func (w *writeBehind) start(e *events, stop <-chan struct{}, wg *sync.WaitGroup) {
	w.init(stop)
	wg.Go(func() { w.write(e) })
}

// init makes the queue and its bounds.
func (w *writeBehind) init(stop <-chan struct{}) {
	w.queue = make(chan pending, writeBehindQueue)
	w.room = semaphore.NewWeighted(writeBehindBytes)
	w.stop = stop
}

type streamKey struct{ session, stream string }

// pending is an event on its way (last: a held stream's answer, which
// lets go of its epitaph); or, with a barrier, a mark the writer closes
// once everything before it is written; or, with letGo, a held stream
// that ended unanswered giving up its lease, after its events.
type pending struct {
	session, stream string
	n               int64
	data            []byte
	size            int64 // of room, taken for data
	last            bool
	barrier         chan struct{}
	letGo           bool
}

// number gives the next number of a stream this process carries.
func (w *writeBehind) number(session, stream string) (int64, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	nb, ok := w.next[streamKey{session, stream}]
	if !ok {
		return 0, false
	}
	n := nb.n
	nb.n++
	nb.used = time.Now()
	return n, true
}

// own makes the process number a stream it opened: its first event (0)
// is written.
func (w *writeBehind) own(session, stream string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next == nil {
		w.next = map[streamKey]*numbering{}
	}
	w.next[streamKey{session, stream}] = &numbering{n: 1, used: time.Now()}
}

// forgetIdle forgets the numbering of streams unused for longer than idle
// (sessions that ended in another process leave theirs here).
func (w *writeBehind) forgetIdle(idle time.Duration) {
	cutoff := time.Now().Add(-idle)
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, nb := range w.next {
		if nb.used.Before(cutoff) {
			delete(w.next, k)
		}
	}
}

// disown forgets a stream that ended.
func (w *writeBehind) disown(session, stream string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.next, streamKey{session, stream})
}

// disownSession forgets a session's streams.
func (w *writeBehind) disownSession(session string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k := range w.next {
		if k.session == session {
			delete(w.next, k)
		}
	}
}

// push queues an event, waiting a while for room, in the queue and in
// its bytes.
func (w *writeBehind) push(p pending) error {
	select {
	case <-w.stop:
		return errClosed
	default:
	}
	p.size = min(int64(len(p.data)), writeBehindBytes)
	if !w.room.TryAcquire(p.size) {
		ctx, cancel := context.WithTimeout(context.Background(), writeBehindWait)
		err := w.room.Acquire(ctx, p.size)
		cancel()
		if err != nil {
			return errBehind
		}
	}
	p.data = append([]byte(nil), p.data...)
	select {
	case w.queue <- p:
		return nil
	default:
	}
	t := time.NewTimer(writeBehindWait)
	defer t.Stop()
	select {
	case <-w.stop:
		w.room.Release(p.size)
		return errClosed
	case w.queue <- p:
		return nil
	case <-t.C:
		w.room.Release(p.size)
		return errBehind
	}
}

// letGo queues a held stream's giving up its lease, behind its events:
// another process may then bury it at once.
func (w *writeBehind) letGo(session, stream string) {
	t := time.NewTimer(writeBehindWait)
	defer t.Stop()
	select {
	case w.queue <- pending{session: session, stream: stream, letGo: true}:
	case <-w.stop: // the lease runs out by itself
	case <-t.C: // the lease runs out by itself
	}
}

// drain waits until what was queued before it is written (or a while).
func (w *writeBehind) drain() {
	mark := make(chan struct{})
	t := time.NewTimer(2 * writeBehindWait)
	defer t.Stop()
	select {
	case w.queue <- pending{barrier: mark}:
	case <-w.stop:
		return
	case <-t.C:
		return
	}
	select {
	case <-mark:
	case <-w.stop:
	case <-t.C:
	}
}

// write takes the queue in batches, each one pipeline of append scripts.
func (w *writeBehind) write(e *events) {
	batch := make([]pending, 0, writeBehindBatch)
	for {
		var p pending
		select {
		case p = <-w.queue:
		case <-w.stop:
			return
		}
		batch = append(batch[:0], p)
	more:
		for len(batch) < writeBehindBatch && p.barrier == nil {
			select {
			case p = <-w.queue:
				batch = append(batch, p)
			default:
				break more
			}
		}
		w.flush(e, batch)
	}
}

// flush writes a batch's events and then releases its barriers. A batch
// Redis refuses is tried once more after the scripts are loaded again (a
// Redis that restarted has none); one it does not answer is lost.
func (w *writeBehind) flush(e *events, batch []pending) {
	send := func() error {
		ctx, cancel := e.cfg.background()
		defer cancel()
		pipe := e.rdb.Pipeline()
		any := false
		for _, p := range batch {
			switch {
			case p.barrier != nil:
				continue
			case p.letGo:
				pipe.Del(ctx, e.cfg.key("lease", p.session)+":"+p.stream)
			default:
				args := append(e.limits(), p.stream, p.data, strconv.FormatInt(p.n, 10), lastArg(p.last))
				pipe.EvalSha(ctx, appendScript.Hash(), e.keys(p.session), args...)
			}
			any = true
		}
		if !any {
			return nil
		}
		_, err := pipe.Exec(ctx)
		return err
	}
	err := send()
	for try := 1; err != nil && try <= 3; try++ {
		// A Redis that restarted has no scripts; one that is away may be
		// back in a moment. The batch's other commands are idempotent.
		if redis.HasErrorPrefix(err, "NOSCRIPT") {
			ctx, cancel := e.cfg.background()
			_ = appendScript.Load(ctx, e.rdb).Err()
			cancel()
		} else {
			time.Sleep(time.Duration(try*try) * 50 * time.Millisecond)
		}
		err = send()
	}
	if err != nil {
		slog.Default().Warn("redisstore: stream events lost on their way to Redis", "events", len(batch), "err", err)
	}
	for _, p := range batch {
		if p.barrier != nil {
			close(p.barrier)
		}
		w.room.Release(p.size)
	}
}
