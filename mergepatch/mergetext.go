package mergepatch

import "errors"

// MergeText is Merge of the object patch in data into target, an object,
// without building the patch's first two levels of objects as values: a
// replay meets one small patch per model step, and building them was most
// of the cost of applying it; a patch naming every member of a wide
// object (issue 36: a million) would otherwise be held whole as values
// beside the target and the result. ok is false, and nothing is merged,
// when target is not an object or data is not one, is not valid JSON or
// repeats a key anywhere: the caller then Parses data (which reports why)
// and Merges.
//
// The result holds one copy of data, as Parse's would.
func MergeText(target *Value, data []byte) (result *Value, changed, ok bool) {
	if target.Kind() != Object {
		return nil, false, false
	}
	sc := scratches.Get().(*scratch)
	p := parser{s: string(data), path: sc.path, keys: sc.keys, ss: sc.ss}
	p.sizeSlabs()
	defer sc.recycle(&p)
	p.skipWS()
	if p.i >= len(p.s) || p.s[p.i] != '{' {
		return nil, false, false
	}
	v, changed, err := p.mergeObject(target, 1)
	if err != nil || p.dups.count > 0 {
		return nil, false, false
	}
	if p.skipWS(); p.i < len(p.s) {
		return nil, false, false
	}
	return v, changed, true
}

// errUnusual stops MergeText for a patch that Parse and Merge handle.
var errUnusual = errors.New("repeated key")

// mergeObject merges the object patch at p.i into target, an object;
// depth is that of the patch object (1 for the root), as in p.object.
func (p *parser) mergeObject(target *Value, depth int) (*Value, bool, error) {
	var m merger
	m.init(target)
	var buf [8]slot
	added := buf[:0] // new members, on the stack while few
	mark := len(p.keys)
	var wide *keySet // past smallObject keys
	err := p.members(func(key, rawKey string, _ int) error {
		// Keys must be unique for m to find the target's members
		// where they are; a few keys are checked fastest in a list.
		if wide == nil && len(p.keys)-mark >= smallObject {
			wide = newKeySet(m.t)
			for _, k := range p.keys[mark:] {
				wide.add(k)
			}
			p.keys = p.keys[:mark]
		}
		if wide != nil {
			if !wide.add(key) {
				return errUnusual
			}
		} else {
			if contains(p.keys[mark:], key) {
				return errUnusual
			}
			p.keys = append(p.keys, key)
		}
		if depth < eagerDepth && p.i < len(p.s) && p.s[p.i] == '{' {
			if i, cur := m.find(key); cur != nil && cur.Value.Kind() == Object {
				nv, c, err := p.mergeObject(cur.Value, depth+1)
				if err == nil {
					m.merged(i, cur, nv, c)
				}
				return err
			}
		}
		pv, err := p.value(depth)
		if err != nil {
			return err
		}
		if s, add := m.member(key, rawKey, pv); add {
			added = append(added, s)
		}
		return nil
	})
	p.keys = p.keys[:mark]
	if err != nil {
		return nil, false, err
	}
	v, changed := m.result(added)
	return v, changed, nil
}

// keySet tells whether a key of a wide patch object came before, in
// little memory: a bit per member of the target for the keys it has, and
// a hash index of the others.
type keySet struct {
	t     *object
	seen  []uint64 // by the target's slot position
	fresh index    // of keys, the keys not in the target
	keys  []string
}

func newKeySet(t *object) *keySet {
	return &keySet{t: t, seen: make([]uint64, (t.slots.n+63)/64), fresh: index{tab: make([]entry, tableSize(smallObject))}}
}

// add records key and reports whether it is new.
func (ks *keySet) add(key string) bool {
	if i := ks.t.find(key); i >= 0 {
		w, b := i/64, uint64(1)<<(i%64)
		if ks.seen[w]&b != 0 {
			return false
		}
		ks.seen[w] |= b
		return true
	}
	if ks.fresh.lookupKey(key, ks.keys) >= 0 {
		return false
	}
	ks.fresh.record(hashKey(key), int32(len(ks.keys)))
	ks.keys = append(ks.keys, key)
	return true
}
