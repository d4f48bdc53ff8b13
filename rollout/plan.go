package rollout

import (
	"errors"
	"slices"
	"sort"
)

// The plan Rewrite applies: what checks/ asks of each line, kept in line
// order and shared between lines, so that a plan of many identical fixes
// stays small.

// EditKind says what an Edit does.
type EditKind uint8

const (
	// EditSet sets member Key of the object at Path: an existing value is
	// replaced, a missing member is inserted as the object's first member.
	EditSet EditKind = iota + 1
	// EditFill gives each element of the array at Path whose bytes equal
	// the target of an earlier EditSet with Remember that edit's value of
	// Key: a copy of an item gets the id the item got.
	EditFill
	// EditDrop moves the object (Match set) or the whole line to quarantine.
	EditDrop
	// EditSplit writes each object of a concatenated line on its own line.
	EditSplit
	// EditLF ends the line with "\n" instead of "\r\n".
	EditLF
	// EditMoveFront writes the object (the first one Match accepts) first.
	EditMoveFront
	// EditInsertAfter writes the object returned by Value on a new line
	// after this line.
	EditInsertAfter
	// EditSplice replaces the byte range of the object that Splice returns
	// (for fixes whose bytes checks/ computes itself).
	EditSplice
	// EditCut moves the torn bytes of a glued line (ShapeGlued) to
	// quarantine; the records after them stay, in place.
	EditCut
)

// ErrSkipEdit, wrapped in the error of a Value function, skips the edit
// for that object instead of failing the rewrite.
var ErrSkipEdit = errors.New("edit skipped")

// Edit is one change to one line. The writer applies it to each object of
// the line that Match accepts (every object when Match is nil).
type Edit struct {
	Kind  EditKind
	Label string // reported back with every change (repair passes the rule id)
	Match func(obj []byte) bool
	Path  []string // EditSet, EditFill: member names, or element indexes inside arrays
	Key   string   // EditSet, EditFill
	// When decides whether EditSet applies, given the current value of Key
	// (exists is false when the member is absent). nil: always.
	When func(old []byte, exists bool) bool
	// Value returns the new raw JSON value (EditSet) or the new line's
	// object (EditInsertAfter).
	Value func(c *EditContext) ([]byte, error)
	// Splice returns, for EditSplice, the range of the object to replace
	// and its replacement.
	Splice func(obj []byte) (start, end int, repl []byte, err error)
	// Remember records the value set for the target's original bytes;
	// Recall takes the value recorded for identical bytes, when there is one,
	// instead of calling Value. EditFill always recalls.
	Remember, Recall bool
}

// EditContext is what a Value function may look at.
type EditContext struct {
	Line   int    // input line
	Part   int    // index of the object within the line (0 unless concatenated)
	Object []byte // the object, original bytes
	Target []byte // EditSet: the object at Path, original bytes
}

// Sequence numbers every object written, in output order: member Key is set
// to 0, 1, 2, ... (only the digits change; a missing member is inserted
// after member After, or first).
type Sequence struct {
	Key   string
	After string
	Label func(line int) string // label of a change on a line
	// From is the first input line numbered (0: all). Objects before it
	// keep their member as it is but are counted, so numbering goes on
	// from their position: a renumbering touches as few lines as it can.
	From int
	// Start is the first value when no earlier line carries one: a
	// paginated fork numbers from its history_base, not 0.
	Start int64
}

// Plan is every edit of one rewrite. The edits of lines are kept in line
// order as a line number and a reference to an edit each, not one Edit
// per line: edits that differ only in their line (a plan of 100,000 id
// fixes) share one Edit (Define, AddShared), and the rewrite reads the
// references front to back as it streams the file.
type Plan struct {
	lines    []int    // lines[i] is the 1-based input line of edit kinds[refs[i]]
	refs     []uint32 // in line order once sorted; in the order added within a line
	kinds    []Edit   // the distinct edits
	unsorted bool     // an edit was added for a line before the last one
	Every    []Edit   // edits tried on every line (Match picks the objects)
	Sequence *Sequence
	buf      []Edit // Lines: the edits of the line yielded
}

// EditRef names an edit of a Plan made by Define.
type EditRef uint32

// Define keeps e once, for AddShared.
func (p *Plan) Define(e Edit) EditRef {
	p.kinds = append(p.kinds, e)
	return EditRef(len(p.kinds) - 1)
}

// LinesOf returns, in a new slice, the lines ref is planned for.
func (p *Plan) LinesOf(ref EditRef) []int {
	var out []int
	for i, r := range p.refs {
		if r == uint32(ref) {
			out = append(out, p.lines[i])
		}
	}
	return out
}

// Add appends an edit to a line.
func (p *Plan) Add(line int, e Edit) { p.AddShared(line, p.Define(e)) }

// AddShared appends the edit ref (from Define) to a line.
func (p *Plan) AddShared(line int, ref EditRef) {
	if n := len(p.lines); n > 0 && line < p.lines[n-1] {
		p.unsorted = true
	}
	p.lines = append(p.lines, line)
	p.refs = append(p.refs, uint32(ref))
}

// recalls reports whether an edit reads remembered values (EditFill or
// Recall): without one, nothing needs remembering.
func (p *Plan) recalls() bool {
	for _, es := range [][]Edit{p.kinds, p.Every} {
		for _, e := range es {
			if e.Recall || e.Kind == EditFill {
				return true
			}
		}
	}
	return false
}

// Grow makes room for n more line edits.
func (p *Plan) Grow(n int) {
	p.lines, p.refs = slices.Grow(p.lines, n), slices.Grow(p.refs, n)
}

// Len is the number of line edits (the Every edits and the Sequence aside).
func (p *Plan) Len() int { return len(p.refs) }

// Empty reports whether the plan changes nothing.
func (p *Plan) Empty() bool {
	return p == nil || (len(p.refs) == 0 && len(p.Every) == 0 && p.Sequence == nil)
}

// Lines calls yield with each line that has edits and its edits, in line
// order, until yield returns false. The edits are valid during the call
// only and must not be modified.
func (p *Plan) Lines(yield func(line int, edits []Edit) bool) {
	p.sort()
	for i := 0; i < len(p.lines); {
		j := p.end(i)
		p.buf = p.appendEdits(p.buf[:0], i, j)
		if !yield(p.lines[i], p.buf) {
			return
		}
		i = j
	}
}

// At returns the edits of one line (nil: none), in a new slice.
func (p *Plan) At(line int) []Edit {
	p.sort()
	i := sort.SearchInts(p.lines, line)
	if i == len(p.lines) || p.lines[i] != line {
		return nil
	}
	return p.appendEdits(nil, i, p.end(i))
}

// appendEdits appends the edits of refs[i:j] to dst.
func (p *Plan) appendEdits(dst []Edit, i, j int) []Edit {
	for _, r := range p.refs[i:j] {
		dst = append(dst, p.kinds[r])
	}
	return dst
}

// end is the end of the run of edits of line p.lines[i].
func (p *Plan) end(i int) int {
	j := i + 1
	for j < len(p.lines) && p.lines[j] == p.lines[i] {
		j++
	}
	return j
}

// sort puts the edits in line order, keeping the order they were added
// in within a line (the rewrite applies them in that order).
func (p *Plan) sort() {
	if p.unsorted {
		sort.Stable(planByLine{p})
		p.unsorted = false
	}
}

type planByLine struct{ p *Plan }

func (s planByLine) Len() int           { return len(s.p.lines) }
func (s planByLine) Less(i, j int) bool { return s.p.lines[i] < s.p.lines[j] }
func (s planByLine) Swap(i, j int) {
	s.p.lines[i], s.p.lines[j] = s.p.lines[j], s.p.lines[i]
	s.p.refs[i], s.p.refs[j] = s.p.refs[j], s.p.refs[i]
}
