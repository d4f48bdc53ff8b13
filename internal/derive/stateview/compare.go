package stateview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/token"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

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
	r := &reporter{changes: []Change{}}
	cmp.Equal(comparable(a), comparable(b), cmp.AllowUnexported(Item{}), cmp.Reporter(r))
	return r.changes
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
	r := &reporter{changes: []Change{}}
	cmp.Equal(a, b,
		cmp.Transformer("items", func(h *reconstruct.History) []reconstruct.Item { return slices.Collect(h.All()) }),
		cmp.AllowUnexported(reconstruct.Item{}),
		cmpopts.IgnoreFields(reconstruct.Item{}, "Offset"),
		cmpopts.IgnoreFields(reconstruct.Handoff{}, "Offset"),
		cmp.Comparer(func(x, y *mergepatch.Value) bool {
			if x == nil || y == nil {
				return x == y
			}
			return bytes.Equal(x.AppendJSON(nil), y.AppendJSON(nil))
		}),
		cmp.Reporter(r))
	return r.changes
}

// reporter collects each leaf difference go-cmp finds with its path.
type reporter struct {
	path    cmp.Path
	changes []Change
}

func (r *reporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *reporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *reporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	c := Change{Path: pathString(r.path), Change: Changed}
	switch {
	case !vx.IsValid():
		c.Change, c.B = Added, value(vy)
	case !vy.IsValid():
		c.Change, c.A = Removed, value(vx)
	default:
		c.A, c.B = value(vx), value(vy)
	}
	if f, ok := r.path.Last().(cmp.StructField); ok && !token.IsExported(f.Name()) {
		// An item's content hash (seeded per process) or the engine's
		// internal bookkeeping: the path says what differs.
		c.A, c.B = nil, nil
	}
	c.LineA, c.LineB = elementLines(r.path)
	r.changes = append(r.changes, c)
}

func value(v reflect.Value) any {
	if !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// elementLines are the lines of the list element (turn, item, handoff) a
// path goes through, on each side.
func elementLines(p cmp.Path) (a, b int) {
	for _, step := range p {
		if _, ok := step.(cmp.SliceIndex); !ok {
			continue
		}
		vx, vy := step.Values()
		return lineOf(vx), lineOf(vy)
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

// pathString spells a go-cmp path with the JSON names of the view:
// history[5].id, world_state.files["a.go"], token_usage.total_tokens.
// Fields without a JSON name keep their Go name.
func pathString(p cmp.Path) string {
	var b strings.Builder
	var parent reflect.Type
	for _, step := range p {
		switch s := step.(type) {
		case cmp.StructField:
			name := s.Name()
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
		case cmp.SliceIndex:
			kx, ky := s.SplitKeys()
			switch {
			case kx == ky:
				fmt.Fprintf(&b, "[%d]", kx)
			case kx < 0:
				fmt.Fprintf(&b, "[%d]", ky)
			case ky < 0:
				fmt.Fprintf(&b, "[%d]", kx)
			default:
				fmt.Fprintf(&b, "[%d->%d]", kx, ky)
			}
		case cmp.MapIndex:
			key := fmt.Sprint(s.Key().Interface())
			if isIdent(key) {
				b.WriteString("." + key)
			} else {
				b.WriteString("[" + strconv.Quote(key) + "]")
			}
		}
		t := step.Type()
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		parent = nil
		if t != nil && t.Kind() == reflect.Struct {
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
