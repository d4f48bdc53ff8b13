package mergepatch

// Apply returns the result of applying the merge patch to target
// (RFC 7396, section 2). A nil target or patch is JSON null.
//
// Neither input is modified: objects on the path of a change are copied and
// every other subtree is shared with the inputs, so target stays valid as a
// checkpoint. When an object patch leaves an object target as it was
// (members replaced by byte-identical scalars or arrays, deletions of absent
// keys), Apply returns target itself.
// Existing members keep their position; new members are appended in patch
// order; a null member of patch deletes. Arrays are values like any other:
// a null inside an array of patch is kept.
func Apply(target, patch *Value) *Value {
	if patch.Kind() != Object {
		return patch
	}
	if target.Kind() != Object {
		return withoutNulls(patch) // merging into {} only removes null members
	}
	t := target.obj
	var out *object // copy of t, made on the first change
	deleted, added := false, false
	for j, pm := range patch.obj.members {
		i := t.find(pm.Key)
		var nv *Value // new value; nil marks a deletion
		if pm.Value.kind != Null {
			var cur *Value
			if i >= 0 {
				cur = t.members[i].Value
			}
			if nv = Apply(cur, pm.Value); same(nv, cur) {
				continue
			}
		} else if i < 0 {
			continue
		}
		if out == nil {
			out = t.clone(len(patch.obj.members) - j)
		}
		if i >= 0 {
			out.members[i].Value = nv
			deleted = deleted || nv == nil
		} else {
			out.members = append(out.members, Member{Key: pm.Key, Value: nv})
			out.keys = append(out.keys, patch.obj.keys[j])
			added = true
		}
	}
	if out == nil {
		return target
	}
	if deleted {
		n := 0
		for i, m := range out.members {
			if m.Value != nil {
				out.members[n], out.keys[n] = m, out.keys[i]
				n++
			}
		}
		out.members, out.keys = out.members[:n], out.keys[:n]
	}
	if deleted || added {
		out.index = nil
		if len(out.members) > smallObject {
			out.reindex()
		}
	}
	return &Value{kind: Object, obj: out}
}

// same reports whether b can stand for a: the same object or a scalar or
// array with the same source bytes.
func same(a, b *Value) bool {
	return a == b || b != nil && a.kind == b.kind && a.kind != Object && a.raw == b.raw
}

// clone copies o with room for extra more members. The index is shared; the
// caller replaces it if the keys change.
func (o *object) clone(extra int) *object {
	n := len(o.members)
	return &object{
		members: append(make([]Member, 0, n+extra), o.members...),
		keys:    append(make([]string, 0, n+extra), o.keys...),
		index:   o.index,
	}
}

// withoutNulls returns v with null object members removed at every depth
// outside arrays, sharing what has none.
func withoutNulls(v *Value) *Value {
	if v.Kind() != Object {
		return v
	}
	var out *object
	for i, m := range v.obj.members {
		nv := withoutNulls(m.Value)
		if m.Value.kind == Null {
			nv = nil
		} else if nv == m.Value {
			if out != nil {
				out.members = append(out.members, m)
				out.keys = append(out.keys, v.obj.keys[i])
			}
			continue
		}
		if out == nil {
			out = &object{members: make([]Member, i, len(v.obj.members)), keys: make([]string, i, len(v.obj.members))}
			copy(out.members, v.obj.members)
			copy(out.keys, v.obj.keys)
		}
		if nv != nil {
			out.members = append(out.members, Member{Key: m.Key, Value: nv})
			out.keys = append(out.keys, v.obj.keys[i])
		}
	}
	if out == nil {
		return v
	}
	if len(out.members) > smallObject {
		out.reindex()
	}
	return &Value{kind: Object, obj: out}
}

// Changes reports whether Apply(target, patch) would not be Equal to target,
// without building the result.
func Changes(target, patch *Value) bool {
	if patch.Kind() != Object {
		return !Equal(target, patch)
	}
	if target.Kind() != Object {
		return true
	}
	for _, pm := range patch.obj.members {
		cur, ok := target.Get(pm.Key)
		if pm.Value.kind == Null {
			if ok {
				return true
			}
		} else if !ok || Changes(cur, pm.Value) {
			return true
		}
	}
	return false
}

// NullMembers returns the RFC 6901 pointers of the object members of v whose
// value is null, in document order. Arrays are not searched.
func NullMembers(v *Value) []string {
	var out []string
	var walk func(v *Value, path []byte)
	walk = func(v *Value, path []byte) {
		if v.Kind() != Object {
			return
		}
		for _, m := range v.obj.members {
			p := appendPointer(path, m.Key)
			if m.Value.kind == Null {
				out = append(out, string(p))
			} else {
				walk(m.Value, p)
			}
		}
	}
	walk(v, nil)
	return out
}
