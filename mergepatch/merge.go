package mergepatch

import "slices"

// Apply returns the result of applying the merge patch to target
// (RFC 7396, section 2). A nil target or patch is JSON null.
//
// Neither input is modified: objects are persistent (persist.go), so the
// result shares all but O(log n) small nodes per changed member with target
// and target stays valid as a checkpoint; the cost of a merge follows the
// patch, not the target. When an object patch leaves an object target as it
// was (members replaced by byte-identical scalars or arrays, deletions of
// absent keys), Apply returns target itself.
// Existing members keep their position; new members are appended in patch
// order; a null member of patch deletes. Arrays are values like any other:
// a null inside an array of patch is kept.
func Apply(target, patch *Value) *Value {
	v, _ := Merge(target, patch)
	return v
}

// Merge is Apply that also reports whether the result differs from target
// (is not Equal to it), found on the way: a replay learns that a patch is
// empty without a second walk.
func Merge(target, patch *Value) (result *Value, changed bool) {
	if patch.Kind() != Object {
		return patch, !Equal(target, patch)
	}
	if target.Kind() != Object {
		return withoutNulls(patch), true // merging into {} only removes null members
	}
	var m merger
	m.init(target)
	var buf [8]slot
	added := buf[:0] // new members, on the stack while few
	ps := &patch.object().slots
	for j := range ps.n {
		pm := ps.at(j)
		if pm.Value == nil {
			continue // a tombstone of the patch itself
		}
		// Patch keys are unique, so t's positions stay right.
		if s, add := m.member(pm.Key, pm.raw, pm.Value); add {
			added = append(added, s)
		}
	}
	return m.result(added)
}

// merger merges the members of an object patch into an object target one
// at a time; each key must come at most once.
type merger struct {
	target           *Value
	t                *object
	out              object // shares t's nodes; changes copy what they touch
	rebuilt, ownTail bool
	changed          bool
	edit             *edit // owns the nodes out copied, changed in place after
}

func (m *merger) init(target *Value) {
	m.target, m.t = target, target.object()
	m.out = *m.t
}

func (m *merger) replace(i int, s slot) {
	m.rebuilt = true
	off := m.out.slots.tailOff()
	if i < off {
		if m.edit == nil {
			m.edit = new(edit)
		}
		m.out.slots = m.out.slots.setIn(i, s, m.edit)
		return
	}
	if !m.ownTail { // one copy of the tail for all the changes in it
		m.out.slots.tail, m.out.slots.claim = slices.Clone(m.out.slots.tail), nil
		m.ownTail = true
	}
	m.out.slots.tail[i-off] = s
}

// find returns the position and slot of key in the target, or -1 and nil.
func (m *merger) find(key string) (int, *slot) {
	i := m.t.find(key)
	if i < 0 {
		return i, nil
	}
	return i, m.t.slots.at(i)
}

// member merges the patch member key: pv, returning the slot to append
// when key is new.
func (m *merger) member(key, rawKey string, pv *Value) (slot, bool) {
	i, cur := m.find(key)
	switch {
	case pv.kind == Null:
		if cur != nil {
			m.replace(i, slot{Member: Member{Key: cur.Key}, raw: cur.raw})
			m.out.live--
			m.changed = true
		}
	case cur == nil:
		m.changed = true
		return slot{Member: Member{Key: key, Value: withoutNulls(pv)}, raw: rawKey}, true
	default:
		nv, c := Merge(cur.Value, pv)
		m.merged(i, cur, nv, c)
	}
	return slot{}, false
}

// merged records nv, the merge of a patch member into the target member
// cur at position i.
func (m *merger) merged(i int, cur *slot, nv *Value, changed bool) {
	m.changed = m.changed || changed
	if !same(nv, cur.Value) {
		m.replace(i, slot{Member: Member{Key: cur.Key, Value: nv}, raw: cur.raw})
	}
}

func (m *merger) result(added []slot) (*Value, bool) {
	if !m.rebuilt && len(added) == 0 {
		return m.target, m.changed
	}
	out := m.out
	if len(added) > 0 {
		first := out.slots.n
		out.slots = out.slots.push(added)
		out.live += len(added)
		if out.index == nil || !out.index.extend(&out.slots, first) {
			out.reindex()
		}
	}
	if dead := out.slots.n - out.live; dead > width && dead > out.live {
		out = *compacted(&out) // tombstones cost at most as much as the live members
	}
	v, o := newObjectValue()
	*o = out
	return v, m.changed
}

// compacted returns o without tombstones.
func compacted(o *object) *object {
	ss := make([]slot, 0, o.live)
	o.slots.each(func(s *slot) bool {
		if s.Value != nil {
			ss = append(ss, *s)
		}
		return true
	})
	return newObject(ss)
}

// same reports whether b can stand for a: the same object or a scalar or
// array with the same source bytes.
func same(a, b *Value) bool {
	return a == b || b != nil && a.kind == b.kind && a.kind != Object && a.raw == b.raw
}

// withoutNulls returns v with null object members removed at every depth
// outside arrays, sharing what has none.
func withoutNulls(v *Value) *Value {
	if !hasNulls(v) {
		return v
	}
	var ss []slot
	v.object().each(func(m Member, rawKey string) bool {
		if m.Value.kind != Null {
			ss = append(ss, slot{Member: Member{Key: m.Key, Value: withoutNulls(m.Value)}, raw: rawKey})
		}
		return true
	})
	out, o := newObjectValue()
	o.init(slices.Clip(ss))
	return out
}

// hasNulls reports whether v has null object members outside arrays.
func hasNulls(v *Value) bool {
	if v.Kind() != Object || v.raw != "" { // a lazy object has none
		return false
	}
	return !v.obj.Load().each(func(m Member, _ string) bool {
		return m.Value.kind != Null && !hasNulls(m.Value)
	})
}

// NullMembers returns the RFC 6901 pointers of the object members of v whose
// value is null, in document order. Arrays are not searched.
func NullMembers(v *Value) []string {
	var out []string
	var walk func(v *Value, path []byte)
	walk = func(v *Value, path []byte) {
		if v.Kind() != Object || v.raw != "" { // a lazy object has none
			return
		}
		v.obj.Load().each(func(m Member, _ string) bool {
			p := appendPointer(path, m.Key)
			if m.Value.kind == Null {
				out = append(out, string(p))
			} else {
				walk(m.Value, p)
			}
			return true
		})
	}
	walk(v, nil)
	return out
}
