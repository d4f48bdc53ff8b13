package repair

// Changes is what the rewrite changed, in output order, kept compactly: a
// plan of a million changes is a million fixed-size records and their
// clipped values in one arena, the rule, action and member names interned
// (a Change per fix, with its own copies of the values, cost three times as
// much). At gives each one back as a Change.
type Changes struct {
	recs  []changeRec
	arena [][]byte // the clipped Before and After of each change, one after the other, in blocks (never copied to grow)
	names []string // interned Rule, Action and Member
	index map[string]uint32
	last  [3]uint32 // the names of the last change added: most repeat
}

type changeRec struct {
	line, outLine        int
	offset               int64
	at                   uint64 // in arena (block<<32 | offset): Before, then After
	beforeLen, afterLen  int64
	part                 uint32
	rule, action, member uint32
	keepB, keepA         uint16 // the clipped lengths (<= KeepBytes)
	hadBefore            bool
}

// Len is the number of changes.
func (cs *Changes) Len() int {
	if cs == nil {
		return 0
	}
	return len(cs.recs)
}

// At returns change i. Its Before and After share the store's memory:
// they must not be modified.
func (cs *Changes) At(i int) Change {
	r := &cs.recs[i]
	block, off := cs.arena[r.at>>32], int(r.at&(1<<32-1))
	mid, end := off+int(r.keepB), off+int(r.keepB)+int(r.keepA)
	b, a := block[off:mid:mid], block[mid:end:end]
	c := Change{Rule: cs.names[r.rule], Line: r.line, OutLine: r.outLine, Offset: r.offset, Part: int(r.part),
		Action: cs.names[r.action], Member: cs.names[r.member], HadBefore: r.hadBefore,
		BeforeLen: int(r.beforeLen), AfterLen: int(r.afterLen)}
	if r.keepB > 0 {
		c.Before = b
	}
	if r.keepA > 0 {
		c.After = a
	}
	return c
}

// All yields the changes in order.
func (cs *Changes) All(yield func(int, Change) bool) {
	for i := range cs.Len() {
		if !yield(i, cs.At(i)) {
			return
		}
	}
}

// Grow makes room for n more changes.
func (cs *Changes) Grow(n int) {
	if n > cap(cs.recs)-len(cs.recs) {
		recs := make([]changeRec, len(cs.recs), len(cs.recs)+n)
		copy(recs, cs.recs)
		cs.recs = recs
	}
}

// Add appends a change; its Before and After are clipped to KeepBytes
// and copied (BeforeLen and AfterLen are taken as given).
func (cs *Changes) Add(c Change) {
	b, a := c.Before, c.After
	if len(b) > KeepBytes {
		b = b[:KeepBytes]
	}
	if len(a) > KeepBytes {
		a = a[:KeepBytes]
	}
	n := len(cs.arena)
	if n == 0 || len(cs.arena[n-1])+len(b)+len(a) > cap(cs.arena[n-1]) {
		cs.arena = append(cs.arena, make([]byte, 0, arenaBlock))
		n++
	}
	block := &cs.arena[n-1]
	r := changeRec{line: c.Line, outLine: c.OutLine, offset: c.Offset, at: uint64(n-1)<<32 | uint64(len(*block)),
		beforeLen: int64(c.BeforeLen), afterLen: int64(c.AfterLen), part: uint32(c.Part),
		rule: cs.name(0, c.Rule), action: cs.name(1, c.Action), member: cs.name(2, c.Member),
		keepB: uint16(len(b)), keepA: uint16(len(a)), hadBefore: c.HadBefore}
	*block = append(append(*block, b...), a...)
	cs.recs = append(cs.recs, r)
}

// arenaBlock is the size of a block of Changes.arena: it holds the two
// clipped values of any change.
const arenaBlock = 64 << 10

// name interns s, the field k of a change.
func (cs *Changes) name(k int, s string) uint32 {
	if cs.index == nil {
		cs.index = map[string]uint32{}
	}
	if i := cs.last[k]; int(i) < len(cs.names) && cs.names[i] == s {
		return i
	}
	i, ok := cs.index[s]
	if !ok {
		i = uint32(len(cs.names))
		cs.names = append(cs.names, s)
		cs.index[s] = i
	}
	cs.last[k] = i
	return i
}
