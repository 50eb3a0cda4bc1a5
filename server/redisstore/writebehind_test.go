package redisstore

import (
	"errors"
	"testing"
)

// The events waiting for Redis are bounded in bytes, not only in number:
// with Redis not keeping up, an append fails (the stream's client then
// resumes from what is stored, or is told it cannot) rather than the
// process holding 8,192 events of any size.
func TestWriteBehindBoundsItsBytes(t *testing.T) {
	var w writeBehind
	w.init(make(chan struct{})) // no writer: nothing leaves the queue
	event := make([]byte, 1<<20)
	taken := 0
	var err error
	for ; taken < 200; taken++ {
		if err = w.push(pending{session: "s", stream: "a", n: int64(taken), data: event}); err != nil {
			break
		}
	}
	if !errors.Is(err, errBehind) || taken != writeBehindBytes>>20 {
		t.Fatalf("took %d events of 1 MiB before %v; want %d, then errBehind", taken, err, writeBehindBytes>>20)
	}
	// Room given back, as the writer does once an event is in Redis, takes the next.
	<-w.queue // one event of 1 MiB written: its room is given back
	w.room.Release(1 << 20)
	if err := w.push(pending{session: "s", stream: "a", n: 1000, data: event}); err != nil {
		t.Errorf("after room was given back: %v", err)
	}
}
