package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/edit/reclaim"
	"github.com/rollout-dev/rollout/internal/output/progress"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/rollout"
)

type reclaimOptions struct {
	paths    []string
	policies []string
	write    bool
	undo     bool
	format   string
	out      reportOutput // --format and -o, parsed
	output   string
	quiet    bool
	opts     reclaim.Options
	replayFlags
}

func newReclaimCmd(a *app, runF func(context.Context, *reclaimOptions) error) *cobra.Command {
	o := &reclaimOptions{}
	var coldAfter string
	cmd := &cobra.Command{
		Use:   "reclaim [PATH...] --policy P[,P...]",
		Short: "Free the disk space of rollouts under stated policies, proving resume is unchanged",
		Long: `reclaim frees disk space under the policies named with --policy; each says what
it gives up (docs/reclaim.md):

  compress                cold plain files (idle for --cold-after) become
                          .jsonl.zst, which Codex reads as they are; gives up nothing
  superseded-checkpoints  empties the replacement_history of each compaction that
                          a later compaction supersedes; gives up rolling back
                          past the later compaction
  duplicate-exec-output   removes command output from item_completed events when
                          it repeats the same call's tool output exactly; gives up
                          the output a client shows when it re-opens the thread
                          (the model's history keeps the tool output)
  before-turn=N           empties, before the compaction a rollback of N user
                          turns falls back to, the large tool outputs, arguments,
                          images and blobs of tool items and events (strings of
                          1 KiB or more) and older checkpoints' replacement_history;
                          every line stays, with its ids and ordinal. Gives up
                          rolling back more than N turns, forking before that
                          compaction, and that content in a client's transcript

It is a dry run unless --write is given. Before anything is written, the old
and the new file are replayed and what resume rebuilds (history items, turns,
world state, window lineage, token totals, handoffs) is compared; any
difference, or a finding the old file did not have, refuses the file (exit 4).
A parent thread and its sub-agents among the inputs are reclaimed together or
not at all. Every removed byte goes to FILE.reclaimed.jsonl.zst, and
` + "`rollout reclaim --undo FILE`" + ` restores the original bytes exactly; --undo DIR
restores every rollout under DIR that has an archive (what reclaim --write DIR
did), counting those without one.

PATH is as for verify; with no PATH it reads $CODEX_HOME/sessions and
$CODEX_HOME/archived_sessions.`,
		Example: `  rollout reclaim --policy superseded-checkpoints,duplicate-exec-output ~/.codex/sessions
  rollout reclaim --policy compress --cold-after 30d --write ~/.codex/archived_sessions
  rollout reclaim --undo ~/.codex/sessions/2026/03/10/rollout-…jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			d, err := parseDays(coldAfter)
			if err != nil {
				return usageError("use e.g. --cold-after 7d, 36h or 0s", "invalid --cold-after %q", coldAfter)
			}
			o.opts.ColdAfter = d
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runReclaim(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.policies, "policy", nil, "policies to apply: "+strings.Join(reclaim.Policies, ","))
	f.BoolVar(&o.write, "write", false, "apply the plan (the default is a dry run)")
	f.BoolVar(&o.undo, "undo", false, "restore each FILE from its reclaim archive; a DIR: every rollout under it that has one")
	f.StringVar(&coldAfter, "cold-after", "7d", "compress: a file idle this long (mtime) is cold: 7d, 36h, 0s")
	f.StringVar(&o.format, "format", report.FormatsOf(report.DocReclaim)[0], "output format: "+report.FormatHelp(report.DocReclaim))
	addOutput(f, &o.output, "the report")
	addQuiet(f, &o.quiet)
	o.addMaxLineBytes(f, "longer lines are not replayed")
	o.addForce(f, forceReclaim)
	o.addHandoffCap(f, "for the proof's rule run")
	return cmd
}

func (o *reclaimOptions) validate() error {
	outs, err := parseOutputs(report.DocReclaim, []string{o.format}, o.output)
	if err != nil {
		return err
	}
	o.out = outs[0]
	if err := o.validateLimits(); err != nil {
		return err
	}
	o.opts.MaxLineBytes, o.opts.HandoffCap, o.opts.Force = o.maxLineBytes, o.handoffCap, o.force
	if o.undo {
		if len(o.policies) > 0 || o.write {
			return usageError("run --undo alone: it always writes", "--undo takes no --policy or --write")
		}
		if len(o.paths) == 0 {
			return usageError("name the reclaimed rollout: rollout reclaim --undo FILE", "--undo needs a FILE")
		}
		return nil
	}
	if len(o.policies) == 0 {
		return usageError("choose from "+strings.Join(reclaim.Policies, ", ")+" (see rollout space for what each frees)", "reclaim needs --policy")
	}
	o.opts.Policies = nil
	for _, p := range o.policies {
		if n, ok := strings.CutPrefix(p, space.PolicyBeforeTurn+"="); ok {
			turns, err := strconv.Atoi(n)
			if err != nil || turns < 1 {
				return usageError("use --policy before-turn=N with N >= 1, the user turns a rollback may still undo", "invalid policy %q", p)
			}
			o.opts.BeforeTurn, p = turns, space.PolicyBeforeTurn
		} else if p == space.PolicyBeforeTurn {
			return usageError("use --policy before-turn=N, e.g. before-turn=20", "before-turn needs N: the user turns a rollback may still undo")
		}
		if !slices.Contains(reclaim.Policies, p) {
			return usageError("choose from "+strings.Join(reclaim.Policies, ", "), "unknown policy %q", p)
		}
		o.opts.Policies = append(o.opts.Policies, p)
	}
	return nil
}

func runReclaim(ctx context.Context, a *app, o *reclaimOptions) error {
	if o.undo {
		return runReclaimUndo(a, o)
	}
	in, err := (&inputFlags{paths: o.paths}).resolve(a)
	if err != nil {
		return err
	}
	if err := checkOutputsOf(in.paths, o.out.file); err != nil {
		return err
	}
	o.opts.Now = time.Now()
	// Planning reads every file, proving replays the old and the new one
	// of each file that has a plan: one progress line each.
	show := showProgress(a, o.quiet)
	planning := progress.New(a.io.Err, "planning", in.paths, show)
	var proving *progress.Line
	o.opts.Planned = planning.StepFile
	o.opts.Proved = func(p string) {
		if proving == nil {
			planning.Finish()
			proving = progress.New(a.io.Err, "proving", in.paths, show)
		}
		proving.StepFile(p)
	}
	outcomes := reclaim.Run(in.paths, o.opts, o.write)
	planning.Finish()
	if proving != nil {
		proving.Finish()
	}
	doc := report.ReclaimDoc{Outcomes: outcomes, Policies: o.policies, Write: o.write}
	if err := writeOutput(a, o.out.file, "the report", func(w io.Writer) error {
		bw := bufio.NewWriter(w) // lines per file: not a write each
		return cmp.Or(report.Write(bw, report.DocReclaim, o.out.name, doc), bw.Flush())
	}); err != nil {
		return err
	}
	var status exitStatus
	for _, out := range outcomes {
		switch {
		case out.PlanFailed():
			status.raise(exitIncomplete)
		case out.Err != nil || out.Refused != "":
			status.raise(exitUnsafe)
		}
		if out.Result != nil && out.Result.Late != nil {
			reportError(a.io, lateError(out.Result.Late))
			status.raise(exitUnsafe)
		}
	}
	return status.err()
}

func runReclaimUndo(a *app, o *reclaimOptions) error {
	var status exitStatus
	for _, p := range o.paths {
		if isDir(p) {
			status.raise(undoReclaimDir(a, o, p))
			continue
		}
		status.raise(undoReclaimFile(a, o, p, false))
	}
	return status.err()
}

// undoReclaimDir undoes what reclaim --write DIR did: each rollout found
// under dir that has a reclaim archive is restored; one without is
// counted, not refused (a FILE named alone without one is refused).
func undoReclaimDir(a *app, o *reclaimOptions, dir string) int {
	found, err := rollout.Discover([]string{dir})
	if err != nil && !errors.Is(err, rollout.ErrNoRollouts) {
		return reportError(a.io, &exitError{code: exitUsage, err: err})
	}
	code, restored, none := exitOK, 0, 0
	for _, u := range found.Unusable {
		code = worse(code, reportError(a.io, &exitError{code: exitIncomplete, err: u}))
	}
	for _, p := range found.Paths {
		c := undoReclaimFile(a, o, p, true)
		switch c {
		case exitOK:
			restored++
		case -1:
			none++
			c = exitOK
		}
		code = worse(code, c)
	}
	switch {
	case restored == 0 && none == len(found.Paths):
		fmt.Fprintf(a.io.Out, "%s: nothing to undo: none of its %s has a reclaim archive (reclaim --write made none there, or they were undone)\n",
			termsafe.String(dir), report.Count(len(found.Paths), "rollout"))
	case none > 0:
		fmt.Fprintf(a.io.Out, "%s: %s restored; %d had no reclaim archive\n", termsafe.String(dir), report.Count(restored, "file"), none)
	default:
		fmt.Fprintf(a.io.Out, "%s: %s restored\n", termsafe.String(dir), report.Count(restored, "file"))
	}
	return code
}

// undoReclaimFile undoes the reclaim of one file and returns its exit
// code; found by a walk (inWalk), a file without an archive returns -1.
func undoReclaimFile(a *app, o *reclaimOptions, p string, inWalk bool) int {
	code := exitOK
	res, err := reclaim.Undo(p, reclaim.UndoOptions{Force: o.opts.Force, Stage: o.opts.Stage})
	if err != nil {
		if inWalk && errors.Is(err, reclaim.ErrNotReclaimed) {
			return -1
		}
		reportError(a.io, &exitError{code: exitUnsafe, err: err})
		code = exitUnsafe
		if res == nil {
			return code
		}
	}
	note := ""
	if res.Resumed {
		note = " (an undo stopped after its rename, finished)"
	}
	// The store the bytes come back from; the reclaimed file too when it
	// had another name (compressed to .zst).
	from := res.Archive
	if res.From != res.Path {
		from = res.From + " and " + from
	}
	fmt.Fprintf(a.io.Out, "%s: restored from %s (%d ranges put back), which is removed%s\n",
		termsafe.String(res.Path), termsafe.String(from), res.Restored, note)
	if res.Projection {
		fmt.Fprintf(a.io.Out, "put back Codex's projection of the thread reclaim had deleted\n")
	}
	if res.Late != nil {
		reportError(a.io, lateError(res.Late))
		code = exitUnsafe
	}
	return code
}
