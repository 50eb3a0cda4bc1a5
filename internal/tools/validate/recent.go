package validate

// recent is a set of the last max keys added: past max, the oldest added
// goes first. It bounds what the checker remembers of ids and of requests
// it let go, whatever the log.
type recent[K comparable] struct {
	max   int
	keys  map[K]struct{}
	order []K // oldest first, as a ring once full
	next  int // the slot of order to overwrite once full
}

func (r *recent[K]) has(k K) bool {
	_, ok := r.keys[k]
	return ok
}

func (r *recent[K]) add(k K) {
	if r.keys == nil {
		r.keys = map[K]struct{}{}
	}
	if _, ok := r.keys[k]; ok {
		return
	}
	r.keys[k] = struct{}{}
	if len(r.order) < r.max {
		r.order = append(r.order, k)
		return
	}
	delete(r.keys, r.order[r.next])
	r.order[r.next] = k
	r.next = (r.next + 1) % r.max
}

// remove forgets k; its slot stays until the ring comes round to it. A
// key removed and added again holds two slots, and the older one forgets
// it early, when the ring reaches it: the set then holds fewer than max
// keys, never more.
func (r *recent[K]) remove(k K) { delete(r.keys, k) }

func (r *recent[K]) len() int { return len(r.keys) }
