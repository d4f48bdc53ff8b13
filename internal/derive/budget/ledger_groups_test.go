package budget

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Threads linked as parent and sub-agents share a ledger: grouped by the
// thread at the top of their tree, a parent not among the inputs included,
// a cycle of links one group whichever rollout comes first.
func TestLedgerGroups(t *testing.T) {
	t.Parallel()
	metas := []*meta{
		{thread: "b", parent: "c"}, {thread: "c", parent: "b"}, {thread: "d", parent: "c"}, // a cycle and a child
		{thread: "s1", parent: "gone"}, {thread: "s2", parent: "gone"}, // siblings of a parent not read
		{thread: "", parent: "gone"}, // no thread: no ledger
		{thread: "alone"},
	}
	groups, threads := ledgerGroups(metas)
	want := map[string][]int{"b": {0, 1, 2}, "gone": {3, 4}, "alone": {6}}
	if diff := cmp.Diff(want, groups); diff != "" {
		t.Errorf("groups (-want +got):\n%s", diff)
	}
	if threads[2] != "d" || threads[4] != "s2" {
		t.Errorf("threads = %v", threads)
	}
	if _, ok := threads[5]; ok {
		t.Errorf("a rollout without a thread id is in a group: %v", threads)
	}
}
