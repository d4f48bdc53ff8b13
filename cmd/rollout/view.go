package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/internal/output/view"
	"github.com/rollout-dev/rollout/reconstruct"
)

type viewOptions struct {
	path   string
	output string
	replayFlags
	maxText int
	thread  string
}

func newViewCmd(a *app, runF func(context.Context, *viewOptions) error) *cobra.Command {
	opts := &viewOptions{}
	cmd := &cobra.Command{
		Use:   "view [FILE]",
		Short: "Write a self-contained HTML page of the thread as resume rebuilds it, with its findings",
		Long: `view replays a rollout as resume does and writes one HTML file: a header
(thread, Codex version, era, history mode, window lineage, verify summary), the
findings with the fix repair would apply, the context fill per request at the
recorded window, what Codex sends on resume (rollout state --items), and the
timeline turn by turn. Records that resume drops or
replaces stay visible, marked. The page makes no network request and runs no
script but its own, so it opens safely from file:// or as a CI artifact.

The page goes beside FILE as NAME.view.html unless -o names another file
(- for standard output); inside a Codex home it goes to
$CODEX_HOME/rollout-artifacts/ at FILE's path, never into sessions/.`,
		Example: `  rollout view fixtures/demo/rollout-2026-03-10T09-35-30-019cd719-fabd-7808-8020-00009e3779b2.jsonl
  rollout view -o thread.html --thread 019cd719-fabd-7808-8020-00009e3779b2`,
		Args: argsBetween(0, 1, "one FILE (or --thread ID)"),
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
	f.StringVarP(&opts.output, "output", "o", "", "write the page to `FILE` (- for standard output; default: NAME.view.html beside the rollout, or under $CODEX_HOME/rollout-artifacts/ for a rollout in a Codex home)")
	f.IntVar(&opts.maxText, "max-text", view.DefaultMaxText, "longest string shown in the page, in bytes; longer ones are cut and show their size")
	opts.addMaxLineBytes(f, "longer lines are not replayed")
	opts.addHandoffCap(f, "handoff/* rules")
	addThreadFlag(f, &opts.thread, "view")
	opts.addForce(f, forceReadFile)
	return cmd
}

// viewPath is where the page of a rollout goes by default: in its place
// (package artifacts: beside it, or in a Codex home under
// $CODEX_HOME/rollout-artifacts/, never in sessions/ where Codex 0.58 took a
// name with the thread id for the session), its name with .view.html for
// .jsonl[.zst]. verify --format html links there.
func viewPath(path string) string {
	if objstore.IsURI(path) {
		// Nothing of ours is written into a bucket: the working directory.
		path = path[strings.LastIndex(path, "/")+1:]
	}
	place, err := artifacts.For(path)
	if err != nil {
		return strings.TrimSuffix(strings.TrimSuffix(path, ".zst"), ".jsonl") + artifacts.ViewSuffix
	}
	return place.View()
}

func runView(ctx context.Context, a *app, o *viewOptions) error {
	var size int64
	if o.path != "-" {
		fi, err := objstore.StatAny(ctx, o.path)
		if err != nil {
			return &exitError{code: exitUsage, err: err}
		}
		size = fi.Size
	}
	if err := checkOutputsOf([]string{o.path}, o.output); err != nil {
		return err
	}
	b := view.New(view.Options{Path: o.path, Bytes: size, MaxText: o.maxText})
	evidence := budget.NewCollector()
	checker := checks.NewChecker(o.path, checks.DefaultMaxFindingsPerRule)
	lin := lineagesOfFile(o.path)
	ro := o.replayOptions(o.path, lin)
	ro.OnRecord = b.Record
	st, err := reconstruct.ReplayFile(o.path, a.io.In, ro, b.Observe, evidence.Observe, checker.Observe)
	if err != nil {
		return err
	}
	lin.sayNotes(a)
	res := checker.Result(st)
	findings := view.WithFixes(res, view.FixOptions{Path: o.path, MaxLineBytes: o.maxLineBytes, HandoffCap: o.handoffCap})
	items, err := resumeinput.Items(st, o.path, resumeinput.Options{Open: ro.Open, MaxLineBytes: ro.MaxLineBytes})
	b.Input(st, items, err)
	pg := b.Finish(res.State, findings)
	pg.ChartSVG, pg.ChartNote = view.FillChart(o.path, evidence.Evidence(res.State))

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
