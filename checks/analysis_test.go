package checks_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/rollout-dev/rollout/checks"
)

// An Analysis makes the findings RunReader makes, in the same order, and
// its plan is the same: on every rule fixture, with every fix selected.
func TestAnalysisMatchesResult(t *testing.T) {
	fxs, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	all, err := checks.SelectFixes([]string{"all"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fx := range fxs {
		if fx.home != nil {
			continue // needs a Codex home around it
		}
		for _, c := range fx.cases {
			opts := checks.Options{MaxLineBytes: fx.maxLn, Now: fx.now, MigrationLimit: fx.migLim, ReplayGlued: true}
			var f1, f2 checks.FixFacts
			res, err1 := checks.RunReader("r.jsonl", bytes.NewReader(c.data), opts, f1.Observe)
			an, err2 := checks.RunReaderAnalysis("r.jsonl", bytes.NewReader(c.data), opts, f2.Observe)
			if (err1 == nil) != (err2 == nil) || res == nil || an == nil {
				t.Fatalf("%s %s: errors %v, %v", fx.name, c.section, err1, err2)
			}
			got := an.Findings(func(int) bool { return true })
			if !reflect.DeepEqual(res.Findings, got) && !(len(res.Findings) == 0 && len(got) == 0) {
				t.Errorf("%s %s: findings differ:\n%+v\n%+v", fx.name, c.section, res.Findings, got)
				continue
			}
			p1, err1 := checks.PlanFixes(res, &f1, checks.FixOptions{Fix: all})
			p2, err2 := checks.PlanAnalysis(an, &f2, checks.FixOptions{Fix: all})
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("%s %s: plan errors %v, %v", fx.name, c.section, err1, err2)
			}
			if p1 == nil {
				continue
			}
			if !reflect.DeepEqual(p1.Planned, p2.Planned) || !reflect.DeepEqual(p1.Left, p2.Left) || p1.Plan.Len() != p2.Plan.Len() {
				t.Errorf("%s %s: plans differ: %+v %+v / %+v %+v", fx.name, c.section, p1.Planned, p1.Left, p2.Planned, p2.Left)
			}
			for i := range res.Findings {
				if p2.IsPlanned(i) == slicesContains(p1.Unplanned(res.Findings), res.Findings[i]) {
					t.Errorf("%s %s: finding %d planned %v in one plan only", fx.name, c.section, i, p2.IsPlanned(i))
				}
			}
			n++
		}
	}
	if n < 50 {
		t.Errorf("only %d fixture cases compared", n)
	}
}

func slicesContains(fs []checks.Finding, f checks.Finding) bool {
	for _, g := range fs {
		if reflect.DeepEqual(g, f) {
			return true
		}
	}
	return false
}
