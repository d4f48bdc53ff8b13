package reconstruct

import (
	"encoding/binary"
	"hash/maphash"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// A fork chain replays every ancestor again for each of its rollouts: the
// n-th fork of a chain replays n segments, so a chain costs the square of
// its depth (issue 38: 200 deep cost 7.4 times 50 deep). PrefixMemo keeps
// the engine as it stood after the inherited prefix of a rollout, so that
// a rollout continuing it restores that state and replays only the
// segments past it: each rollout of a chain is then read once as a file
// and once as its child's prefix.
//
// A snapshot is taken only at the end of a file's inherited prefix (the
// cutoff its own children will most likely continue from) and is a deep
// copy: restoring it makes another copy, as the engine that goes on
// changes what it holds. Memory stays bounded: the memo keeps the most
// recently used snapshots up to a budget of bytes, and at least the
// newest. Kept snapshots are also live heap the collector scans: a large
// budget cost more CPU than it saved on a 200-deep chain.

// PrefixMemo holds replayed lineage prefixes for one run. It is safe for
// concurrent use. The zero value is not usable: see NewPrefixMemo.
type PrefixMemo struct {
	mu      sync.Mutex
	budget  int // bytes the memo may hold (engine.weight)
	held    int
	entries map[prefixKey]*memoEntry
	tick    uint64
}

type memoEntry struct {
	snap   *engine
	weight int
	used   uint64
	opts   string    // optionsKey
	segs   []Segment // the prefix
}

// DefaultPrefixMemoBytes is NewPrefixMemo's budget for 0. A chain read in
// order needs one snapshot at a time; the rest is for the order in which
// parallel jobs and siblings come.
const DefaultPrefixMemoBytes = 4 << 20

// NewPrefixMemo returns a memo that holds snapshots of about maxBytes in
// all (0: DefaultPrefixMemoBytes).
func NewPrefixMemo(maxBytes int) *PrefixMemo {
	if maxBytes <= 0 {
		maxBytes = DefaultPrefixMemoBytes
	}
	return &PrefixMemo{budget: maxBytes, entries: map[prefixKey]*memoEntry{}}
}

// prefixKey names a prefix: its number of segments and a hash of them
// and of the options; an entry keeps what it names to compare (a hash is
// not an identity).
type prefixKey struct {
	sum uint64
	n   int
}

// optionsKey is everything of the options the state after a prefix
// depends on.
func optionsKey(o Options, maxLine int64) string {
	return strings.Join([]string{strconv.FormatInt(o.HandoffCap, 10), strconv.FormatInt(o.MigrationLimit, 10),
		strconv.FormatInt(o.Now.UnixNano(), 10), strconv.FormatBool(o.ReplayGlued), strconv.FormatBool(o.HashItems),
		o.ResumeVersion, strconv.FormatInt(maxLine, 10)}, "\x00")
}

// prefixKeys are the keys of the prefixes of segs, keys[n] naming
// segs[:n], built in one pass. A segment's Via names the rollout that
// continues it, which differs between a rollout and its child: it only
// goes into the evidence of a broken cutoff, and a prefix with such
// evidence is not kept (see memoizable).
func prefixKeys(opts string, segs []Segment) []prefixKey {
	var h maphash.Hash
	h.SetSeed(memoSeed)
	h.WriteString(opts)
	keys := make([]prefixKey, len(segs)+1)
	keys[0] = prefixKey{h.Sum64(), 0}
	var num [16]byte
	for i, s := range segs {
		h.WriteString(s.Path)
		h.WriteByte(0)
		h.WriteString(s.RolloutID)
		h.WriteByte(0)
		binary.LittleEndian.PutUint64(num[:8], uint64(s.End))
		binary.LittleEndian.PutUint64(num[8:], uint64(s.EndOrdinal))
		h.Write(num[:])
		keys[i+1] = prefixKey{h.Sum64(), i + 1}
	}
	return keys
}

var memoSeed = maphash.MakeSeed()

// names reports whether the entry is the state after segs with options
// opts.
func (en *memoEntry) names(opts string, segs []Segment) bool {
	if en.opts != opts || len(en.segs) != len(segs) {
		return false
	}
	for i, s := range segs {
		if t := en.segs[i]; t.Path != s.Path || t.RolloutID != s.RolloutID || t.End != s.End || t.EndOrdinal != s.EndOrdinal {
			return false
		}
	}
	return true
}

// longest returns a copy of the engine state after the longest prefix of
// segs the memo holds, and how many segments that prefix has (0, nil:
// none).
func (m *PrefixMemo) longest(o Options, maxLine int64, segs []Segment) (int, *engine) {
	opts := optionsKey(o, maxLine)
	keys := prefixKeys(opts, segs)
	m.mu.Lock()
	defer m.mu.Unlock()
	for n := len(segs); n > 0; n-- {
		if en := m.entries[keys[n]]; en != nil && en.names(opts, segs[:n]) {
			m.tick++
			en.used = m.tick
			return n, en.snap.clone()
		}
	}
	return 0, nil
}

// store keeps a copy of e as the state after segs, evicting the least
// recently used snapshots beyond the budget. The newest is kept even when
// it alone is over the budget: memory then follows the largest thread
// (a snapshot is about the size of the state the replay holds anyway).
func (m *PrefixMemo) store(o Options, maxLine int64, segs []Segment, e *engine) {
	w := e.weight()
	opts := optionsKey(o, maxLine)
	key := prefixKeys(opts, segs)[len(segs)]
	m.mu.Lock()
	_, have := m.entries[key]
	m.mu.Unlock()
	if have {
		return
	}
	snap := e.clone() // outside the lock: the copy is the costly part
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, have := m.entries[key]; have {
		return
	}
	for m.held+w > m.budget && len(m.entries) > 0 {
		var oldest prefixKey
		var at uint64
		first := true
		for k, en := range m.entries {
			if first || en.used < at {
				oldest, at, first = k, en.used, false
			}
		}
		m.held -= m.entries[oldest].weight
		delete(m.entries, oldest)
	}
	m.tick++
	m.entries[key] = &memoEntry{snap: snap, weight: w, used: m.tick, opts: opts, segs: slices.Clone(segs)}
	m.held += w
}

// weight is about how many bytes a snapshot of e holds: the engine and its
// maps, its histories, turns and indexes, and the world state it shares
// with the engine it copies. Counting only what grows with the prefix held
// 37 MiB in a 4 MiB budget over a home of 50,000 rollouts: 1,267
// snapshots of small sessions, each with a parsed world state of some
// 20 KB.
func (e *engine) weight() int {
	w := int(unsafe.Sizeof(engine{})) + engineMaps + len(e.turns)*int(unsafe.Sizeof(turnState{})) + 16*len(e.pending) +
		int(unsafe.Sizeof(textSlot{}))*(len(e.calls.slots)+len(e.outputs.slots)+len(e.ids.slots)) +
		len(e.prevItem.raw) + e.st.WorldState.Footprint()
	for _, b := range e.missingIDs.blocks {
		w += len(b) * int(unsafe.Sizeof(missingID{}))
	}
	seen := map[*History]bool{}
	add := func(h *History) {
		if h == nil || seen[h] {
			return
		}
		seen[h] = true
		w += h.Len()*int(unsafe.Sizeof(histItem{})) + 8*len(h.marks)
		for _, b := range h.text {
			w += len(b)
		}
	}
	add(e.st.History)
	for _, t := range e.turns {
		add(t.cp.history)
	}
	return w
}

// engineMaps is about what the maps of a new engine hold (newEngine; 2.5
// MB over those 1,267 snapshots).
const engineMaps = 2048

// memoizable reports whether the engine's state after its segments can be
// kept: an envelope replay whose frame bookkeeping holds no stream, and
// whose cutoffs were all sound (their evidence names a Via).
func (e *engine) memoizable() bool {
	return !e.failClosed && e.frames.Idle() && len(e.pendingLineage) == 0
}

// clone is a deep copy of the replay state of e: nothing the copy changes
// is seen by e, and the other way round. Values the engine replaces rather
// than changes (world state, token info, settings, dynamic tools, id
// allocation, evidence) are shared. The copy reports to nobody (obs) and
// cannot read its file again (reread): restore gives it the engine's own.
func (e *engine) clone() *engine {
	c := new(engine)
	*c = *e
	c.obs, c.reread = nil, nil

	types := &typeTable{names: slices.Clone(e.types.names), index: maps.Clone(e.types.index), last: e.types.last}
	c.types = types
	hists := map[*History]*History{}
	cloneHist := func(h *History) *History {
		if h == nil {
			return nil
		}
		if x, ok := hists[h]; ok {
			return x
		}
		x := h.clone(types)
		hists[h] = x
		return x
	}
	c.st.History = cloneHist(e.st.History)
	c.st.Bridges = maps.Clone(e.st.Bridges)
	c.st.Segments = slices.Clip(e.st.Segments)
	c.st.Turns = slices.Clone(e.st.Turns)
	c.st.NextItemCheckpoints = slices.Clone(e.st.NextItemCheckpoints)
	c.st.LeftOut = slices.Clone(e.st.LeftOut)
	if e.st.Handoffs != nil {
		c.st.Handoffs = make(map[string]*Handoff, len(e.st.Handoffs))
		for k, h := range e.st.Handoffs {
			x := *h
			c.st.Handoffs[k] = &x
		}
	}

	turns := make(map[*turnState]*turnState, len(e.turns))
	c.turns = make([]*turnState, len(e.turns))
	for i, t := range e.turns {
		x := *t
		x.cp.history = cloneHist(t.cp.history)
		turns[t] = &x
		c.turns[i] = &x
	}
	remap := func(t *turnState) *turnState {
		if t == nil {
			return nil
		}
		if x, ok := turns[t]; ok {
			return x
		}
		x := *t
		x.cp.history = cloneHist(t.cp.history)
		turns[t] = &x
		return &x
	}
	c.turn = remap(e.turn)
	c.promptVerdicts = slices.Clone(e.promptVerdicts)
	for i := range c.promptVerdicts {
		c.promptVerdicts[i].turn = remap(c.promptVerdicts[i].turn)
	}

	c.pendingNoOrd = clonePtr(e.pendingNoOrd)
	c.lastOrd = clonePtr(e.lastOrd)
	c.lastTotal = clonePtr(e.lastTotal)
	c.st.Tokens = clonePtr(e.st.Tokens) // e may change its own in place (ownTokens)
	c.lastThread = clonePtr(e.lastThread)
	c.lastReadOrd = clonePtr(e.lastReadOrd)
	c.tail = clonePtr(e.tail)
	c.emptyCompaction = clonePtr(e.emptyCompaction)
	c.prevItem.raw = slices.Clone(e.prevItem.raw)
	c.compactedRollbacks = slices.Clone(e.compactedRollbacks)
	c.overLimit = slices.Clone(e.overLimit)
	c.orphanOutputs = slices.Clone(e.orphanOutputs)
	c.pendingLineage = slices.Clone(e.pendingLineage)
	c.missingIDs.blocks = make([][]missingID, len(e.missingIDs.blocks))
	for i, b := range e.missingIDs.blocks {
		c.missingIDs.blocks[i] = slices.Clone(b)
	}
	c.calls, c.outputs, c.ids = e.calls.clone(), e.outputs.clone(), e.ids.clone()
	c.pending = make(map[string][]int, len(e.pending))
	for k, v := range e.pending {
		c.pending[k] = slices.Clone(v)
	}
	c.hof.seen = maps.Clone(e.hof.seen)
	c.frames = e.frames.Clone()
	return c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	x := *p
	return &x
}

// restore makes e, fresh, the engine a snapshot's copy c is, keeping what
// is e's own: its options, observers and frame-event callback.
func (e *engine) restore(c *engine) {
	opts, obs, reread := e.opts, e.obs, e.reread
	*e = *c
	e.opts, e.obs, e.reread = opts, obs, reread
	e.frames.SetEmit(e.frameEvent)
}

func (x textIndex) clone() textIndex {
	x.slots = slices.Clone(x.slots)
	x.scratch = nil
	return x
}

// clone is a deep copy of h whose types are the table types (a copy of
// h's).
func (h *History) clone(types *typeTable) *History {
	x := *h
	x.types = types
	x.blocks = make([][]histItem, len(h.blocks))
	for i, b := range h.blocks {
		x.blocks[i] = slices.Clone(b) // the last one grows by append again
	}
	x.text = make([][]byte, len(h.text))
	for i, b := range h.text {
		x.text[i] = slices.Clone(b)
	}
	x.marks = slices.Clone(h.marks)
	x.wide = maps.Clone(h.wide)
	x.segs = slices.Clone(h.segs)
	return &x
}
