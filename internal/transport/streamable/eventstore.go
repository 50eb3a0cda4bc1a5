package streamable

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// EventStore keeps the events of a session's SSE streams so that a client
// that lost a stream can resume it with Last-Event-ID. Event ids are
// "<stream>-<seq>", seq counting from 0 (the priming event) per stream.
type EventStore interface {
	// Append stores the next event of a stream and returns its id.
	Append(session, stream string, data []byte) (id string, err error)
	// Replay calls fn for each event of the stream of lastID that comes
	// after it, in order. It fails with ErrEventsGone when events after
	// lastID have been dropped, and ErrUnknownEvent when lastID is unknown.
	Replay(session, lastID string, fn func(id string, data []byte) error) (stream string, err error)
	// Forget drops a session's events.
	Forget(session string)
}

// StreamHolder is what an EventStore that processes share may also do:
// keep, for each stream of a call a process carries, what its client is
// to get if that process dies before the call answers (Hold, until the
// release it returns, told whether the answer was stored), store the
// answer as the stream's last event and let go of that in the same step
// (AppendLast), and, in the process a client resumes the stream at once
// the carrier's lease ran out, store and give that epitaph once, numbered
// past the last event the client saw (Bury), so that a call lost with its
// process ends with an error, not with a client that resumes forever.
type StreamHolder interface {
	Hold(session, stream string, epitaph []byte) (release func(answered bool))
	AppendLast(session, stream string, data []byte) (id string, err error)
	Bury(session, stream string, lastSeen int64) (id string, epitaph []byte, ok bool)
}

// Errors of Replay.
var (
	ErrEventsGone   = errors.New("event store: the events after Last-Event-ID are no longer kept")
	ErrUnknownEvent = errors.New("event store: Last-Event-ID names no stream of this session")
)

// Default bounds of the MemoryEventStore that New uses.
const (
	DefaultEventsPerSession = 1024
	DefaultEventAge         = 5 * time.Minute
	DefaultEventBytes       = 8 << 20  // per session
	DefaultEventBytesTotal  = 64 << 20 // for the whole store
)

// MemoryEventStore is an EventStore in memory, bounded per session by a
// number of events, their age and their bytes, and in all by bytes: what
// falls out of the bounds cannot be replayed, and Replay says so. Sessions
// are locked one by one, and eviction is first in, first out, so an append
// costs O(1); past the total, the session holding the most loses its
// oldest events first, so that one client's big answers cannot push out
// everyone else's. Expired events are swept from every session as the
// store is used, not only from the session being used.
type MemoryEventStore struct {
	maxEvents   int
	maxAge      time.Duration
	maxBytes    int64 // per session
	maxTotal    int64
	now         func() time.Time
	total       atomic.Int64
	lastSweep   atomic.Int64 // unix nanoseconds
	sweepEvery  time.Duration
	globalEvict sync.Mutex

	sessions sync.Map // session -> *sessionEvents
}

// StoreOption configures a MemoryEventStore.
type StoreOption func(*MemoryEventStore)

// WithEventBytes bounds the bytes of events kept per session and in all
// (defaults DefaultEventBytes and DefaultEventBytesTotal; 0: no bound).
func WithEventBytes(perSession, total int64) StoreOption {
	return func(m *MemoryEventStore) { m.maxBytes, m.maxTotal = perSession, total }
}

type sessionEvents struct {
	mu      sync.Mutex
	streams map[string]*streamEvents
	order   []string // the stream of each event kept, oldest first, from head
	times   []time.Time
	sizes   []int
	head    int
	bytes   int64
	emptied []string // streams whose events all fell out, oldest first
	gone    bool     // forgotten: appends are not kept
}

type streamEvents struct {
	first  int // seq of events[0]
	events [][]byte
	next   int
}

// NewMemoryEventStore keeps at most maxEvents events per session, none older
// than maxAge, and DefaultEventBytes per session and DefaultEventBytesTotal
// in all unless WithEventBytes says otherwise.
func NewMemoryEventStore(maxEvents int, maxAge time.Duration, opts ...StoreOption) *MemoryEventStore {
	m := &MemoryEventStore{maxEvents: maxEvents, maxAge: maxAge, maxBytes: DefaultEventBytes, maxTotal: DefaultEventBytesTotal, now: time.Now}
	for _, o := range opts {
		o(m)
	}
	m.sweepEvery = min(max(maxAge/4, 10*time.Millisecond), time.Minute)
	return m
}

// Bytes is the size of the events kept now.
func (m *MemoryEventStore) Bytes() int64 { return m.total.Load() }

func (m *MemoryEventStore) session(id string, create bool) *sessionEvents {
	if v, ok := m.sessions.Load(id); ok {
		return v.(*sessionEvents)
	}
	if !create {
		return nil
	}
	v, _ := m.sessions.LoadOrStore(id, &sessionEvents{streams: map[string]*streamEvents{}})
	return v.(*sessionEvents)
}

func (m *MemoryEventStore) Append(session, stream string, data []byte) (string, error) {
	se := m.session(session, true)
	now := m.now()
	se.mu.Lock()
	if se.gone { // the session ended while this append was on its way
		se.mu.Unlock()
		return stream + "-0", nil
	}
	st := se.streams[stream]
	if st == nil {
		st = &streamEvents{}
		se.streams[stream] = st
	}
	seq := st.next
	st.next++
	st.events = append(st.events, append([]byte(nil), data...))
	se.order = append(se.order, stream)
	se.times = append(se.times, now)
	se.sizes = append(se.sizes, len(data))
	se.bytes += int64(len(data))
	m.total.Add(int64(len(data)))
	m.evict(se, now, 1)
	se.mu.Unlock()
	if m.maxTotal > 0 && m.total.Load() > m.maxTotal {
		m.evictLargest()
	}
	if last := m.lastSweep.Load(); now.UnixNano()-last > int64(m.sweepEvery) && m.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		m.sweep(now)
	}
	return stream + "-" + strconv.Itoa(seq), nil
}

// evict drops the oldest events beyond the bounds, keeping at least keep
// of the newest. Events of one stream are appended in order, so the oldest
// event of the session is the first event of its stream. Called with se.mu
// held.
func (m *MemoryEventStore) evict(se *sessionEvents, now time.Time, keep int) {
	cutoff := now.Add(-m.maxAge)
	for se.head < len(se.order)-keep && (len(se.order)-se.head > m.maxEvents || se.times[se.head].Before(cutoff) ||
		m.maxBytes > 0 && se.bytes > m.maxBytes) {
		m.dropOldest(se)
	}
	m.compact(se)
}

// dropOldest drops the oldest event of a session. Called with se.mu held.
func (m *MemoryEventStore) dropOldest(se *sessionEvents) {
	name := se.order[se.head]
	st := se.streams[name]
	st.events[0] = nil
	st.events = st.events[1:]
	st.first++
	// Keep the counters of recently emptied streams, so that a Replay can
	// still tell "gone" from "unknown"; forget the oldest beyond the same
	// bound. A GET stream's stay while the session does: it lives on
	// quiet, and its numbers must go on.
	if len(st.events) == 0 {
		st.events = nil
	}
	if len(st.events) == 0 && !strings.HasPrefix(name, listenMark) {
		se.emptied = append(se.emptied, name)
		if len(se.emptied) > m.maxEvents {
			if old := se.streams[se.emptied[0]]; old != nil && len(old.events) == 0 {
				delete(se.streams, se.emptied[0])
			}
			se.emptied = se.emptied[1:]
		}
	}
	se.bytes -= int64(se.sizes[se.head])
	m.total.Add(-int64(se.sizes[se.head]))
	se.order[se.head] = ""
	se.head++
}

// compact drops the evicted prefix once it is the larger part: amortized
// O(1). Called with se.mu held.
func (m *MemoryEventStore) compact(se *sessionEvents) {
	if se.head > 64 && se.head*2 > len(se.order) || se.head == len(se.order) && se.head > 0 {
		se.order = append(se.order[:0:0], se.order[se.head:]...)
		se.times = append(se.times[:0:0], se.times[se.head:]...)
		se.sizes = append(se.sizes[:0:0], se.sizes[se.head:]...)
		se.head = 0
	}
}

// evictLargest brings the store back under nine tenths of its total by
// dropping the oldest events of the sessions that hold the most.
func (m *MemoryEventStore) evictLargest() {
	m.globalEvict.Lock()
	defer m.globalEvict.Unlock()
	target := m.maxTotal / 10 * 9
	for m.total.Load() > target {
		var largest *sessionEvents
		var most int64
		m.sessions.Range(func(_, v any) bool {
			se := v.(*sessionEvents)
			se.mu.Lock()
			if se.bytes > most {
				largest, most = se, se.bytes
			}
			se.mu.Unlock()
			return true
		})
		if largest == nil {
			return
		}
		largest.mu.Lock()
		for largest.head < len(largest.order) && m.total.Load() > target {
			m.dropOldest(largest)
		}
		m.compact(largest)
		largest.mu.Unlock()
	}
}

// sweep drops expired events of every session.
func (m *MemoryEventStore) sweep(now time.Time) {
	m.sessions.Range(func(_, v any) bool {
		se := v.(*sessionEvents)
		se.mu.Lock()
		m.evict(se, now, 0)
		se.mu.Unlock()
		return true
	})
}

func (m *MemoryEventStore) Replay(session, lastID string, fn func(id string, data []byte) error) (string, error) {
	i := strings.LastIndexByte(lastID, '-')
	if i <= 0 {
		return "", ErrUnknownEvent
	}
	stream := lastID[:i]
	seq, err := strconv.Atoi(lastID[i+1:])
	if err != nil {
		return "", ErrUnknownEvent
	}
	se := m.session(session, false)
	if se == nil {
		return "", ErrUnknownEvent
	}
	se.mu.Lock()
	m.evict(se, m.now(), 0)
	st := se.streams[stream]
	if st == nil || seq < 0 || seq >= st.next {
		se.mu.Unlock()
		return "", ErrUnknownEvent
	}
	if seq+1 < st.first {
		se.mu.Unlock()
		return "", ErrEventsGone
	}
	var ids []string
	var datas [][]byte
	for s := seq + 1; s < st.next; s++ {
		ids = append(ids, stream+"-"+strconv.Itoa(s))
		datas = append(datas, st.events[s-st.first])
	}
	se.mu.Unlock()
	for k := range ids {
		if err := fn(ids[k], datas[k]); err != nil {
			return stream, err
		}
	}
	return stream, nil
}

func (m *MemoryEventStore) Forget(session string) {
	if v, ok := m.sessions.LoadAndDelete(session); ok {
		se := v.(*sessionEvents)
		se.mu.Lock()
		m.total.Add(-se.bytes)
		se.bytes, se.gone = 0, true
		se.streams, se.order, se.times, se.sizes, se.head = map[string]*streamEvents{}, nil, nil, nil, 0
		se.mu.Unlock()
	}
}
