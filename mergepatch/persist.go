package mergepatch

import (
	"hash/maphash"
	"math/bits"
	"slices"
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
	tail  []slot // never appended to in place: it may be shared
}

// vnode is an inner node (kids) or a leaf (width slots).
type vnode struct {
	kids []*vnode
	leaf []slot
}

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

// set returns v with slot i replaced.
func (v vec) set(i int, s slot) vec {
	if off := v.tailOff(); i >= off {
		v.tail = slices.Clone(v.tail)
		v.tail[i-off] = s
		return v
	}
	v.root = setNode(v.root, v.shift, i, s)
	return v
}

func setNode(n *vnode, shift uint, i int, s slot) *vnode {
	if shift == 0 {
		leaf := slices.Clone(n.leaf)
		leaf[i&(width-1)] = s
		return &vnode{leaf: leaf}
	}
	kids := slices.Clone(n.kids)
	k := (i >> shift) & (width - 1)
	kids[k] = setNode(kids[k], shift-levelLog, i, s)
	return &vnode{kids: kids}
}

// push returns v with ss appended.
func (v vec) push(ss []slot) vec {
	for len(ss) > 0 {
		if len(v.tail) == width {
			v.pushTail()
		}
		k := min(width-len(v.tail), len(ss))
		t := make([]slot, len(v.tail), len(v.tail)+k)
		copy(t, v.tail)
		v.tail = append(t, ss[:k]...)
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
	v.tail = nil
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

// hnode is a node of a persistent hash trie (a HAMT) from keys to slot
// positions. Below the last level of hash bits a node is a plain list.
type hnode struct {
	bitmap uint32
	ents   []hent
}

type hent struct {
	key   string
	pos   int
	child *hnode // non-nil: the entry is a sub-trie
}

var keySeed = maphash.MakeSeed()

func keyHash(key string) uint64 { return maphash.String(keySeed, key) }

const hashBits = 64

func (n *hnode) get(key string) (int, bool) {
	h := keyHash(key)
	for shift := uint(0); n != nil; shift += levelLog {
		if shift >= hashBits {
			for _, e := range n.ents {
				if e.key == key {
					return e.pos, true
				}
			}
			return 0, false
		}
		bit := uint32(1) << ((h >> shift) & (width - 1))
		if n.bitmap&bit == 0 {
			return 0, false
		}
		e := &n.ents[bits.OnesCount32(n.bitmap&(bit-1))]
		if e.child == nil {
			return e.pos, e.key == key
		}
		n = e.child
	}
	return 0, false
}

// put returns n with key mapped to pos. With mut, n and the nodes under it
// belong to the caller (an index being built) and are changed in place.
func (n *hnode) put(h uint64, shift uint, key string, pos int, mut bool) *hnode {
	if shift >= hashBits {
		if n == nil {
			return &hnode{ents: []hent{{key: key, pos: pos}}}
		}
		i := slices.IndexFunc(n.ents, func(e hent) bool { return e.key == key })
		if i < 0 {
			return &hnode{ents: append(slices.Clip(n.ents), hent{key: key, pos: pos})}
		}
		return n.replace(i, hent{key: key, pos: pos}, mut)
	}
	bit := uint32(1) << ((h >> shift) & (width - 1))
	if n == nil {
		return &hnode{bitmap: bit, ents: []hent{{key: key, pos: pos}}}
	}
	i := bits.OnesCount32(n.bitmap & (bit - 1))
	if n.bitmap&bit == 0 {
		ents := n.ents
		if !mut {
			ents = make([]hent, len(n.ents), len(n.ents)+1)
			copy(ents, n.ents)
		}
		ents = slices.Insert(ents, i, hent{key: key, pos: pos})
		if mut {
			n.bitmap, n.ents = n.bitmap|bit, ents
			return n
		}
		return &hnode{bitmap: n.bitmap | bit, ents: ents}
	}
	e := n.ents[i]
	switch {
	case e.child != nil:
		e.child = e.child.put(h, shift+levelLog, key, pos, mut)
	case e.key == key:
		e.pos = pos
	default: // two keys share these hash bits: push both a level down
		child := (*hnode)(nil).put(keyHash(e.key), shift+levelLog, e.key, e.pos, true)
		e = hent{child: child.put(h, shift+levelLog, key, pos, true)}
	}
	return n.replace(i, e, mut)
}

func (n *hnode) replace(i int, e hent, mut bool) *hnode {
	if mut {
		n.ents[i] = e
		return n
	}
	c := &hnode{bitmap: n.bitmap, ents: slices.Clone(n.ents)}
	c.ents[i] = e
	return c
}
