package repair

import (
	"reflect"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

func TestJoinFindings(t *testing.T) {
	o := &Outcome{Fixes: &checks.FixPlan{
		Planned: []checks.PlannedFix{{Rule: "a/x", Line: 3}, {Rule: "a/x", Line: 7}, {Rule: "b/y", Line: 7}},
		Left:    []checks.Unfixed{{Rule: "c/z", Line: 9, Reason: "why"}},
	}}
	findings := []checks.Finding{
		{Rule: "a/x", Line: 3}, // a change of its own
		{Rule: "a/x", Line: 7}, // inside a run
		{Rule: "b/y", Line: 7}, // planned, but no range of its rule holds it
		{Rule: "a/x", Line: 5}, // in a range, but not planned
		{Rule: "c/z", Line: 9}, // left
	}
	ranges := []LineRange{{"a/x", 3, 3}, {"a/x", 5, 8}, {"b/y", 1, 2}}
	want := []FindingFix{{Ranges: []int{0}}, {Ranges: []int{1}}, {}, {}, {Left: "why"}}
	if got := o.JoinFindings(findings, ranges); !reflect.DeepEqual(got, want) {
		t.Errorf("JoinFindings:\n got %+v\nwant %+v", got, want)
	}
}
