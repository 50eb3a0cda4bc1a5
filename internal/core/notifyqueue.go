package core

import "sync"

// maxQueuedNotifications bounds what waits to be sent to one client's
// stream by Broadcast: past it, a client that does not read loses the
// excess, and the others are not delayed by it.
const maxQueuedNotifications = 32

// notifyQueue sends one client's broadcast notifications in order, on at
// most one goroutine at a time, so that a stalled stream holds one
// goroutine and a bounded queue, whatever the rate of broadcasts. A
// notification equal to one still waiting is not queued again: what
// Broadcast sends (list_changed, a resource's update) says "look again",
// and saying it twice in a row adds nothing.
type notifyQueue struct {
	mu      sync.Mutex
	pending []queued
	running bool
}

type queued struct {
	key  string
	send func()
}

// push queues send under key, and reports false when the queue is full
// (send is dropped). A key already waiting is not queued twice.
func (q *notifyQueue) push(key string, send func()) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, p := range q.pending {
		if p.key == key {
			return true
		}
	}
	if len(q.pending) >= maxQueuedNotifications {
		return false
	}
	q.pending = append(q.pending, queued{key: key, send: send})
	if !q.running {
		q.running = true
		go q.drain()
	}
	return true
}

func (q *notifyQueue) drain() {
	for {
		q.mu.Lock()
		if len(q.pending) == 0 {
			q.running = false
			q.mu.Unlock()
			return
		}
		next := q.pending[0]
		q.pending = q.pending[1:]
		q.mu.Unlock()
		next.send()
	}
}
