package stateview

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

// TestCompareAsGoCmp checks the walk against go-cmp (gocmp_ref_test.go)
// on the rollouts real Codex CLIs wrote, each against itself with one
// digit changed on one line: ids, call ids, numbers, world state. Only
// pairs whose lists have the same lengths are compared: there go-cmp pairs
// elements in place whichever end its search starts from.
func TestCompareAsGoCmp(t *testing.T) {
	files, _ := filepath.Glob("../../testkit/conformance/testdata/*/*/session/sessions/*/*/*/rollout-*.jsonl")
	if len(files) < 20 {
		t.Fatalf("%d conformance rollouts, want the goldens", len(files))
	}
	dir := t.TempDir()
	replay := func(data string, hashed bool) *reconstruct.State {
		path := filepath.Join(dir, "rollout.jsonl")
		if err := os.WriteFile(path, []byte(data), 0o666); err != nil {
			t.Fatal(err)
		}
		st, err := reconstruct.ReplayFile(path, nil, reconstruct.ReplayOptions{Options: reconstruct.Options{HashItems: hashed}})
		if err != nil {
			return nil
		}
		return st
	}
	checked, differing := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(b), "\n")
		a, ah := replay(string(b), false), replay(string(b), true)
		if a == nil || ah == nil {
			continue
		}
		step := max(1, len(lines)/8)
		for k := 0; k < len(lines); k += step {
			for _, pos := range digitsOf(lines[k]) {
				mutated := slicesWith(lines, k, lines[k][:pos]+string('0'+(lines[k][pos]-'0'+1)%10)+lines[k][pos+1:])
				m, mh := replay(mutated, false), replay(mutated, true)
				if m == nil || mh == nil || !sameLengths(Of(a), Of(m)) {
					continue
				}
				checked++
				got, want := Compare(Of(a), Of(m)), gocmpCompare(Of(a), Of(m))
				if len(want) > 0 {
					differing++
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s line %d byte %d: Compare\n got %s\nwant %s", f, k+1, pos, changesString(got), changesString(want))
				}
				if got, want := Prove(ah, mh), gocmpProve(ah, mh); !reflect.DeepEqual(got, want) {
					t.Errorf("%s line %d byte %d: Prove\n got %s\nwant %s", f, k+1, pos, changesString(got), changesString(want))
				}
			}
		}
	}
	if checked < 1000 || differing < 200 {
		t.Errorf("%d pairs checked, %d of them different: too few to say the walk is go-cmp's", checked, differing)
	}
	t.Logf("%d pairs checked, %d of them different", checked, differing)
}

// digitsOf are two places of a digit in a line: the first after its
// timestamp, and the last.
func digitsOf(line string) []int {
	var out []int
	if i := strings.IndexAny(line[min(len(line), 40):], "0123456789"); i >= 0 {
		out = append(out, 40+i)
	}
	if i := strings.LastIndexAny(line, "0123456789"); i >= 0 && (len(out) == 0 || out[0] != i) {
		out = append(out, i)
	}
	return out
}

func slicesWith(lines []string, k int, line string) string {
	c := append([]string(nil), lines...)
	c[k] = line
	return strings.Join(c, "")
}

func sameLengths(a, b View) bool {
	return len(a.Turns) == len(b.Turns) && len(a.History) == len(b.History) && len(a.Handoffs) == len(b.Handoffs) &&
		len(a.Input) == len(b.Input) && (a.DynamicTools == nil) == (b.DynamicTools == nil) &&
		(a.DynamicTools == nil || len(a.DynamicTools.Names) == len(b.DynamicTools.Names))
}

func changesString(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n  %s %s %#v -> %#v (lines %d, %d)", c.Change, c.Path, c.A, c.B, c.LineA, c.LineB)
	}
	return b.String()
}

// TestWalkLists pins how lists align where go-cmp's answer changed from
// run to run: an element inserted in the middle is one addition, a moved
// one is a removal and an addition around the ones that stay, a pair with
// more differing leaves than equal ones is replaced, and nil is not empty.
func TestWalkLists(t *testing.T) {
	type el struct {
		ID   string `json:"id"`
		Line int    `json:"line"`
		Kind string `json:"kind"`
	}
	type doc struct {
		List []el           `json:"list"`
		Map  map[string]int `json:"map"`
		Any  any            `json:"any"`
	}
	a, b, c, d := el{"a", 1, "k"}, el{"b", 2, "k"}, el{"c", 3, "k"}, el{"d", 4, "k"}
	for _, tc := range []struct {
		name string
		x, y doc
		want []string
	}{
		{"inserted", doc{List: []el{a, b, c, d}}, doc{List: []el{a, b, {"x", 9, "k"}, c, d}}, []string{"added list[2] (0, 9)"}},
		{"removed", doc{List: []el{a, b, c, d}}, doc{List: []el{a, c, d}}, []string{"removed list[1] (2, 0)"}},
		{"moved", doc{List: []el{a, b, c, d}}, doc{List: []el{a, c, b, d}}, []string{"removed list[1] (2, 0)", "added list[2] (0, 2)"}},
		{"changed", doc{List: []el{a, b, c}}, doc{List: []el{a, {"b", 7, "k"}, c}}, []string{"changed list[1].line (2, 7)"}},
		{"shifted", doc{List: []el{a, b, c}}, doc{List: []el{{"x", 8, "k"}, a, {"b", 7, "k"}, c}},
			[]string{"added list[0] (0, 8)", "changed list[1->2].line (2, 7)"}},
		{"replaced", doc{List: []el{a, b, c}}, doc{List: []el{a, {"y", 7, "z"}, c}}, []string{"removed list[1] (2, 0)", "added list[1] (0, 7)"}},
		{"nil", doc{List: nil}, doc{List: []el{}}, []string{"changed list (0, 0)"}},
		{"keys", doc{Map: map[string]int{"a b": 1, "c": 2}}, doc{Map: map[string]int{"c": 3, "d": 4}},
			[]string{`removed map["a b"] (0, 0)`, "changed map.c (0, 0)", "added map.d (0, 0)"}},
		{"types", doc{Any: map[string]any{"n": 1.0}}, doc{Any: map[string]any{"n": "1"}}, []string{"changed any.n (0, 0)"}},
	} {
		x, y := tc.x, tc.y
		var got []string
		for _, c := range walkChanges(reflect.ValueOf(&x).Elem(), reflect.ValueOf(&y).Elem(), walkOptions{}) {
			got = append(got, fmt.Sprintf("%s %s (%d, %d)", c.Change, c.Path, c.LineA, c.LineB))
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
