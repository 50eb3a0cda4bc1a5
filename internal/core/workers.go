package core

import "sync/atomic"

// workers runs calls on goroutines that outlive them. A fresh goroutine
// starts on a small stack that grows, by copying, as the call descends
// into validation, dispatch and the handler: a quarter of a call's
// instructions went there. A worker's stack has grown already.
//
// A call never waits for a worker: without an idle one it gets a goroutine
// of its own, which becomes a worker when the call ends, so that a call
// that waits on its client (sampling, elicitation) holds up nobody. At
// most maxIdle workers wait for work; the others end, and all end when the
// server closes.
type workers struct {
	tasks   chan func()
	stop    <-chan struct{}
	idle    atomic.Int32
	maxIdle int32
}

// maxIdleWorkers bounds the goroutines kept for calls to come.
const maxIdleWorkers = 128

func newWorkers(stop <-chan struct{}) *workers {
	return &workers{tasks: make(chan func()), stop: stop, maxIdle: maxIdleWorkers}
}

// Go runs fn on an idle worker, or on a new one.
func (w *workers) Go(fn func()) {
	select {
	case w.tasks <- fn:
	default:
		go w.run(fn)
	}
}

func (w *workers) run(fn func()) {
	for {
		fn()
		fn = nil // an idle worker keeps nothing of its last call alive
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		select {
		case fn = <-w.tasks:
			w.idle.Add(-1)
		case <-w.stop:
			w.idle.Add(-1)
			return
		}
	}
}
