package reclaim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A parent and its sub-agents are reclaimed together: a cycle of parent
// links is one tree, a file whose parent was not read is its own, a file
// that could not be planned is in none.
func TestTrees(t *testing.T) {
	t.Parallel()
	plans := []*Plan{
		{ThreadID: "c", Parent: "b"}, nil, {ThreadID: "b", Parent: "c"},
		{ThreadID: "x", Parent: "gone"}, {ThreadID: "d", Parent: "b"},
	}
	want := [][]int{{0, 2, 4}, {3}}
	if diff := cmp.Diff(want, trees(plans)); diff != "" {
		t.Errorf("trees (-want +got):\n%s", diff)
	}
}
