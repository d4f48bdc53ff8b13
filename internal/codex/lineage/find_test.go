package lineage

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/rollout"
)

// A thread with several rollouts (reverts) lists its current one first;
// threads keep the order they first appear in.
func TestCurrentFirst(t *testing.T) {
	const a, b = "019cd719-fabd-7808-8020-00009e3779b2", "019cd800-1111-7222-8333-444455556666"
	m := func(path, id string) rollout.ThreadMatch { return rollout.ThreadMatch{Path: path, ThreadID: id} }
	got := currentFirst([]rollout.ThreadMatch{
		m("s/rollout-2026-03-10T09-00-00-"+a+".jsonl", a),
		m("s/rollout-2026-03-11T09-00-00-"+b+".jsonl", b),
		m("s/rollout-2026-03-12T09-00-00-"+a+".jsonl", a),
	})
	want := []Found{
		{ThreadMatch: m("s/rollout-2026-03-12T09-00-00-"+a+".jsonl", a), Current: true},
		{ThreadMatch: m("s/rollout-2026-03-10T09-00-00-"+a+".jsonl", a)},
		{ThreadMatch: m("s/rollout-2026-03-11T09-00-00-"+b+".jsonl", b)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("currentFirst (-want +got):\n%s", diff)
	}
}
