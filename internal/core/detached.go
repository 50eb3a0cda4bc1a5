package core

import (
	"context"
	"time"
)

// detached is context.WithoutCancel for the call path: a call outlives
// the request that carried it (the client may resume its stream), keeping
// the request's values. The standard library's boxes its struct on every
// Value lookup that passes through it, four allocations a call; this one
// is a pointer into the Call, which holds it. One difference: context.Cause
// of it (not of contexts derived with WithCancel) is its parent's cause
// once the parent ends, where WithoutCancel's is nil; nothing here asks.
type detached struct{ parent context.Context }

func (*detached) Deadline() (time.Time, bool) { return time.Time{}, false }

// Done is nil: the context is never cancelled, and contexts derived from
// it do not attach to the parent's cancellation.
func (*detached) Done() <-chan struct{} { return nil }
func (*detached) Err() error            { return nil }
func (d *detached) Value(key any) any   { return d.parent.Value(key) }
