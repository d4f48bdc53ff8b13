package space

import "testing"

// Files whose parent links form a cycle are one tree (package forest's
// rule, Codex's), whatever the order they were added in; a file whose
// parent was not read roots its own tree.
func TestTreesCycle(t *testing.T) {
	t.Parallel()
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}} {
		files := []*File{
			{Path: "b", ThreadID: "b", ParentThreadID: "c", DiskBytes: 1},
			{Path: "c", ThreadID: "c", ParentThreadID: "b", DiskBytes: 2},
			{Path: "d", ThreadID: "d", ParentThreadID: "c", DiskBytes: 4},
			{Path: "e", ThreadID: "e", ParentThreadID: "gone", DiskBytes: 8},
		}
		s := NewSummary(10)
		for _, i := range order {
			s.Add(files[i], nil)
		}
		trees := s.Trees()
		if len(trees) != 1 || trees[0].Root.Path != "b" || trees[0].Files != 3 || trees[0].DiskBytes != 7 {
			t.Errorf("order %v: trees %+v, want one rooted at b with 3 files and 7 bytes", order, trees)
		}
	}
}
