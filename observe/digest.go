package observe

import (
	"sync"
	"sync/atomic"

	"github.com/mcpstack/mcpstack/internal/sessionid"
)

// digests remembers the digest of each live session's id, so that it is
// made once per session rather than once per request (the SHA-256 was a
// tenth of the access line's cost). A session's entry goes when it ends;
// past maxDigests entries (sessions whose end this observer never saw)
// the memory starts over.
type digests struct {
	m atomic.Pointer[sync.Map] // session id -> digest
	n atomic.Int64
	// recent holds the last digests made or found, by two bytes of the
	// id: hashing a whole id for the map costs more than the rest of a
	// lookup. A digest is the id's alone, so an entry is never stale;
	// forget clears an ended session's.
	recent [256]atomic.Pointer[digestEntry]
}

type digestEntry struct{ id, digest string }

// slot is where recent keeps id: ids are random, so two of their bytes
// spread them.
func (d *digests) slot(id string) *atomic.Pointer[digestEntry] {
	return &d.recent[(uint(id[len(id)-1])*31+uint(id[len(id)/2]))&255]
}

const maxDigests = 1 << 16

func (d *digests) of(id string) string {
	if id == "" {
		return sessionid.Digest(id)
	}
	slot := d.slot(id)
	if e := slot.Load(); e != nil && e.id == id {
		return e.digest
	}
	s := d.lookup(id)
	slot.Store(&digestEntry{id: id, digest: s})
	return s
}

func (d *digests) lookup(id string) string {
	m := d.m.Load()
	if m == nil {
		d.m.CompareAndSwap(nil, new(sync.Map))
		m = d.m.Load()
	}
	if s, ok := m.Load(id); ok {
		return s.(string)
	}
	s := sessionid.Digest(id)
	if _, loaded := m.LoadOrStore(id, s); !loaded && d.n.Add(1) > maxDigests {
		d.m.Store(new(sync.Map))
		d.n.Store(0)
	}
	return s
}

func (d *digests) forget(id string) {
	if id != "" { // an ended session's id, a bearer secret, is not kept
		slot := d.slot(id)
		if e := slot.Load(); e != nil && e.id == id {
			slot.CompareAndSwap(e, nil)
		}
	}
	if m := d.m.Load(); m != nil {
		if _, ok := m.LoadAndDelete(id); ok {
			d.n.Add(-1)
		}
	}
}
