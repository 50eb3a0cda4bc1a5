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
// replayed, and Replay says so.
type MemoryEventStore struct {
	maxEvents int
	maxAge    time.Duration
	now       func() time.Time

	mu       sync.Mutex
	sessions map[string]*sessionEvents
}

type sessionEvents struct {
	streams map[string]*streamEvents
	count   int
}

type streamEvents struct {
	first  int // seq of events[0]
	events []storedEvent
	next   int
}

type storedEvent struct {
	at   time.Time
	data []byte
}

// NewMemoryEventStore keeps at most maxEvents events per session, none older
// than maxAge.
func NewMemoryEventStore(maxEvents int, maxAge time.Duration) *MemoryEventStore {
	return &MemoryEventStore{maxEvents: maxEvents, maxAge: maxAge, now: time.Now, sessions: map[string]*sessionEvents{}}
}

func (m *MemoryEventStore) Append(session, stream string, data []byte) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	se := m.sessions[session]
	if se == nil {
		se = &sessionEvents{streams: map[string]*streamEvents{}}
		m.sessions[session] = se
	}
	st := se.streams[stream]
	if st == nil {
		st = &streamEvents{}
		se.streams[stream] = st
	}
	seq := st.next
	st.next++
	st.events = append(st.events, storedEvent{at: m.now(), data: append([]byte(nil), data...)})
	se.count++
	m.evict(se)
	return stream + "-" + strconv.Itoa(seq), nil
}

// evict drops the oldest events of a session beyond the bounds.
func (m *MemoryEventStore) evict(se *sessionEvents) {
	cutoff := m.now().Add(-m.maxAge)
	for se.count > 0 {
		var oldest *streamEvents
		for _, st := range se.streams {
			if len(st.events) > 0 && (oldest == nil || st.events[0].at.Before(oldest.events[0].at)) {
				oldest = st
			}
		}
		if oldest == nil || (se.count <= m.maxEvents && !oldest.events[0].at.Before(cutoff)) {
			return
		}
		oldest.events = oldest.events[1:]
		oldest.first++
		se.count--
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
	m.mu.Lock()
	se := m.sessions[session]
	var st *streamEvents
	if se != nil {
		m.evict(se)
		st = se.streams[stream]
	}
	if st == nil || seq >= st.next {
		m.mu.Unlock()
		return "", ErrUnknownEvent
	}
	if seq+1 < st.first {
		m.mu.Unlock()
		return "", ErrEventsGone
	}
	var ids []string
	var datas [][]byte
	for s := seq + 1; s < st.next; s++ {
		ids = append(ids, stream+"-"+strconv.Itoa(s))
		datas = append(datas, st.events[s-st.first].data)
	}
	m.mu.Unlock()
	for k := range ids {
		if err := fn(ids[k], datas[k]); err != nil {
			return stream, err
		}
	}
	return stream, nil
}

func (m *MemoryEventStore) Forget(session string) {
	m.mu.Lock()
	delete(m.sessions, session)
	m.mu.Unlock()
}
