package view

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/htmlpage"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/rollout"
)

// FixOptions say which file WithFixes dry-runs repair on, and how it is
// read.
type FixOptions struct {
	Path         string // rollout.StdinPath: no dry run (it cannot be read twice)
	MaxLineBytes int64
	HandoffCap   int64
}

// WithFixes pairs each finding with what repair would do about it: the
// changes of a dry run of the default repair, as `rollout repair` prints
// them, or why it leaves the finding. The dry run reads the file again;
// it runs only when some finding is fixable, and not on standard input,
// which cannot be read twice (there, and on files with more findings than
// the page lists, the page names the fix in words).
func WithFixes(res *checks.Result, o FixOptions) []*Finding {
	var lines []report.PlanLine
	var joined []repair.FindingFix
	// The dry run keeps every finding and change: it runs only where the
	// analysis listed every finding (no rule past --max-findings-per-rule),
	// so its memory stays bounded too.
	fixable, capped := false, false
	for _, f := range res.Findings {
		fixable = fixable || f.Fixable
		capped = capped || f.Represents() > 1
	}
	if fixable && !capped && o.Path != rollout.StdinPath {
		// Where repair refuses the file (one --force reads), the page
		// names the fixes in words.
		if txn, err := repair.Begin(repair.Options{Path: o.Path, MaxLineBytes: o.MaxLineBytes, HandoffCap: o.HandoffCap}); err == nil {
			out := txn.Finish()
			lines = report.PlanLines(out.Changes)
			ranges := make([]repair.LineRange, len(lines))
			for i, pl := range lines {
				ranges[i] = pl.LineRange
			}
			joined = out.JoinFindings(res.Findings, ranges)
		}
	}
	out := make([]*Finding, 0, len(res.Findings))
	for i, f := range res.Findings {
		vf := &Finding{Finding: f}
		var left string
		if joined != nil {
			for _, j := range joined[i].Ranges {
				vf.Fix = append(vf.Fix, lines[j].Where+": "+lines[j].What)
			}
			left = joined[i].Left
		}
		switch r, _ := checks.Lookup(f.Rule); {
		case left != "":
			vf.FixNote = "left: " + left
		case len(vf.Fix) == 0 && r != nil && r.Fixable():
			vf.FixNote = r.Fix
		}
		out = append(out, vf)
	}
	return out
}

// FillChart draws the context fill per request at the recorded window.
func FillChart(path string, ev *budget.Evidence) ([]byte, string) {
	ev.Path = filepath.Base(path)
	s := budget.DefaultSettings()
	s.Trace = true
	r, err := budget.Simulate(ev, s)
	if errors.Is(err, budget.ErrNoWindow) || (err == nil && r.Requests == 0) {
		return nil, "No chart: the rollout records no token counts with a context window."
	}
	if err != nil {
		return nil, "No chart: " + err.Error()
	}
	var buf bytes.Buffer
	if err := report.WriteViewChart(&buf, r); err != nil {
		return nil, "No chart: " + err.Error()
	}
	rec := r.Recorded
	note := fmt.Sprintf("%d requests at the recorded window of %s tokens; %d compaction(s); peak fill %s.",
		r.Requests, htmlpage.Group(rec.Window), rec.Compactions, htmlpage.Group(rec.PeakFill))
	return buf.Bytes(), note
}
