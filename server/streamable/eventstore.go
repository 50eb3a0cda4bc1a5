package streamable

import (
	"errors"
	"strconv"
	"strings"
	"sync"
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

// Errors of Replay.
var (
	ErrEventsGone   = errors.New("streamable: the events after Last-Event-ID are no longer kept")
	ErrUnknownEvent = errors.New("streamable: Last-Event-ID names no stream of this session")
)

// MemoryEventStore is an EventStore in memory, bounded per session by a
// number of events and by their age: what falls out of the bounds cannot be
// replayed, and Replay says so. Sessions are locked one by one, and
// eviction is first in, first out, so an append costs O(1).
type MemoryEventStore struct {
	maxEvents int
	maxAge    time.Duration
	now       func() time.Time

	sessions sync.Map // session -> *sessionEvents
}

type sessionEvents struct {
	mu      sync.Mutex
	streams map[string]*streamEvents
	order   []string // the stream of each event kept, oldest first, from head
	times   []time.Time
	head    int
	emptied []string // streams whose events all fell out, oldest first
}

type streamEvents struct {
	first  int // seq of events[0]
	events [][]byte
	next   int
}

// NewMemoryEventStore keeps at most maxEvents events per session, none older
// than maxAge.
func NewMemoryEventStore(maxEvents int, maxAge time.Duration) *MemoryEventStore {
	return &MemoryEventStore{maxEvents: maxEvents, maxAge: maxAge, now: time.Now}
}

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
	se.mu.Lock()
	defer se.mu.Unlock()
	st := se.streams[stream]
	if st == nil {
		st = &streamEvents{}
		se.streams[stream] = st
	}
	seq := st.next
	st.next++
	st.events = append(st.events, append([]byte(nil), data...))
	now := m.now()
	se.order = append(se.order, stream)
	se.times = append(se.times, now)
	m.evict(se, now)
	return stream + "-" + strconv.Itoa(seq), nil
}

// evict drops the oldest events beyond the bounds. Events of one stream
// are appended in order, so the oldest event of the session is the first
// event of its stream.
func (m *MemoryEventStore) evict(se *sessionEvents, now time.Time) {
	cutoff := now.Add(-m.maxAge)
	for se.head < len(se.order) && (len(se.order)-se.head > m.maxEvents || se.times[se.head].Before(cutoff)) {
		name := se.order[se.head]
		st := se.streams[name]
		st.events[0] = nil
		st.events = st.events[1:]
		st.first++
		if len(st.events) == 0 {
			// Keep the counters of recently emptied streams, so that a
			// Replay can still tell "gone" from "unknown"; forget the
			// oldest beyond the same bound.
			st.events = nil
			se.emptied = append(se.emptied, name)
			if len(se.emptied) > m.maxEvents {
				if old := se.streams[se.emptied[0]]; old != nil && len(old.events) == 0 {
					delete(se.streams, se.emptied[0])
				}
				se.emptied = se.emptied[1:]
			}
		}
		se.order[se.head] = ""
		se.head++
	}
	// Compact once the dropped prefix is the larger part: amortized O(1).
	if se.head > 64 && se.head*2 > len(se.order) {
		se.order = append(se.order[:0:0], se.order[se.head:]...)
		se.times = append(se.times[:0:0], se.times[se.head:]...)
		se.head = 0
	}
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
	m.evict(se, m.now())
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

func (m *MemoryEventStore) Forget(session string) { m.sessions.Delete(session) }
