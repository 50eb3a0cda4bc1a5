package core

import "sync"

// InFlight counts the calls a connection has in flight, so that a draining
// transport can wait for them before it closes the connection. The zero
// value is ready to use.
type InFlight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed when n drops to 0; nil while nobody waits
}

// Add counts a call that starts.
func (c *InFlight) Add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

// Done counts a call that ended.
func (c *InFlight) Done() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.zero != nil {
		close(c.zero)
		c.zero = nil
	}
	c.mu.Unlock()
}

// Idle returns a channel closed once no call is in flight (now or later).
func (c *InFlight) Idle() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	if c.zero == nil {
		c.zero = make(chan struct{})
	}
	return c.zero
}
