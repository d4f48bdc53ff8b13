package mergepatch

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
)

// Objects are persistent: a merge copies O(log n) small nodes per changed or
// added member and shares the rest with its target, so replaying N patches
// onto one growing object costs time and memory in proportion to the
// patches, not N times the object, and every earlier value stays a valid
// checkpoint.

// slot is one member position of an object. Deleting a member leaves its
// slot with a nil Value (a tombstone) until the object is compacted, so the
// positions of the others do not move.
type slot struct {
	Member
	raw string // source spelling of the key, quotes included
}

const (
	width    = 32 // branching of the vector and the hash trie
	levelLog = 5  // log2(width)
)

// vec is a persistent vector of slots: a width-ary trie of full leaves plus
// a tail of the last 1..width slots (the layout of Clojure's vectors).
type vec struct {
	n     int
	shift uint   // levelLog * (height of root - 1); 0 when root is a leaf
	root  *vnode // nil while every slot fits in the tail
	tail  []slot
	// claim is how much of tail's array some vector uses: a push may
	// append in place only by raising it from len(tail) (so only one of
	// the vectors sharing the array ever does). nil: copy on push.
	claim *atomic.Int32
}

// vnode is an inner node (kids) or a leaf (width slots).
type vnode struct {
	kids []*vnode
	leaf []slot
	// owner is the edit that made the node, while it may still change it
	// in place (setIn); nil for a node no edit may change.
	owner *edit
}

// edit is one merge building a new vector from another: the nodes it
// copies are its own, and it changes them in place from then on, so a
// patch that replaces every member of an object copies each node once
// (O(n)) instead of a path of nodes per member (O(n log n) time, and
// garbage of width slots per member). The edit ends with the merge; the
// nodes it made are then as immutable as any other, since no later edit
// has the same owner.
type edit struct{ _ byte } // not zero-sized: each edit has its own address

// tailOff is the index of the first slot in the tail.
func (v *vec) tailOff() int { return v.n - len(v.tail) }

func (v *vec) at(i int) *slot {
	if off := v.tailOff(); i >= off {
		return &v.tail[i-off]
	}
	n := v.root
	for s := v.shift; s > 0; s -= levelLog {
		n = n.kids[(i>>s)&(width-1)]
	}
	return &n.leaf[i&(width-1)]
}

// setIn returns v with slot i replaced, for the edit e: the trie nodes e
// made are changed in place, the others copied (and then e's). A nil e
// copies every node on the path.
func (v vec) setIn(i int, s slot, e *edit) vec {
	if off := v.tailOff(); i >= off {
		v.tail, v.claim = slices.Clone(v.tail), nil
		v.tail[i-off] = s
		return v
	}
	v.root = setNode(v.root, v.shift, i, s, e)
	return v
}

func setNode(n *vnode, shift uint, i int, s slot, e *edit) *vnode {
	if e == nil || n.owner != e {
		n = &vnode{kids: slices.Clone(n.kids), leaf: slices.Clone(n.leaf), owner: e}
	}
	if shift == 0 {
		n.leaf[i&(width-1)] = s
		return n
	}
	k := (i >> shift) & (width - 1)
	n.kids[k] = setNode(n.kids[k], shift-levelLog, i, s, e)
	return n
}

// push returns v with ss appended.
func (v vec) push(ss []slot) vec {
	for len(ss) > 0 {
		if len(v.tail) == width {
			v.pushTail()
		}
		n := len(v.tail)
		k := min(width-n, len(ss))
		if v.claim == nil || n+k > cap(v.tail) || !v.claim.CompareAndSwap(int32(n), int32(n+k)) {
			c := width // a vector past its first leaf fills every tail
			if v.root == nil {
				c = min(width, max(2*(n+k), 4))
			}
			t := make([]slot, n, c)
			copy(t, v.tail)
			v.tail, v.claim = t, new(atomic.Int32)
			v.claim.Store(int32(n + k))
		}
		v.tail = append(v.tail, ss[:k]...) // in place: the claim is ours
		v.n += k
		ss = ss[k:]
	}
	return v
}

// pushTail moves the full tail into the trie, copying the nodes on its path.
func (v *vec) pushTail() {
	leaf := &vnode{leaf: v.tail}
	idx := v.tailOff()
	switch {
	case v.root == nil:
		v.root = leaf
	case idx == 1<<(v.shift+levelLog): // the trie is full: grow a level
		v.root = &vnode{kids: []*vnode{v.root, newPath(v.shift, leaf)}}
		v.shift += levelLog
	default:
		v.root = pushLeaf(v.root, v.shift, idx, leaf)
	}
	v.tail, v.claim = nil, nil
}

func pushLeaf(n *vnode, shift uint, idx int, leaf *vnode) *vnode {
	kids := make([]*vnode, len(n.kids), len(n.kids)+1)
	copy(kids, n.kids)
	if k := (idx >> shift) & (width - 1); k < len(kids) {
		kids[k] = pushLeaf(kids[k], shift-levelLog, idx, leaf)
	} else {
		kids = append(kids, newPath(shift-levelLog, leaf))
	}
	return &vnode{kids: kids}
}

func newPath(shift uint, leaf *vnode) *vnode {
	if shift == 0 {
		return leaf
	}
	return &vnode{kids: []*vnode{newPath(shift-levelLog, leaf)}}
}

// each calls f on the slots in order until f returns false.
func (v *vec) each(f func(*slot) bool) bool {
	if v.root != nil && !eachNode(v.root, f) {
		return false
	}
	for i := range v.tail {
		if !f(&v.tail[i]) {
			return false
		}
	}
	return true
}

func eachNode(n *vnode, f func(*slot) bool) bool {
	for i := range n.leaf {
		if !f(&n.leaf[i]) {
			return false
		}
	}
	for _, k := range n.kids {
		if !eachNode(k, f) {
			return false
		}
	}
	return true
}

// index maps the keys of an object to slot positions. It is shared by an
// object and the objects merged from it in a line (each checkpoint of a
// replay): a merge that adds keys to the newest of them records them in
// place, and every object reads the index only up to its own slot count,
// so older objects never see what was added after them. A merge into an
// older object (after a rollback) builds a new index. The lock makes
// reads from other goroutines safe while the newest object grows.
//
// It is an open-addressing table of (hash, position) pairs rather than a
// map from key to position: a key's slot holds the key, so the table
// holds no pointers for the collector to scan, and growing it moves
// pairs without hashing any key again.
type index struct {
	mu   sync.RWMutex
	n    int     // slots covered: those of the newest object
	tab  []entry // len a power of two, at most half full
	used int
}

// entry is one slot position with the hash of its key; pos1 is the
// position plus one, so the zero entry is free.
type entry struct {
	hash uint32
	pos1 int32
}

var hashSeed = maphash.MakeSeed()

func hashKey(key string) uint32 { return uint32(maphash.String(hashSeed, key)) }

func newIndex(slots *vec) *index {
	x := &index{tab: make([]entry, tableSize(slots.n))}
	slots.each(func(s *slot) bool {
		x.record(hashKey(s.Key), int32(x.n))
		x.n++
		return true
	})
	return x
}

// tableSize is the smallest power of two at least twice n, and at least 32.
func tableSize(n int) int {
	size := 32
	for size < 2*n {
		size *= 2
	}
	return size
}

func (x *index) record(hash uint32, pos int32) {
	if 2*(x.used+1) > len(x.tab) {
		old := x.tab
		x.tab = make([]entry, 2*len(old))
		for _, e := range old {
			if e.pos1 != 0 {
				x.put(e)
			}
		}
	}
	x.put(entry{hash: hash, pos1: pos + 1})
	x.used++
}

func (x *index) put(e entry) {
	mask := uint32(len(x.tab) - 1)
	i := e.hash & mask
	for x.tab[i].pos1 != 0 {
		i = (i + 1) & mask
	}
	x.tab[i] = e
}

// lookup returns the last slot of key among the first slots.n; slots is
// the caller's, which agrees with the newest object on the key of each
// of its slots.
func (x *index) lookup(key string, slots *vec) (int, bool) {
	hash := hashKey(key)
	x.mu.RLock()
	defer x.mu.RUnlock()
	mask := uint32(len(x.tab) - 1)
	best := int32(-1)
	// A key deleted and added again has several slots: the whole probe
	// run is searched for the last of them below slots.n.
	for i := hash & mask; x.tab[i].pos1 != 0; i = (i + 1) & mask {
		e := x.tab[i]
		if p := e.pos1 - 1; e.hash == hash && p > best && int(p) < slots.n && slots.at(int(p)).Key == key {
			best = p
		}
	}
	return int(best), best >= 0
}

// lookupIn returns the position of key in ss, whose keys are unique and
// recorded in x, or -1: the index of an object being parsed, before its
// slots are a vec (it takes no lock: the parse owns it).
func (x *index) lookupIn(key string, ss []slot) int {
	hash := hashKey(key)
	mask := uint32(len(x.tab) - 1)
	for i := hash & mask; x.tab[i].pos1 != 0; i = (i + 1) & mask {
		if e := x.tab[i]; e.hash == hash && ss[e.pos1-1].Key == key {
			return int(e.pos1 - 1)
		}
	}
	return -1
}

// lookupKey is lookupIn over a list of unique keys.
func (x *index) lookupKey(key string, keys []string) int {
	hash := hashKey(key)
	mask := uint32(len(x.tab) - 1)
	for i := hash & mask; x.tab[i].pos1 != 0; i = (i + 1) & mask {
		if e := x.tab[i]; e.hash == hash && keys[e.pos1-1] == key {
			return int(e.pos1 - 1)
		}
	}
	return -1
}

// extend records the slots from first on, when first is where the index
// ends; otherwise it reports false and changes nothing.
func (x *index) extend(slots *vec, first int) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.n != first {
		return false
	}
	for i := first; i < slots.n; i++ {
		x.record(hashKey(slots.at(i).Key), int32(i))
	}
	x.n = slots.n
	return true
}
