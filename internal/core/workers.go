package core

import (
	"sync"
	"sync/atomic"
)

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
	mu      sync.RWMutex // Go hands a call over under it; close closes tasks under it
	closed  bool
	tasks   chan Task
	idle    atomic.Int32
	maxIdle int32
}

// maxIdleWorkers bounds the goroutines kept for calls to come.
const maxIdleWorkers = 128

func newWorkers() *workers {
	return &workers{tasks: make(chan Task), maxIdle: maxIdleWorkers}
}

// A Task is work for a worker: a value that runs itself, such as a
// transport's call, which then needs no closure of its own (Server.GoTask),
// or a function (Server.Go).
type Task interface{ RunTask() }

// funcTask is a function as a Task; a function is a pointer, so making
// one a Task allocates nothing.
type funcTask func()

func (f funcTask) RunTask() { f() }

// Go runs t on an idle worker, or on a new one.
func (w *workers) Go(t Task) {
	handed := false
	w.mu.RLock()
	if !w.closed {
		select {
		case w.tasks <- t:
			handed = true
		default:
		}
	}
	w.mu.RUnlock()
	if !handed {
		go w.run(t)
	}
}

// run runs t, then the calls handed to it while it is idle. An idle
// worker waits on tasks alone, not in a select with the server's end: a
// select costs a call a thousand instructions more. close ends the wait.
func (w *workers) run(t Task) {
	for {
		t.RunTask()
		t = nil // an idle worker keeps nothing of its last call alive
		if w.idle.Add(1) > w.maxIdle {
			w.idle.Add(-1)
			return
		}
		t = <-w.tasks // nil once closed
		w.idle.Add(-1)
		if t == nil {
			return
		}
	}
}

// close ends the idle workers; calls handed over later get goroutines of
// their own.
func (w *workers) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		close(w.tasks)
	}
}
