package validate

import (
	"math"
	"sort"

	"github.com/mcpstack/mcpstack/wire"
)

// idSet remembers the request ids a side used in a session, for id-reuse.
// Integer ids are kept as sorted ranges, so the usual 1, 2, 3, ... costs
// one range however long the session; string ids are kept exactly up to
// maxStringIDs per side and session, after which the oldest are forgotten
// (reuse of those goes unnoticed). Memory stays bounded either way.
type idSet struct {
	ranges []idRange
	strs   map[string]struct{}
	fifo   []string
	next   int // fifo slot to overwrite once full
}

type idRange struct{ lo, hi int64 }

const (
	maxRanges    = 1 << 16
	maxStringIDs = 1 << 16
)

func newIDSet() *idSet { return &idSet{} }

func (s *idSet) has(id wire.ID) bool {
	if s == nil {
		return false
	}
	if id.IsInt() {
		n := id.Int()
		i := sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].hi >= n })
		return i < len(s.ranges) && s.ranges[i].lo <= n
	}
	_, ok := s.strs[id.Str()]
	return ok
}

func (s *idSet) add(id wire.ID) {
	if id.IsZero() {
		return
	}
	if id.IsInt() {
		s.addInt(id.Int())
		return
	}
	if s.strs == nil {
		s.strs = map[string]struct{}{}
	}
	k := id.Str()
	if _, ok := s.strs[k]; ok {
		return
	}
	s.strs[k] = struct{}{}
	if len(s.fifo) < maxStringIDs {
		s.fifo = append(s.fifo, k)
		return
	}
	delete(s.strs, s.fifo[s.next])
	s.fifo[s.next] = k
	s.next = (s.next + 1) % maxStringIDs
}

func (s *idSet) addInt(n int64) {
	// The common case: the next id after the last range.
	if l := len(s.ranges); l > 0 && s.ranges[l-1].hi < n {
		if s.ranges[l-1].hi+1 == n {
			s.ranges[l-1].hi = n
			return
		}
		s.push(len(s.ranges), n)
		return
	}
	below, above := n-1, n+1 // the neighbours a range may join
	if n == math.MinInt64 {
		below = n
	}
	if n == math.MaxInt64 {
		above = n
	}
	i := sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].hi >= below })
	switch {
	case i < len(s.ranges) && s.ranges[i].lo <= n && n <= s.ranges[i].hi:
		return
	case i < len(s.ranges) && s.ranges[i].hi == below:
		s.ranges[i].hi = n
		if i+1 < len(s.ranges) && s.ranges[i+1].lo == above {
			s.ranges[i].hi = s.ranges[i+1].hi
			s.ranges = append(s.ranges[:i+1], s.ranges[i+2:]...)
		}
	case i < len(s.ranges) && s.ranges[i].lo == above:
		s.ranges[i].lo = n
	default:
		s.push(i, n)
	}
}

func (s *idSet) push(i int, n int64) {
	if len(s.ranges) >= maxRanges {
		// Forget the lowest range to stay bounded.
		s.ranges = append(s.ranges[:0], s.ranges[1:]...)
		if i > 0 {
			i--
		}
	}
	s.ranges = append(s.ranges, idRange{})
	copy(s.ranges[i+1:], s.ranges[i:])
	s.ranges[i] = idRange{n, n}
}

// remove forgets id: a request refused without a JSON-RPC answer (an
// HTTP 401) did not use it, and the client may send it again.
func (s *idSet) remove(id wire.ID) {
	if !id.IsInt() {
		delete(s.strs, id.Str()) // its fifo slot stays; forgetting it later is harmless
		return
	}
	n := id.Int()
	i := sort.Search(len(s.ranges), func(i int) bool { return s.ranges[i].hi >= n })
	if i == len(s.ranges) || s.ranges[i].lo > n {
		return
	}
	r := s.ranges[i]
	switch {
	case r.lo == n && r.hi == n:
		s.ranges = append(s.ranges[:i], s.ranges[i+1:]...)
	case r.lo == n:
		s.ranges[i].lo = n + 1
	case r.hi == n:
		s.ranges[i].hi = n - 1
	default: // split in two
		s.ranges[i].hi = n - 1
		if len(s.ranges) >= maxRanges { // full: forget the lowest range, as push does
			s.ranges = append(s.ranges[:0], s.ranges[1:]...)
			i-- // -1 when the range split was the lowest: its lower half is forgotten
		}
		s.ranges = append(s.ranges, idRange{})
		copy(s.ranges[i+2:], s.ranges[i+1:])
		s.ranges[i+1] = idRange{n + 1, r.hi}
	}
}
