package stateview

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/mergepatch"
	"github.com/rollout-dev/rollout/reconstruct"
)

// Change is one difference between two states: a path into the state and
// both values.
type Change struct {
	Path   string `json:"path"`
	Change string `json:"change"` // changed | removed | added
	A      any    `json:"a"`      // null when added (and for an item's content)
	B      any    `json:"b"`      // null when removed (and for an item's content)
	// LineA and LineB are the lines of the turn, item or handoff the
	// change is in (0: not in one, or absent on that side).
	LineA int `json:"line_a,omitempty"`
	LineB int `json:"line_b,omitempty"`
}

// The kinds of Change.
const (
	Changed = "changed"
	Removed = "removed" // only in A
	Added   = "added"   // only in B
)

// compared is what Compare compares: a View without the file's line count,
// with the JSON values decoded so that key order does not count.
type compared struct {
	ThreadID    string            `json:"thread_id"`
	Era         string            `json:"era"`
	HistoryMode string            `json:"history_mode"`
	CLIVersion  string            `json:"cli_version"`
	Turns       []Turn            `json:"turns"`
	History     []Item            `json:"history"`
	WorldState  any               `json:"world_state"`
	Lineage     Lineage           `json:"lineage"`
	Tokens      *Tokens           `json:"token_usage"`
	Settings    *comparedSettings `json:"settings"`
	Handoffs    []comparedHandoff `json:"handoffs"`
	// The names and specs, not where they were read: a reclaim may move
	// the record that sets them.
	DynamicTools *comparedDynamicTools `json:"dynamic_tools"`
	Input        []any                 `json:"input"`
}

type comparedDynamicTools struct {
	Names []string `json:"names"`
	Tools any      `json:"tools"`
}

type comparedSettings struct {
	Source               string `json:"source"`
	Line                 int    `json:"line"`
	PreviousTurnSettings any    `json:"previous_turn_settings"`
	MultiAgentVersion    any    `json:"multi_agent_version"`
	LastStartedTurnID    any    `json:"last_started_turn_id"`
}

type comparedHandoff struct {
	ID     string `json:"id"`
	Line   int    `json:"line"`
	Record any    `json:"record"`
}

func comparable(v View) compared {
	c := compared{ThreadID: v.ThreadID, Era: v.Era, HistoryMode: v.HistoryMode, CLIVersion: v.CLIVersion,
		Turns: slices.Clone(v.Turns), History: slices.Clone(v.History), WorldState: decodeJSON(v.WorldState), Lineage: v.Lineage, Tokens: v.Tokens,
		Handoffs: []comparedHandoff{}}
	// Which file a turn or item is read from is a fact of the files, like
	// their line counts: a fork and its parent share the inherited part.
	for i := range c.Turns {
		c.Turns[i].Rollout = ""
	}
	for i := range c.History {
		c.History[i].Rollout = ""
	}
	for _, raw := range v.Input {
		c.Input = append(c.Input, decodeJSON(raw))
	}
	for _, h := range v.Handoffs {
		c.Handoffs = append(c.Handoffs, comparedHandoff{h.ID, h.Line, decodeJSON(h.Record)})
	}
	if d := v.DynamicTools; d != nil {
		c.DynamicTools = &comparedDynamicTools{d.Names, decodeJSON(d.Tools)}
	}
	if x := v.Settings; x != nil {
		c.Settings = &comparedSettings{x.Source, x.Line, decodeJSON(x.PreviousTurnSettings), decodeJSON(x.MultiAgentVersion), decodeJSON(x.LastStartedTurnID)}
	}
	return c
}

// decodeJSON decodes a JSON value keeping numbers as written.
func decodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

// Compare lists every difference between two views, leaf by leaf, in the
// order of the view's fields (never nil: [] when they are the same). The
// number of lines read is not compared: it is a fact of the file.
func Compare(a, b View) []Change {
	ca, cb := comparable(a), comparable(b)
	return walkChanges(reflect.ValueOf(&ca).Elem(), reflect.ValueOf(&cb).Elem(), walkOptions{})
}

// CommonPrefix is how many history items, from the first, are the same in
// both views (id, type, call id, line and index): where they diverge.
func CommonPrefix(a, b View) int {
	n := 0
	for n < len(a.History) && n < len(b.History) && sameItem(a.History[n], b.History[n]) {
		n++
	}
	return n
}

func sameItem(x, y Item) bool {
	return x.ID == y.ID && x.Type == y.Type && x.CallID == y.CallID && x.Line == y.Line && x.content == y.content && x.Synthesized == y.Synthesized &&
		(x.Index == nil) == (y.Index == nil) && (x.Index == nil || *x.Index == *y.Index)
}

// Prove compares what resume rebuilds from two replays made with
// ReplayOptions.HashItems (reclaim's proof: [] means identical). It is
// Compare of the two hashed views; when they are the same, the rest of the
// engine's state, which no view shows (lines read, unknown record types,
// each handoff's earlier records, ...), must be the same too, and a
// difference there is reported by the engine's field names. Byte offsets
// are left out: they move when bytes before them are removed.
func Prove(a, b *reconstruct.State) []Change {
	if c := Compare(OfHashed(a), OfHashed(b)); len(c) > 0 {
		return c
	}
	return walkChanges(reflect.ValueOf(a), reflect.ValueOf(b), walkOptions{
		transform: map[reflect.Type]func(reflect.Value) reflect.Value{
			reflect.TypeFor[*reconstruct.History](): func(v reflect.Value) reflect.Value {
				var items []reconstruct.Item
				if h := v.Interface().(*reconstruct.History); h != nil {
					items = slices.Collect(h.All())
				}
				return reflect.ValueOf(items)
			}},
		ignore: map[reflect.Type][]string{
			reflect.TypeFor[reconstruct.Item]():    {"Offset"},
			reflect.TypeFor[reconstruct.Handoff](): {"Offset"}},
		equal: map[reflect.Type]func(x, y reflect.Value) bool{
			reflect.TypeFor[*mergepatch.Value](): func(x, y reflect.Value) bool {
				vx, vy := x.Interface().(*mergepatch.Value), y.Interface().(*mergepatch.Value)
				if vx == nil || vy == nil {
					return vx == vy
				}
				return bytes.Equal(vx.AppendJSON(nil), vy.AppendJSON(nil))
			}},
	})
}

// walkOptions adjust the walk for some types: a transform compares what
// it returns instead, ignore skips struct fields, equal compares values
// whole (a leaf).
type walkOptions struct {
	transform map[reflect.Type]func(reflect.Value) reflect.Value
	ignore    map[reflect.Type][]string
	equal     map[reflect.Type]func(x, y reflect.Value) bool
}

// step is one step of a path into the compared values: a struct field, a
// slice index (-1 on the side without the element), a map key, or a step
// the path does not spell (a pointer, an interface's value, a transform).
// vx and vy are the values there (invalid on a side without one).
type step struct {
	field  string
	index  bool
	ix, iy int
	key    reflect.Value
	typ    reflect.Type
	vx, vy reflect.Value
}

// walker compares two values leaf by leaf, as go-cmp did for this
// package (it is ours so that every start does not pay go-cmp's init):
// structs field by field, maps by sorted key, pointers and interfaces by
// what they hold, nil and empty slices and maps as different. It counts
// the leaves that are equal and those that differ, and with report set
// calls it for each that differs.
type walker struct {
	opts       walkOptions
	path       []step
	same, diff int
	report     func(path []step)
}

// walkChanges lists the differences of x and y (of one type) as Changes.
func walkChanges(x, y reflect.Value, opts walkOptions) []Change {
	root := x.Type()
	changes := []Change{}
	w := &walker{opts: opts, report: func(path []step) {
		last := path[len(path)-1]
		c := Change{Path: pathString(root, path), Change: Changed}
		switch {
		case !last.vx.IsValid():
			c.Change, c.B = Added, value(last.vy)
		case !last.vy.IsValid():
			c.Change, c.A = Removed, value(last.vx)
		default:
			c.A, c.B = value(last.vx), value(last.vy)
		}
		if last.field != "" && !token.IsExported(last.field) {
			// An item's content hash (seeded per process) or the engine's
			// internal bookkeeping: the path says what differs.
			c.A, c.B = nil, nil
		}
		c.LineA, c.LineB = elementLines(path)
		changes = append(changes, c)
	}}
	w.compare(step{typ: root, vx: x, vy: y})
	return changes
}

// leaf counts a leaf at the current path, reporting it when it differs.
func (w *walker) leaf(equal bool) {
	if equal {
		w.same++
		return
	}
	w.diff++
	if w.report != nil {
		w.report(w.path)
	}
}

// compare walks the values of s (both valid, of type s.typ) at the path
// plus s.
func (w *walker) compare(s step) {
	w.path = append(w.path, s)
	defer func() { w.path = w.path[:len(w.path)-1] }()
	t, x, y := s.typ, s.vx, s.vy
	if eq := w.opts.equal[t]; eq != nil && x.CanInterface() {
		w.leaf(eq(x, y))
		return
	}
	if tr := w.opts.transform[t]; tr != nil && x.CanInterface() {
		tx, ty := tr(x), tr(y)
		w.compare(step{typ: tx.Type(), vx: tx, vy: ty})
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		w.leaf(x.Bool() == y.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		w.leaf(x.Int() == y.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		w.leaf(x.Uint() == y.Uint())
	case reflect.Float32, reflect.Float64:
		w.leaf(x.Float() == y.Float())
	case reflect.Complex64, reflect.Complex128:
		w.leaf(x.Complex() == y.Complex())
	case reflect.String:
		w.leaf(x.String() == y.String())
	case reflect.Pointer:
		if x.IsNil() || y.IsNil() {
			w.leaf(x.IsNil() && y.IsNil())
			return
		}
		w.compare(step{typ: t.Elem(), vx: x.Elem(), vy: y.Elem()})
	case reflect.Interface:
		if x.IsNil() || y.IsNil() {
			w.leaf(x.IsNil() && y.IsNil())
			return
		}
		if x.Elem().Type() != y.Elem().Type() {
			w.leaf(false)
			return
		}
		w.compare(step{typ: x.Elem().Type(), vx: x.Elem(), vy: y.Elem()})
	case reflect.Struct:
		ignored := w.opts.ignore[t]
		for i := range t.NumField() {
			f := t.Field(i)
			if slices.Contains(ignored, f.Name) {
				continue
			}
			w.compare(step{field: f.Name, typ: f.Type, vx: x.Field(i), vy: y.Field(i)})
		}
	case reflect.Slice:
		if x.IsNil() || y.IsNil() {
			w.leaf(x.IsNil() && y.IsNil())
			return
		}
		w.compareList(t.Elem(), x, y)
	case reflect.Array:
		w.compareList(t.Elem(), x, y)
	case reflect.Map:
		if x.IsNil() || y.IsNil() {
			w.leaf(x.IsNil() && y.IsNil())
			return
		}
		for _, k := range sortedKeys(x, y) {
			ex, ey := x.MapIndex(k), y.MapIndex(k)
			if !ex.IsValid() || !ey.IsValid() {
				w.path = append(w.path, step{key: k, typ: t.Elem(), vx: ex, vy: ey})
				w.leaf(false)
				w.path = w.path[:len(w.path)-1]
				continue
			}
			w.compare(step{key: k, typ: t.Elem(), vx: ex, vy: ey})
		}
	case reflect.Func:
		w.leaf(x.IsNil() && y.IsNil())
	default: // channels, unsafe pointers
		w.leaf(x.Pointer() == y.Pointer())
	}
}

// compareList aligns two lists as an edit script: the longest run of
// equal elements in order (after the equal ones at the start and at the
// end) stays; between two of those, elements are paired in order while
// they are similar (no more differing leaves than equal ones plus one, as
// go-cmp says it) and compared leaf by leaf, and the others are removed
// from x or added from y. Unlike go-cmp's edit script, which starts its
// search from either end at random, the alignment is the same on every
// run. Past maxAlignCells, the middle is paired by index instead.
func (w *walker) compareList(elem reflect.Type, x, y reflect.Value) {
	nx, ny := x.Len(), y.Len()
	dry := func(i, j int) *walker {
		d := &walker{opts: w.opts}
		d.compare(step{index: true, ix: i, iy: j, typ: elem, vx: x.Index(i), vy: y.Index(j)})
		return d
	}
	count := func(d *walker) { w.same, w.diff = w.same+d.same, w.diff+d.diff }
	pre := 0
	for pre < min(nx, ny) {
		d := dry(pre, pre)
		if d.diff > 0 {
			break
		}
		count(d)
		pre++
	}
	suf := 0
	for suf < min(nx, ny)-pre {
		d := dry(nx-1-suf, ny-1-suf)
		if d.diff > 0 {
			break
		}
		count(d)
		suf++
	}
	unique := func(i int, v reflect.Value, inX bool) {
		s := step{index: true, ix: i, iy: -1, typ: elem, vx: v}
		if !inX {
			s.ix, s.iy, s.vx, s.vy = -1, i, reflect.Value{}, v
		}
		w.path = append(w.path, s)
		w.leaf(false)
		w.path = w.path[:len(w.path)-1]
	}
	// gap reports x[i:ei] against y[j:ej], none of them equal.
	gap := func(i, ei, j, ej int) {
		for i < ei && j < ej {
			switch d := dry(i, j); {
			case d.same+1 >= d.diff:
				w.compare(step{index: true, ix: i, iy: j, typ: elem, vx: x.Index(i), vy: y.Index(j)})
				i, j = i+1, j+1
			case ei-i >= ej-j:
				unique(i, x.Index(i), true)
				i++
			default:
				unique(j, y.Index(j), false)
				j++
			}
		}
		for ; i < ei; i++ {
			unique(i, x.Index(i), true)
		}
		for ; j < ej; j++ {
			unique(j, y.Index(j), false)
		}
	}
	mx, my := nx-suf-pre, ny-suf-pre
	if mx == 0 || my == 0 || mx*my > maxAlignCells {
		gap(pre, nx-suf, pre, ny-suf)
		return
	}
	// lcs[i][j]: the longest run of equal elements in x[pre+i:] and
	// y[pre+j:] (the middle only).
	equal := make([]bool, mx*my)
	lcs := make([]int32, (mx+1)*(my+1))
	at := func(i, j int) *int32 { return &lcs[i*(my+1)+j] }
	for i := mx - 1; i >= 0; i-- {
		for j := my - 1; j >= 0; j-- {
			if equal[i*my+j] = dry(pre+i, pre+j).diff == 0; equal[i*my+j] {
				*at(i, j) = 1 + *at(i+1, j+1)
			} else {
				*at(i, j) = max(*at(i+1, j), *at(i, j+1))
			}
		}
	}
	gi, gj := 0, 0 // where the current gap starts
	for i, j := 0, 0; i < mx && j < my; {
		switch {
		case equal[i*my+j] && *at(i, j) == 1+*at(i+1, j+1):
			gap(pre+gi, pre+i, pre+gj, pre+j)
			count(dry(pre+i, pre+j))
			i, j = i+1, j+1
			gi, gj = i, j
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
	gap(pre+gi, nx-suf, pre+gj, ny-suf)
}

// maxAlignCells bounds the work of aligning the middle of two lists: one
// comparison of two elements per cell.
const maxAlignCells = 1 << 18

// sortedKeys are the keys of both maps, each once, in order.
func sortedKeys(x, y reflect.Value) []reflect.Value {
	keys := x.MapKeys()
	for _, k := range y.MapKeys() {
		if !x.MapIndex(k).IsValid() {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b reflect.Value) int {
		switch a.Kind() {
		case reflect.String:
			return strings.Compare(a.String(), b.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return cmp.Compare(a.Int(), b.Int())
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			return cmp.Compare(a.Uint(), b.Uint())
		}
		return strings.Compare(keyString(a), keyString(b))
	})
	return keys
}

func keyString(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	if k.CanInterface() {
		return fmt.Sprint(k.Interface())
	}
	return k.String()
}

func value(v reflect.Value) any {
	if !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// elementLines are the lines of the list element (turn, item, handoff) a
// path goes through, on each side.
func elementLines(p []step) (a, b int) {
	for _, s := range p {
		if s.index {
			return lineOf(s.vx), lineOf(s.vy)
		}
	}
	return 0, 0
}

func lineOf(v reflect.Value) int {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return 0
	}
	if f := v.FieldByName("Line"); f.IsValid() && f.Kind() == reflect.Int {
		return int(f.Int())
	}
	return 0
}

// pathString spells a path with the JSON names of the view:
// history[5].id, world_state.files["a.go"], token_usage.total_tokens.
// Fields without a JSON name keep their Go name.
func pathString(root reflect.Type, p []step) string {
	var b strings.Builder
	parent := root
	for _, s := range p[1:] {
		switch {
		case s.field != "":
			name := s.field
			if parent != nil {
				if f, ok := parent.FieldByName(name); ok {
					if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
						name = tag
					}
				}
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
		case s.index:
			switch {
			case s.ix == s.iy || s.iy < 0:
				fmt.Fprintf(&b, "[%d]", s.ix)
			case s.ix < 0:
				fmt.Fprintf(&b, "[%d]", s.iy)
			default:
				fmt.Fprintf(&b, "[%d->%d]", s.ix, s.iy)
			}
		case s.key.IsValid():
			if key := keyString(s.key); isIdent(key) {
				b.WriteString("." + key)
			} else {
				b.WriteString("[" + strconv.Quote(key) + "]")
			}
		}
		t := s.typ
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		parent = nil
		if t.Kind() == reflect.Struct {
			parent = t
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
