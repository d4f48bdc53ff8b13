package stateview

// The comparison as go-cmp made it, before this package walked the values
// itself (go-cmp's init cost every start of rollout ~2 ms): the reference
// the walk is checked against, on the cases where go-cmp's output does
// not depend on the direction its edit script search starts from.

import (
	"bytes"
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

func gocmpCompare(a, b View) []Change {
	r := &gocmpReporter{changes: []Change{}}
	cmp.Equal(comparable(a), comparable(b), cmp.AllowUnexported(Item{}), cmp.Reporter(r))
	return r.changes
}

// Prove compares what resume rebuilds from two replays made with
// ReplayOptions.HashItems (reclaim's proof: [] means identical). It is
// Compare of the two hashed views; when they are the same, the rest of the
// engine's state, which no view shows (lines read, unknown record types,
// each handoff's earlier records, ...), must be the same too, and a
// difference there is reported by the engine's field names. Byte offsets
// are left out: they move when bytes before them are removed.
func gocmpProve(a, b *reconstruct.State) []Change {
	if c := gocmpCompare(OfHashed(a), OfHashed(b)); len(c) > 0 {
		return c
	}
	r := &gocmpReporter{changes: []Change{}}
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
type gocmpReporter struct {
	path    cmp.Path
	changes []Change
}

func (r *gocmpReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *gocmpReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *gocmpReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	c := Change{Path: gocmpPathString(r.path), Change: Changed}
	switch {
	case !vx.IsValid():
		c.Change, c.B = Added, gocmpValue(vy)
	case !vy.IsValid():
		c.Change, c.A = Removed, gocmpValue(vx)
	default:
		c.A, c.B = gocmpValue(vx), gocmpValue(vy)
	}
	if f, ok := r.path.Last().(cmp.StructField); ok && !token.IsExported(f.Name()) {
		// An item's content hash (seeded per process) or the engine's
		// internal bookkeeping: the path says what differs.
		c.A, c.B = nil, nil
	}
	c.LineA, c.LineB = gocmpElementLines(r.path)
	r.changes = append(r.changes, c)
}

func gocmpValue(v reflect.Value) any {
	if !v.CanInterface() {
		return nil
	}
	return v.Interface()
}

// elementLines are the lines of the list element (turn, item, handoff) a
// path goes through, on each side.
func gocmpElementLines(p cmp.Path) (a, b int) {
	for _, step := range p {
		if _, ok := step.(cmp.SliceIndex); !ok {
			continue
		}
		vx, vy := step.Values()
		return gocmpLineOf(vx), gocmpLineOf(vy)
	}
	return 0, 0
}

func gocmpLineOf(v reflect.Value) int {
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
func gocmpPathString(p cmp.Path) string {
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
