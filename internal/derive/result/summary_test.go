package result

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
)

func TestSummary(t *testing.T) {
	t.Parallel()
	r := Report{Files: []FileResult{
		{Path: "a", Records: 10, Findings: []checks.Finding{
			{Severity: checks.Error}, {Severity: checks.Error}, {Severity: checks.Warning}, {Severity: checks.Info},
		}},
		{Path: "b", Records: 5},
		{Path: "c", Records: 0, Findings: []checks.Finding{{Severity: checks.Info}, {Severity: checks.Info}, {Severity: checks.Info}}},
	}}
	want := Summary{Files: 3, Records: 15, Errors: 2, Warnings: 1, Infos: 4}
	if diff := cmp.Diff(want, r.Summary()); diff != "" {
		t.Errorf("Summary() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Summary{}, (&Report{}).Summary()); diff != "" {
		t.Errorf("empty Summary() mismatch (-want +got):\n%s", diff)
	}
}
