package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/chart"
	"github.com/rollout-dev/rollout/internal/output/htmlpage"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/internal/output/view"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/spf13/cobra"
)

type viewOptions struct {
	path   string
	output string
	replayLimits
	maxText int
	thread  string
	force   bool
}

func newViewCmd(a *app, runF func(context.Context, *viewOptions) error) *cobra.Command {
	opts := &viewOptions{}
	cmd := &cobra.Command{
		Use:   "view [FILE]",
		Short: "Write a self-contained HTML page of the thread as resume rebuilds it, with its findings",
		Long: `view replays a rollout as resume does and writes one HTML file: a header
(thread, Codex version, era, history mode, window lineage, verify summary), the
findings with the fix repair would apply, the context fill per request at the
recorded window, and the timeline turn by turn. Records that resume drops or
replaces stay visible, marked. The page makes no network request and runs no
script but its own, so it opens safely from file:// or as a CI artifact.

The page goes beside FILE as NAME.view.html unless -o names another file
(- for standard output); inside a Codex home it goes to
$CODEX_HOME/rollout-artifacts/ at FILE's path, never into sessions/.`,
		Example: `  rollout view fixtures/demo/rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl
  rollout view -o thread.html --thread 019cd719-fabd-7808-8020-00009e3779b2`,
		Args: argsAtMost(1, "one FILE (or --thread ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := fileOrThread(cmd, args, opts.thread)
			if err != nil {
				return err
			}
			opts.path = path
			if opts.output == "" {
				if opts.path == "-" {
					opts.output = "-"
				} else {
					opts.output = viewPath(opts.path)
				}
			}
			if err := opts.validateLimits(); err != nil {
				return err
			}
			if opts.maxText < 100 {
				return usageError("use --max-text 100 or more", "invalid --max-text %d", opts.maxText)
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runView(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.output, "output", "o", "", "write the page to FILE (- for standard output; default: NAME.view.html beside FILE, or under $CODEX_HOME/rollout-artifacts/ for a rollout in a Codex home)")
	f.IntVar(&opts.maxText, "max-text", view.DefaultMaxText, "longest string shown in the page, in bytes; longer ones are cut and show their size")
	opts.addMaxLineBytes(f, "longer lines are not replayed")
	opts.addHandoffCap(f, "handoff/* rules")
	addThreadFlag(f, &opts.thread, "view")
	addForce(f, &opts.force, forceReadFile)
	return cmd
}

// viewPath is where the page of a rollout goes by default: in its place
// (package artifacts: beside it, or in a Codex home under
// $CODEX_HOME/rollout-artifacts/, never in sessions/ where Codex 0.58 took a
// name with the thread id for the session), its name with .view.html for
// .jsonl[.zst]. verify --format html links there.
func viewPath(path string) string {
	place, err := artifacts.For(path)
	if err != nil {
		return strings.TrimSuffix(strings.TrimSuffix(path, ".zst"), ".jsonl") + artifacts.ViewSuffix
	}
	return place.View()
}

func runView(ctx context.Context, a *app, o *viewOptions) error {
	var size int64
	if o.path != "-" {
		fi, err := os.Stat(o.path)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		size = fi.Size()
	}
	var inputs outfile.Inputs
	inputs.Add(o.path)
	if err := inputs.Check(o.output); err != nil {
		return outputConflict(err)
	}
	b := view.New(view.Options{Path: o.path, Bytes: size, MaxText: o.maxText})
	evidence := budget.NewCollector()
	checker := checks.NewChecker(o.path, checks.DefaultMaxFindingsPerRule)
	lin := lineagesOfFile(o.path)
	ro := o.replayOptions(o.path, o.force, lin)
	ro.OnRecord = b.Record
	st, err := reconstruct.ReplayFile(o.path, a.io.In, ro, b.Observe, evidence.Observe, checker.Observe)
	if err != nil {
		return err
	}
	lin.sayNotes(a)
	res := checker.Result(st)
	findings := viewFindings(o, res)
	pg := b.Finish(res.State, findings)
	pg.ChartSVG, pg.ChartNote = fillChart(o.path, evidence.Evidence(res.State))

	render := func(w io.Writer) error { return view.Render(w, pg) }
	if place, err := artifacts.For(o.path); err == nil && o.output == place.View() {
		if err := place.Prepare(); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing the view to %s: %w", o.output, err)}
		}
	}
	if err := writeOutput(a, o.output, "the view", render); err != nil || isStdout(o.output) {
		return err
	}
	fmt.Fprintf(a.io.Out, "wrote %s (%d records, %d findings)\n", termsafe.String(o.output), res.Records, len(findings))
	return nil
}

// viewFindings pairs each finding with what repair would do about it: the
// changes of a dry run of the default repair, as `rollout repair` prints
// them, or why it leaves the finding. The dry run reads the file again;
// it runs only when some finding is fixable, and not on standard input,
// which cannot be read twice (there, and on files with more findings than
// the page lists, the page names the fix in words).
func viewFindings(o *viewOptions, res *checks.Result) []*view.Finding {
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
	if fixable && !capped && o.path != "-" {
		// Where repair refuses the file (one --force reads), the page
		// names the fixes in words.
		if txn, err := repair.Begin(repair.Options{Path: o.path, MaxLineBytes: o.maxLineBytes, HandoffCap: o.handoffCap}); err == nil {
			out := txn.Finish()
			lines = report.PlanLines(out.Changes)
			ranges := make([]repair.LineRange, len(lines))
			for i, pl := range lines {
				ranges[i] = pl.LineRange
			}
			joined = out.JoinFindings(res.Findings, ranges)
		}
	}
	out := make([]*view.Finding, 0, len(res.Findings))
	for i, f := range res.Findings {
		vf := &view.Finding{Finding: f}
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

// fillChart draws the context fill per request at the recorded window.
func fillChart(path string, ev *budget.Evidence) ([]byte, string) {
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
	if err := chart.Write(&buf, r, "svg"); err != nil {
		return nil, "No chart: " + err.Error()
	}
	rec := r.Recorded
	note := fmt.Sprintf("%d requests at the recorded window of %s tokens; %d compaction(s); peak fill %s.",
		r.Requests, htmlpage.Group(rec.Window), rec.Compactions, htmlpage.Group(rec.PeakFill))
	return buf.Bytes(), note
}
