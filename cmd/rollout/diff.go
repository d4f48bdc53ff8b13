package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/derive/resumeinput"
	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

type diffOptions struct {
	paths   []string // two files, or one with two atLines
	atLines []int
	threads []string
	format  string
	output  string
	out     reportOutput // --format and -o, parsed
	items   bool
	replayFlags
}

func newDiffCmd(a *app, runF func(context.Context, *diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A B | diff --at-line N --at-line M FILE",
		Short: "Compare the reconstructed states of two rollouts, or of one at two lines",
		Long: `diff replays two rollouts as resume does (or one rollout up to two lines) and
compares what the model would see: thread id, era, history mode, turns, the live
history (item ids, types, call ids, lines), the world-state baseline, the
context-window lineage, token usage and handoffs. It prints each difference as
a path into the state with both values (- only in A, + only in B, ~ changed)
and, when the histories differ, the first item where they diverge.

--items compares what Codex sends on resume as well: the input items each
file resumes with (rollout state --items), as JSON values, so that a change
of content shows where ids and lines agree.

After a repair (rollout diff FILE.bak FILE) it shows exactly the ids and lines
that changed; between a fork and its parent, where they diverge.

Exit codes: 0 when the states are the same, 1 when they differ, 2 for usage
errors and files that cannot be read.`,
		Example: `  rollout diff rollout.jsonl.bak rollout.jsonl
  rollout diff --at-line 100 --at-line 200 rollout.jsonl
  rollout diff --items rollout.jsonl.bak rollout.jsonl
  rollout diff --format json --thread 019cd719 --thread 019cd800`,
		RunE: func(cmd *cobra.Command, args []string) error {
			threads, err := resolveThreads(opts.threads)
			if err != nil {
				return err
			}
			opts.paths = append(threads, args...)
			if err := opts.validate(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDiff(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&opts.atLines, "at-line", nil, "stop the replay after line N: twice with one FILE, once or twice with two")
	f.StringArrayVar(&opts.threads, "thread", nil, threadUsage("compare", true))
	f.StringVar(&opts.format, "format", report.FormatsOf(report.DocDiff)[0], "output: "+report.FormatHelp(report.DocDiff))
	f.BoolVar(&opts.items, "items", false, "compare the input items Codex sends on resume too")
	addOutput(f, &opts.output, "the comparison")
	opts.addMaxLineBytes(f, "longer lines are not replayed")
	opts.addForce(f, forceReadFiles)
	return cmd
}

func (o *diffOptions) validate(cmd *cobra.Command) error {
	if err := o.validateLimits(); err != nil {
		return err
	}
	const want = "two FILEs, or one FILE with --at-line N --at-line M"
	switch {
	case len(o.paths) == 1 && len(o.atLines) == 2:
		o.paths = append(o.paths, o.paths[0])
	case len(o.paths) == 2 && len(o.atLines) <= 2:
		if len(o.atLines) == 1 {
			o.atLines = append(o.atLines, o.atLines[0])
		}
	case len(o.paths) == 1:
		return usageError("usage: "+cmd.UseLine(), "rollout diff of one FILE needs --at-line twice; got it %d times", len(o.atLines))
	default:
		return argCountError(cmd, o.paths, want)
	}
	for _, n := range o.atLines {
		if n < 1 {
			return usageError("", "invalid --at-line %d", n)
		}
	}
	if len(o.atLines) == 0 {
		o.atLines = []int{0, 0}
	}
	outs, err := parseOutputs(report.DocDiff, []string{o.format}, o.output)
	if err != nil {
		return err
	}
	o.out = outs[0]
	for _, p := range o.paths {
		if p == rollout.StdinPath {
			return usageError("save it to a file first", "diff reads files: standard input cannot be read twice")
		}
	}
	return nil
}

func runDiff(ctx context.Context, a *app, o *diffOptions) error {
	if err := checkOutputsOf(o.paths, o.out.file); err != nil {
		return err
	}
	var views [2]stateview.View
	var sides [2]report.DiffSide
	for i := range 2 {
		lin := lineagesOfFile(o.paths[i])
		ro := o.replayOptions(o.paths[i], lin)
		ro.StopAfterLine = o.atLines[i]
		st, err := reconstruct.ReplayFile(o.paths[i], nil, ro)
		if err != nil {
			return err
		}
		lin.sayNotes(a)
		views[i] = stateview.Of(st)
		if o.items {
			items, err := resumeinput.Items(st, o.paths[i], resumeinput.Options{Open: ro.Open, MaxLineBytes: ro.MaxLineBytes})
			if err != nil {
				return err
			}
			views[i].Input = resumeinput.Raws(items)
		}
		sides[i] = report.DiffSide{Path: o.paths[i], Records: st.Records}
		if n := o.atLines[i]; n > 0 {
			sides[i].AtLine = &n
		}
	}
	out := report.NewDiff(sides[0], sides[1], views[0], views[1])
	if err := writeOutput(a, o.out.file, "the comparison", func(w io.Writer) error {
		return report.Write(w, report.DocDiff, o.out.name, out)
	}); err != nil {
		return err
	}
	if !out.Equal {
		return silentExit(exitFindings)
	}
	return nil
}
