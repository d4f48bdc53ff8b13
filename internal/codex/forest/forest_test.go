package forest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestForest(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name   string
		nodes  []Node
		trees  [][]int
		roots  []int
		cycle  []bool
		absent []string
		top    []string
	}{
		{
			name:  "parent, child, grandchild in any order",
			nodes: []Node{{"c", "b"}, {"a", ""}, {"b", "a"}, {"x", ""}},
			trees: [][]int{{0, 1, 2}, {3}},
			roots: []int{1, 1, 1, 3},
			top:   []string{"a", "a", "a", "x"},
		},
		{
			name:   "siblings under a parent not among the nodes are separate trees with one top",
			nodes:  []Node{{"a1", "p"}, {"a2", "p"}, {"a11", "a1"}},
			trees:  [][]int{{0, 2}, {1}},
			roots:  []int{0, 1, 0},
			absent: []string{"p", "p", "p"},
			top:    []string{"p", "p", "p"},
		},
		{
			// Codex's listing of a cyclic spawn graph terminates and lists
			// each thread once: the cycle is one tree, rooted at its least
			// id whatever the order of the inputs.
			name:  "a cycle and a node below it",
			nodes: []Node{{"d", "c"}, {"c", "b"}, {"b", "c"}},
			trees: [][]int{{0, 1, 2}},
			roots: []int{2, 2, 2},
			cycle: []bool{true, true, true},
			top:   []string{"b", "b", "b"},
		},
		{
			name:  "the same cycle entered elsewhere has the same root",
			nodes: []Node{{"b", "c"}, {"c", "b"}, {"d", "c"}},
			trees: [][]int{{0, 1, 2}},
			roots: []int{0, 0, 0},
			cycle: []bool{true, true, true},
			top:   []string{"b", "b", "b"},
		},
		{
			name:  "a node naming itself",
			nodes: []Node{{"a", "a"}, {"b", "a"}},
			trees: [][]int{{0, 1}},
			roots: []int{0, 0},
			cycle: []bool{true, true},
			top:   []string{"a", "a"},
		},
		{
			// The first node of an id is the node; a copy follows its own
			// link and shares the top.
			name:  "two nodes with one id",
			nodes: []Node{{"a", ""}, {"b", "a"}, {"a", ""}},
			trees: [][]int{{0, 1}, {2}},
			roots: []int{0, 0, 2},
			top:   []string{"a", "a", "a"},
		},
		{
			name:  "nodes without an id",
			nodes: []Node{{"", ""}, {"", "a"}, {"a", ""}},
			trees: [][]int{{0}, {1, 2}},
			roots: []int{0, 2, 2},
			top:   []string{"", "a", "a"},
		},
		{name: "no nodes", trees: nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := New(tt.nodes)
			if diff := cmp.Diff(tt.trees, f.Trees()); diff != "" {
				t.Errorf("Trees (-want +got):\n%s", diff)
			}
			for i := range tt.nodes {
				if tt.roots != nil && f.Root(i) != tt.roots[i] {
					t.Errorf("Root(%d) = %d, want %d", i, f.Root(i), tt.roots[i])
				}
				if want := tt.cycle != nil && tt.cycle[i]; f.Cycle(i) != want {
					t.Errorf("Cycle(%d) = %v, want %v", i, f.Cycle(i), want)
				}
				if want := ""; tt.absent != nil {
					want = tt.absent[i]
					if f.Absent(i) != want {
						t.Errorf("Absent(%d) = %q, want %q", i, f.Absent(i), want)
					}
				} else if f.Absent(i) != want {
					t.Errorf("Absent(%d) = %q, want none", i, f.Absent(i))
				}
				if tt.top != nil && f.Top(i) != tt.top[i] {
					t.Errorf("Top(%d) = %q, want %q", i, f.Top(i), tt.top[i])
				}
			}
		})
	}
}

// A long chain and a long cycle are grouped in linear time, without
// recursion.
func TestForestLong(t *testing.T) {
	t.Parallel()
	const n = 200_000
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: id(i), Parent: id(i + 1)} // the last names a parent not among them
	}
	f := New(nodes)
	if len(f.Trees()) != 1 || f.Root(0) != n-1 || f.Absent(0) != id(n) {
		t.Fatalf("chain: %d trees, root of 0 is %d, absent %q", len(f.Trees()), f.Root(0), f.Absent(0))
	}
	nodes[n-1].Parent = id(0)
	f = New(nodes)
	if len(f.Trees()) != 1 || !f.Cycle(n/2) || f.Top(n/2) != id(0) {
		t.Fatalf("cycle: %d trees, cycle %v, top %q", len(f.Trees()), f.Cycle(n/2), f.Top(n/2))
	}
}

func id(i int) string {
	const digits = "0123456789"
	b := []byte("t-000000")
	for k := len(b) - 1; i > 0; k-- {
		b[k] = digits[i%10]
		i /= 10
	}
	return string(b)
}
