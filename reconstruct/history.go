package reconstruct

import (
	"hash/maphash"
	"iter"
	"math"
	"math/bits"

	"github.com/rollout-dev/rollout/rollout"
)

// History is the live model history. A million items is an ordinary
// session, so each is stored compactly: fixed-size fields in blocks that are
// never copied as the history grows, the id and call id bytes in an arena of
// text blocks (a locally formed id packed to its prefix and 16 bytes, see
// packID), the type as an index into a table of the engine's type names.
// At materializes an Item on demand.
//
// A History only grows by append until a rollback truncates it, so its
// first n items are the history of every checkpoint taken at length n (see
// checkpoint); a compaction starts a new History.
type History struct {
	blocks [][]histItem // full blocks of histBlock items, then the last one
	n      int
	text   [][]byte // the arena: id then call id of each item, in order
	types  *typeTable
	// marks holds each item's itemMark, two bits per item.
	marks []uint64
	// wide holds the line and index of the rare item whose values do not
	// fit histItem's 32 bits (lines past 4G, indexes past 2G).
	wide map[int]wideItem
	// segs are the runs of items of one Item.Segment, in order, where the
	// segment is not 0: items of a lineage's segments come in a few long
	// runs, so they cost nothing per item.
	segs []segRun
}

// segRun: the items from index from on, up to the next run, have Segment
// seg.
type segRun struct{ from, seg int }

// segment is item i's Item.Segment.
func (h *History) segment(i int) int {
	seg := 0
	for _, r := range h.segs {
		if r.from > i {
			break
		}
		seg = r.seg
	}
	return seg
}

// histItem is one item of a History (48 bytes: a history of a million
// items is a million of them).
type histItem struct {
	hash     uint64 // content hash, for items with an id
	offset   int64  // byte offset of the line holding it
	blk, at  uint32 // where its text starts in the arena
	idLen    uint32
	callLen  uint32
	line     uint32 // math.MaxUint32: see History.wide
	index    int32  // -1 for the line's payload; math.MinInt32: see History.wide
	typ      uint32
	answered bool
	packed   bool // the id is stored packed (packID)
	lazy     bool // hash not computed yet: see engine.contentHash
	dup      bool // a byte-for-byte copy of an earlier live item (item/duplicate)
}

// hashed reports whether the item's content hash is known or can be read
// back (items without an id or a call_id are not hashed).
func (x *histItem) hashed() bool { return x.lazy || x.hash != 0 }

// itemMark is what the engine noted of an item, one at a time: a user
// prompt (a message) or an orphan output (a tool output) cannot be both.
// History keeps two bits per item (History.marks), not a histItem field.
type itemMark uint8

const (
	markPrompt itemMark = iota + 1 // Item.prompt
	markOrphan                     // a tool output that answers no call before it
)

type wideItem struct{ line, index int }

const (
	histBlock = 4096    // items per block
	textBlock = 1 << 16 // bytes per arena block; longer texts get a block of their own
)

// typeTable interns item types: a history holds a handful of them.
type typeTable struct {
	names []string
	index map[string]uint32
	last  uint32 // the latest interned: items of one type come in runs
}

func newTypeTable() *typeTable { return &typeTable{index: map[string]uint32{}} }

func (t *typeTable) intern(name string) uint32 {
	if int(t.last) < len(t.names) && t.names[t.last] == name {
		return t.last
	}
	i, ok := t.index[name]
	if !ok {
		i = uint32(len(t.names))
		t.names = append(t.names, name)
		t.index[name] = i
	}
	t.last = i
	return i
}

// NewHistory returns a history holding items, in order (for tests and
// tools; the engine builds its own).
func NewHistory(items ...Item) *History {
	h := newHistory(newTypeTable())
	for _, it := range items {
		h.append(it)
	}
	return h
}

func newHistory(types *typeTable) *History { return &History{types: types} }

// Len is the number of items; a nil History is empty.
func (h *History) Len() int {
	if h == nil {
		return 0
	}
	return h.n
}

// At returns item i, 0 <= i < Len().
func (h *History) At(i int) Item {
	x := h.item(i)
	var buf [64]byte
	it := Item{ID: string(h.idText(buf[:0], x)), Type: h.types.names[x.typ], CallID: string(h.callID(x)),
		Line: int(x.line), Offset: x.offset, Index: int(x.index), answered: x.answered, prompt: h.mark(i) == markPrompt, hash: x.hash, lazy: x.lazy,
		Segment: h.segment(i)}
	if x.line == math.MaxUint32 || x.index == math.MinInt32 {
		w := h.wide[i]
		it.Line, it.Index = w.line, w.index
	}
	return it
}

// All yields the items in order.
func (h *History) All() iter.Seq[Item] {
	return func(yield func(Item) bool) {
		for i := range h.Len() {
			if !yield(h.At(i)) {
				return
			}
		}
	}
}

func (h *History) item(i int) *histItem {
	if i < 0 || i >= h.n {
		panic("reconstruct: history index out of range")
	}
	return &h.blocks[i/histBlock][i%histBlock]
}

func (h *History) id(x *histItem) []byte {
	return h.text[x.blk][x.at : x.at+x.idLen]
}

// idText appends the id of x, unpacked, to dst.
func (h *History) idText(dst []byte, x *histItem) []byte {
	if x.packed {
		return unpackID(dst, h.id(x))
	}
	return append(dst, h.id(x)...)
}

func (h *History) callID(x *histItem) []byte {
	s := x.at + x.idLen
	return h.text[x.blk][s : s+x.callLen]
}

func (h *History) typeName(x *histItem) string { return h.types.names[x.typ] }

// pos is where an item was read.
func (h *History) pos(i int) Pos {
	x := h.item(i)
	if x.line == math.MaxUint32 || x.index == math.MinInt32 {
		return Pos{Line: h.wide[i].line, Offset: x.offset, Segment: h.segment(i)}
	}
	return Pos{Line: int(x.line), Offset: x.offset, Segment: h.segment(i)}
}

// index is At(i).Index without building the item.
func (h *History) index(i int) int {
	x := h.item(i)
	if x.line == math.MaxUint32 || x.index == math.MinInt32 {
		return h.wide[i].index
	}
	return int(x.index)
}

// mark is item i's itemMark.
func (h *History) mark(i int) itemMark {
	k := 2 * i
	if k/64 >= len(h.marks) {
		return 0
	}
	return itemMark(h.marks[k/64] >> (k % 64) & 3)
}

// setMark sets item i's itemMark (i <= Len()).
func (h *History) setMark(i int, m itemMark) {
	k := 2 * i
	for k/64 >= len(h.marks) {
		if m == 0 {
			return
		}
		h.marks = append(h.marks, 0)
	}
	h.marks[k/64] = h.marks[k/64]&^(3<<(k%64)) | uint64(m)<<(k%64)
}

// append adds an item at the end.
func (h *History) append(it Item) {
	x := histItem{hash: it.hash, lazy: it.lazy, offset: it.Offset, typ: h.types.intern(it.Type), answered: it.answered,
		line: uint32(it.Line), index: int32(it.Index)}
	if it.prompt {
		h.setMark(h.n, markPrompt)
	} else {
		h.setMark(h.n, 0)
	}
	if it.Line < 0 || it.Line >= math.MaxUint32 || it.Index <= math.MinInt32 || it.Index > math.MaxInt32 {
		x.line, x.index = math.MaxUint32, math.MinInt32
		if h.wide == nil {
			h.wide = map[int]wideItem{}
		}
		h.wide[h.n] = wideItem{it.Line, it.Index}
	}
	if last := len(h.segs) - 1; (last < 0 && it.Segment != 0) || (last >= 0 && h.segs[last].seg != it.Segment) {
		h.segs = append(h.segs, segRun{h.n, it.Segment})
	}
	x.blk = h.reserve(len(it.ID) + len(it.CallID))
	b := h.text[x.blk]
	x.at = uint32(len(b))
	b, x.packed = packID(b, it.ID)
	x.idLen = uint32(len(b)) - x.at
	b = append(b, it.CallID...)
	x.callLen = uint32(len(it.CallID))
	h.text[x.blk] = b

	// Blocks after the first are allocated whole; the first grows, so that
	// a short history stays small.
	k := len(h.blocks)
	if k == 0 || len(h.blocks[k-1]) == histBlock {
		c := 16
		if k > 0 {
			c = histBlock
		}
		h.blocks = append(h.blocks, make([]histItem, 0, c))
		k++
	}
	h.blocks[k-1] = append(h.blocks[k-1], x)
	h.n++
}

// reserve returns the arena block where n more bytes of text go: the last
// one while it stays within textBlock (the first grows by append up to it),
// else a new one. Items refer to their text by block and offset, so a block
// may move as it grows.
func (h *History) reserve(n int) uint32 {
	k := len(h.text)
	if k > 0 && (n == 0 || len(h.text[k-1])+n <= max(textBlock, cap(h.text[k-1]))) {
		return uint32(k - 1)
	}
	c := max(n, textBlock)
	if k == 0 {
		c = n
	}
	h.text = append(h.text, make([]byte, 0, c))
	return uint32(k)
}

// truncate drops the items from n on, and their text.
func (h *History) truncate(n int) {
	if n >= h.n {
		return
	}
	h.n = n
	for len(h.segs) > 0 && h.segs[len(h.segs)-1].from >= n {
		h.segs = h.segs[:len(h.segs)-1]
	}
	for i := range h.wide {
		if i >= n {
			delete(h.wide, i)
		}
	}
	keep := (n + histBlock - 1) / histBlock
	clear(h.blocks[keep:])
	h.blocks = h.blocks[:keep]
	if keep > 0 {
		h.blocks[keep-1] = h.blocks[keep-1][:n-(keep-1)*histBlock]
	}
	if n == 0 {
		clear(h.text)
		h.text = h.text[:0]
		return
	}
	x := h.item(n - 1)
	clear(h.text[x.blk+1:])
	h.text = h.text[:x.blk+1]
	h.text[x.blk] = h.text[x.blk][:x.at+x.idLen+x.callLen]
}

// textIndex maps the id (or the call id) of history items to an item's
// index: open addressing over the history's own text, 8 bytes a slot,
// where a map[string]int would hold a string header and an int per entry.
// Ids are compared and hashed as stored (packed or not, see packID). Each
// slot keeps 32 bits of its key's hash: a probe compares keys only when
// the hashes agree, and growing never reads a key again (a key re-derived
// per probe and per rehash was a quarter of verify's CPU on small
// records, issue 38).
type textIndex struct {
	slots   []textSlot
	shift   uint // 32 - log2(len(slots)): a hash's top bits pick its slot
	n       int
	call    bool   // keyed by call id, not item id
	scratch []byte // a packed key
}

type textSlot struct {
	item uint32 // item index + 1; 0 is empty
	hash uint32 // keyHash of the item's key
}

// keyHash is the hash a textIndex keeps of a stored key.
func keyHash(key []byte) uint32 { return uint32(maphash.Bytes(hashSeed, key)) }

// key is the stored key of item i and whether it is packed.
func (x *textIndex) key(h *History, i int) ([]byte, bool) {
	it := h.item(i)
	if x.call {
		return h.callID(it), false
	}
	return h.id(it), it.packed
}

// get returns the index stored for key.
func (x *textIndex) get(h *History, key string) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	if x.call {
		x.scratch = append(x.scratch[:0], key...)
		return x.find(h, x.scratch, false, keyHash(x.scratch))
	}
	var packed bool
	x.scratch, packed = packID(x.scratch[:0], key)
	return x.find(h, x.scratch, packed, keyHash(x.scratch))
}

// getItem returns the index stored for the key of item i.
func (x *textIndex) getItem(h *History, i int) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	k, packed := x.key(h, i)
	return x.find(h, k, packed, keyHash(k))
}

// getItemHash is getItem for a key whose keyHash is kh.
func (x *textIndex) getItemHash(h *History, i int, kh uint32) (int, bool) {
	if x.n == 0 {
		return 0, false
	}
	k, packed := x.key(h, i)
	return x.find(h, k, packed, kh)
}

func (x *textIndex) find(h *History, key []byte, packed bool, kh uint32) (int, bool) {
	mask := uint32(len(x.slots) - 1)
	for s := kh >> x.shift; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v.item == 0 {
			return 0, false
		}
		if v.hash != kh {
			continue
		}
		if k, p := x.key(h, int(v.item-1)); p == packed && string(k) == string(key) {
			return int(v.item - 1), true
		}
	}
}

// put stores i for the key of item i, replacing what the key held.
func (x *textIndex) put(h *History, i int) {
	k, _ := x.key(h, i)
	x.putHash(h, i, keyHash(k))
}

// putHash is put for a key whose keyHash is kh.
func (x *textIndex) putHash(h *History, i int, kh uint32) {
	x.slots[x.slot(h, i, kh)] = textSlot{uint32(i + 1), kh}
}

// add stores i for the key of item i unless the key holds an index; it
// returns the index the key holds then.
func (x *textIndex) add(h *History, i int) (int, bool) {
	k, _ := x.key(h, i)
	return x.addHash(h, i, keyHash(k))
}

// addHash is add for a key whose keyHash is kh.
func (x *textIndex) addHash(h *History, i int, kh uint32) (int, bool) {
	s := x.slot(h, i, kh)
	if v := x.slots[s]; v.item != 0 {
		return int(v.item - 1), true
	}
	x.slots[s] = textSlot{uint32(i + 1), kh}
	return i, false
}

// slot is the slot of the key of item i (its keyHash kh): the one holding
// the key, else the empty one where it goes (counted as used).
func (x *textIndex) slot(h *History, i int, kh uint32) uint32 {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow()
	}
	key, packed := x.key(h, i)
	mask := uint32(len(x.slots) - 1)
	for s := kh >> x.shift; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v.item == 0 {
			x.n++
			return s
		}
		if v.hash != kh {
			continue
		}
		if k, p := x.key(h, int(v.item-1)); p == packed && string(k) == string(key) {
			return s
		}
	}
}

// grow doubles the table, placing each slot by the hash it keeps.
func (x *textIndex) grow() {
	old := x.slots
	n := max(64, 2*len(old))
	x.slots = make([]textSlot, n)
	x.shift = uint(32 - bits.TrailingZeros(uint(n)))
	mask := uint32(n - 1)
	for _, v := range old {
		if v.item == 0 {
			continue
		}
		s := v.hash >> x.shift
		for x.slots[s].item != 0 {
			s = (s + 1) & mask
		}
		x.slots[s] = v
	}
}

func (x *textIndex) reset() {
	x.slots, x.n, x.shift = nil, 0, 0
}

// packID appends id to dst as a History stores it. A locally formed id,
// <prefix>_<lowercase hyphenated UUID> (40 bytes for "msg_..."), becomes
// its prefix and the UUID's 16 bytes (19 bytes), packed true; any other id
// is appended as it is. unpackID restores the text exactly.
func packID(dst []byte, id string) ([]byte, bool) {
	p, rest, ok := rollout.SplitID(id)
	if !ok || !uuidShape(rest, true) {
		return append(dst, id...), false
	}
	dst = append(dst, p...)
	for i := 0; i < len(rest); i += 2 {
		if rest[i] == '-' {
			i++
		}
		dst = append(dst, unhex(rest[i])<<4|unhex(rest[i+1]))
	}
	return dst, true
}

// unpackID appends the id packed in b to dst.
func unpackID(dst, b []byte) []byte {
	const digits = "0123456789abcdef"
	p, u := b[:len(b)-16], b[len(b)-16:]
	dst = append(append(dst, p...), '_')
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

// isToolCall and isToolOutput classify item i by its type.
func (h *History) isToolCall(x *histItem) bool   { return rollout.IsToolCall(h.typeName(x)) }
func (h *History) isToolOutput(x *histItem) bool { return rollout.IsToolOutput(h.typeName(x)) }
