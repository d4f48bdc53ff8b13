package repair

import "github.com/rollout-dev/rollout/checks"

// LineRange is the input lines one step of the plan changes for a rule: a
// change (First == Last), or a run of changes as the plan prints it.
type LineRange struct {
	Rule        string
	First, Last int
}

// FindingFix is what a repair plan does about one finding.
type FindingFix struct {
	Ranges []int  // the ranges that fix it (indices): its rule's, holding its line
	Left   string // why the plan leaves it ("": the plan does not leave it)
}

// JoinFindings joins findings to the plan of o by rule and line number: a
// finding the plan fixes gets the ranges of its rule that hold its line;
// one the plan leaves gets the reason. The result has one entry per
// finding.
func (o *Outcome) JoinFindings(findings []checks.Finding, ranges []LineRange) []FindingFix {
	type key struct {
		rule string
		line int
	}
	planned := map[key]bool{}
	for _, f := range o.Fixes.Planned {
		planned[key{f.Rule, f.Line}] = true
	}
	left := map[key]string{}
	for _, u := range o.Fixes.Left {
		left[key{u.Rule, u.Line}] = u.Reason
	}
	out := make([]FindingFix, len(findings))
	for i, f := range findings {
		k := key{f.Rule, f.Line}
		out[i].Left = left[k]
		if !planned[k] {
			continue
		}
		for j, r := range ranges {
			if r.Rule == f.Rule && r.First <= f.Line && f.Line <= r.Last {
				out[i].Ranges = append(out[i].Ranges, j)
			}
		}
	}
	return out
}
