package validate

import (
	"math/rand/v2"

	"github.com/mcpstack/mcpstack/wire"
)

// idSet remembers the request ids a side used in a session, for id-reuse.
// Integer ids are kept as ranges (a rangeTree), so the usual 1, 2, 3, ...
// costs one range however long the session, and any order of ids costs
// O(log n) an id; at most maxRanges ranges are kept, the lowest forgotten
// first. String ids are kept exactly up to maxStringIDs per side and
// session, after which the oldest are forgotten (reuse of those goes
// unnoticed). Memory stays bounded either way.
type idSet struct {
	ints rangeTree
	strs recent[string]
}

type idRange struct{ lo, hi int64 }

const (
	maxRanges    = 1 << 16
	maxStringIDs = 1 << 16
)

func newIDSet() *idSet { return &idSet{strs: recent[string]{max: maxStringIDs}} }

func (s *idSet) has(id wire.ID) bool {
	if s == nil {
		return false
	}
	if id.IsInt() {
		return s.ints.has(id.Int())
	}
	return s.strs.has(id.Str())
}

func (s *idSet) add(id wire.ID) {
	if id.IsZero() {
		return
	}
	if id.IsInt() {
		s.ints.add(id.Int())
		return
	}
	s.strs.add(id.Str())
}

// remove forgets id: a request refused without a JSON-RPC answer (an
// HTTP 401) did not use it, and the client may send it again.
func (s *idSet) remove(id wire.ID) {
	if !id.IsInt() {
		s.strs.remove(id.Str())
		return
	}
	s.ints.remove(id.Int())
}

// rangeTree holds disjoint ranges of integers, no two adjacent, at most
// maxRanges of them, as a treap: a binary search tree by lo that is a
// heap by a random priority, so that its depth is O(log n) whatever
// order the ids come in (a sorted slice cost a copy of up to 1 MiB for
// each id below the highest: descending ids were quadratic). Its nodes
// are in one slice, linked by index (0 is none), without pointers for
// the collector to trace.
type rangeTree struct {
	nodes []rangeNode // nodes[0] is not used
	root  int32
	free  int32 // released nodes, linked by left
	n     int   // ranges held
	steps int   // nodes visited: what tests count
}

type rangeNode struct {
	idRange
	left, right int32
	prio        uint32
}

// at returns the node with the greatest lo not above n (0: none), the
// only one that may hold n.
func (t *rangeTree) at(n int64) int32 {
	found := int32(0)
	for x := t.root; x != 0; {
		t.steps++
		if t.nodes[x].lo <= n {
			found, x = x, t.nodes[x].right
		} else {
			x = t.nodes[x].left
		}
	}
	return found
}

// after returns the node with the least lo above n (0: none).
func (t *rangeTree) after(n int64) int32 {
	found := int32(0)
	for x := t.root; x != 0; {
		t.steps++
		if t.nodes[x].lo > n {
			found, x = x, t.nodes[x].left
		} else {
			x = t.nodes[x].right
		}
	}
	return found
}

func (t *rangeTree) has(n int64) bool {
	x := t.at(n)
	return x != 0 && n <= t.nodes[x].hi
}

func (t *rangeTree) add(n int64) {
	p := t.at(n)
	if p != 0 && n <= t.nodes[p].hi {
		return
	}
	// p ends below n, so n-1 does not overflow; s starts above n, so
	// n+1 does not either.
	joinBelow := p != 0 && t.nodes[p].hi == n-1
	s := t.after(n)
	joinAbove := s != 0 && t.nodes[s].lo == n+1
	switch {
	case joinBelow && joinAbove:
		t.nodes[p].hi = t.nodes[s].hi
		t.root = t.delete(t.root, t.nodes[s].lo)
		t.n--
	case joinBelow:
		t.nodes[p].hi = n
	case joinAbove:
		t.nodes[s].lo = n // still between its neighbours: the order holds
	default:
		t.insert(idRange{n, n})
	}
}

func (t *rangeTree) remove(n int64) {
	x := t.at(n)
	if x == 0 || n > t.nodes[x].hi {
		return
	}
	r := t.nodes[x].idRange
	switch {
	case r.lo == n && r.hi == n:
		t.root = t.delete(t.root, n)
		t.n--
	case r.lo == n:
		t.nodes[x].lo = n + 1
	case r.hi == n:
		t.nodes[x].hi = n - 1
	default: // split in two; when full the lowest range is forgotten, which may be the lower half
		t.nodes[x].hi = n - 1
		t.insert(idRange{n + 1, r.hi})
	}
}

// insert adds a range that neither overlaps nor touches another. When the
// tree is full it first forgets the lowest range, to stay bounded.
func (t *rangeTree) insert(r idRange) {
	if t.n >= maxRanges {
		t.deleteMin()
	}
	var x int32
	if t.free != 0 {
		x, t.free = t.free, t.nodes[t.free].left
	} else {
		if len(t.nodes) == 0 {
			t.nodes = append(t.nodes, rangeNode{})
		}
		t.nodes = append(t.nodes, rangeNode{})
		x = int32(len(t.nodes) - 1)
	}
	t.nodes[x] = rangeNode{idRange: r, prio: rand.Uint32()}
	t.root = t.insertAt(t.root, x)
	t.n++
}

// insertAt puts node x in the subtree at root and returns the subtree's
// new root. (No function below appends to nodes: the slice stays put.)
func (t *rangeTree) insertAt(root, x int32) int32 {
	if root == 0 {
		return x
	}
	t.steps++
	if t.nodes[x].prio > t.nodes[root].prio {
		t.nodes[x].left, t.nodes[x].right = t.split(root, t.nodes[x].lo)
		return x
	}
	if t.nodes[x].lo < t.nodes[root].lo {
		t.nodes[root].left = t.insertAt(t.nodes[root].left, x)
	} else {
		t.nodes[root].right = t.insertAt(t.nodes[root].right, x)
	}
	return root
}

// split parts the subtree at x into the nodes below lo and the others.
func (t *rangeTree) split(x int32, lo int64) (below, rest int32) {
	if x == 0 {
		return 0, 0
	}
	t.steps++
	if t.nodes[x].lo < lo {
		a, b := t.split(t.nodes[x].right, lo)
		t.nodes[x].right = a
		return x, b
	}
	a, b := t.split(t.nodes[x].left, lo)
	t.nodes[x].left = b
	return a, x
}

// merge joins two subtrees, every lo of a below every lo of b.
func (t *rangeTree) merge(a, b int32) int32 {
	if a == 0 {
		return b
	}
	if b == 0 {
		return a
	}
	t.steps++
	if t.nodes[a].prio > t.nodes[b].prio {
		t.nodes[a].right = t.merge(t.nodes[a].right, b)
		return a
	}
	t.nodes[b].left = t.merge(a, t.nodes[b].left)
	return b
}

// delete removes the node starting at lo from the subtree at root and
// returns the subtree's new root; the caller counts n.
func (t *rangeTree) delete(root int32, lo int64) int32 {
	if root == 0 {
		return 0
	}
	t.steps++
	switch nd := &t.nodes[root]; {
	case lo < nd.lo:
		nd.left = t.delete(nd.left, lo)
	case lo > nd.lo:
		nd.right = t.delete(nd.right, lo)
	default:
		m := t.merge(nd.left, nd.right)
		t.release(root)
		return m
	}
	return root
}

// deleteMin forgets the lowest range.
func (t *rangeTree) deleteMin() {
	parent, x := int32(0), t.root
	for t.nodes[x].left != 0 {
		t.steps++
		parent, x = x, t.nodes[x].left
	}
	if parent == 0 {
		t.root = t.nodes[x].right
	} else {
		t.nodes[parent].left = t.nodes[x].right // its priorities are below the parent's
	}
	t.release(x)
	t.n--
}

func (t *rangeTree) release(x int32) {
	t.nodes[x] = rangeNode{left: t.free}
	t.free = x
}

// ranges returns the ranges in order (tests).
func (t *rangeTree) ranges() []idRange {
	var out []idRange
	var walk func(x int32)
	walk = func(x int32) {
		if x == 0 {
			return
		}
		walk(t.nodes[x].left)
		out = append(out, t.nodes[x].idRange)
		walk(t.nodes[x].right)
	}
	walk(t.root)
	return out
}
