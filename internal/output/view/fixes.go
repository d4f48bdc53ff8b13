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
	type key struct {
		rule string
		line int
	}
	planned := map[key]bool{}
	left := map[key]string{}
	var lines []report.PlanLine
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
			for _, f := range out.Fixes.Planned {
				planned[key{f.Rule, f.Line}] = true
			}
			for _, u := range out.Fixes.Left {
				left[key{u.Rule, u.Line}] = u.Reason
			}
			lines = report.PlanLines(out.Changes)
		}
	}
	out := make([]*Finding, 0, len(res.Findings))
	for _, f := range res.Findings {
		vf := &Finding{Finding: f}
		k := key{f.Rule, f.Line}
		for _, pl := range lines {
			if planned[k] && pl.Rule == f.Rule && coversLine(pl.Where, f.Line) {
				vf.Fix = append(vf.Fix, pl.Where+": "+pl.What)
			}
		}
		switch r, _ := checks.Lookup(f.Rule); {
		case left[k] != "":
			vf.FixNote = "left: " + left[k]
		case len(vf.Fix) == 0 && r != nil && r.Fixable():
			vf.FixNote = r.Fix
		}
		out = append(out, vf)
	}
	return out
}

// coversLine reports whether a plan line's "line N" or "lines A-B" holds n.
func coversLine(where string, n int) bool {
	var a, b int
	if _, err := fmt.Sscanf(where, "lines %d-%d", &a, &b); err == nil {
		return a <= n && n <= b
	}
	if _, err := fmt.Sscanf(where, "line %d", &a); err == nil {
		return a == n
	}
	return false
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
