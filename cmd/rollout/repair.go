package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/lineage"
	"github.com/rollout-dev/rollout/internal/edit/inplace"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/progress"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
)

type repairOptions struct {
	path      string   // the file of this repair
	paths     []string // every file or directory named (several: one repair each)
	undo      bool
	write     bool
	output    string
	noBackup  bool
	diff      string // "": none; "short": the readable diff; "full": the unified diff
	color     string
	fix       []string
	fixes     checks.FixSet // --fix, parsed by validate
	report    string
	randomIDs bool
	replayFlags
	now    nowFlag
	thread string
	quiet  bool

	// stage, when set (tests only), is called at each step of a run:
	// "analysed", then with --write "written", "backed-up", "checked",
	// "quarantined", "renamed".
	stage func(string)
}

// repairLong is repair's help text.
const repairLong = `repair plans a fix for each finding that has one and, by default, only shows
the plan: one line per fix with its rule, line and before/after. --diff adds,
per changed line, the words that change with a little context (bounded, so a
fixed id on a 4 MB line prints one short line; coloured on a terminal);
--diff=full adds a unified diff of whole lines that patch applies. Nothing is
written without --write.

--write replaces FILE atomically: the result goes to a temporary file in the
same directory, is fsynced and verified, FILE is kept as FILE.bak (FILE.bak.N
when taken; --no-backup skips it), and the rename happens only if FILE did not
change since it was read (size, mtime and content); otherwise repair exits 4
and FILE is untouched. It keeps FILE's owner, group, mode and xattrs, holds
an exclusive lock on FILE for the whole write (a second repair exits 4), and
refuses (exit 4) while another process holds FILE open for writing, as an
agent does between turns (Linux; --force overrides). With -o OUT the result goes to OUT instead and FILE is
never modified. zstd content (a .zst file, or zstd under any name) is written
back compressed; with -o, OUT's name decides (.zst or not). gzip, bzip2 and
xz content is refused: decompress it first. A .zst cut short (a copy
interrupted) is salvaged with line/torn-tail's fix: the lines decoded before
the cut are repaired and written back, the torn one and the compressed bytes
from the cut on (as base64) go to the quarantine.

Lines that no fix touches are copied byte for byte; a fixed line keeps its key
order and every byte the fix does not change. Lines removed from the rollout
(a torn tail, an unparseable line, ...) are appended to FILE.quarantine.jsonl
(OUT.quarantine.jsonl with -o). Ids repair assigns are derived from the thread
id, the line and the item, so the same input always gives the same output.

The default fixes are those not marked opt-in in ` + "`rollout explain`" + `; --fix picks
others: rule ids, areas (ordinal/), "default" or "all".

Several files, or directories (walked for rollout-*.jsonl[.zst]), are repaired
one after the other, each in its own transaction, then summarised; the exit
code is that of the worst outcome.

--write in place leaves FILE.repair-undo.json: what repair wrote (size and
SHA-256) and what the quarantine held before. repair --undo FILE checks that
FILE is still that file and the quarantine unchanged since, then puts FILE.bak
back as FILE and takes the repair's entries out of the quarantine (exit 4,
nothing touched, when something changed or the record names any file but
FILE's own). Run again, it finishes an undo that was stopped.

Inside a Codex home (a directory above FILE is named sessions or
archived_sessions) FILE.bak, FILE.quarantine.jsonl and FILE.repair-undo.json go
to $CODEX_HOME/rollout-artifacts/ at FILE's path, never beside FILE, where Codex
would take them for sessions; elsewhere they go beside FILE. When an agent
appends while FILE is being replaced, the replaced file is kept there and the
command that puts its late bytes back is printed (exit 4).

Exit codes: 0 when no error remains after the repair, 1 when some remain
(they are listed), 3 when lines were too long to analyse, 4 when the write was
refused (file changed or open for writing, another repair running, symlink,
quarantine or backup not a regular file, write failed), 2 for usage errors and input
repair cannot use (gzip/bzip2/xz, or nothing in it is a rollout record).`

func newRepairCmd(a *app, runF func(context.Context, *repairOptions) error) *cobra.Command {
	opts := &repairOptions{}
	cmd := &cobra.Command{
		Use:   "repair FILE|DIR...",
		Short: "Fix what verify reports, byte for byte, atomically (dry run by default)",
		Long:  repairLong,
		Example: `  rollout repair rollout.jsonl                      # show the plan
  rollout repair --diff rollout.jsonl               # and what changes in each line
  rollout repair --diff=full rollout.jsonl > fix.diff  # a unified diff for patch
  rollout repair --write rollout.jsonl              # apply it, keep rollout.jsonl.bak
  rollout repair --write -o fixed.jsonl rollout.jsonl
  rollout repair --fix default,tool/orphan-call --write --report fixes.json rollout.jsonl
  rollout repair --undo rollout.jsonl               # back to rollout.jsonl.bak
  rollout repair --write ~/.codex/sessions/2026/03  # every rollout there, one by one`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			if opts.thread != "" {
				p, err := resolveThread(opts.thread)
				if err != nil {
					return err
				}
				opts.paths = append([]string{p}, args...)
			}
			if len(opts.paths) == 0 {
				return argCountError(cmd, args, "FILE|DIR... (or --thread ID)")
			}
			opts.path = opts.paths[0]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			switch {
			case opts.undo:
				return runUndo(a, opts)
			case opts.several():
				return runRepairMany(cmd.Context(), a, opts)
			}
			return runRepair(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.write, "write", false, "apply the plan (default: dry run, nothing is written)")
	f.StringVarP(&opts.output, "output", "o", "", "with --write: write the result to `FILE` instead of replacing the rollout")
	f.BoolVar(&opts.noBackup, "no-backup", false, "with --write: do not keep FILE.bak")
	f.StringVar(&opts.diff, "diff", "", "also print the changes: --diff (each changed line's changed words, with context, bounded) or --diff=full (a unified diff of whole lines that patch applies)")
	f.Lookup("diff").NoOptDefVal = "short"
	f.StringVar(&opts.color, "color", "auto", "colour of --diff: auto|always|never (NO_COLOR disables auto)")
	f.StringSliceVar(&opts.fix, "fix", nil, `fixes to apply: rule ids, areas (ordinal/), "default", "all" (default: the fixes not marked opt-in)`)
	f.StringVar(&opts.report, "report", "", "write the changes (applied, or planned in a dry run) as JSON to `FILE` (- for standard output)")
	f.BoolVar(&opts.randomIDs, "random-ids", false, "make new ids from random bits instead of deriving them (output no longer deterministic)")
	opts.addMaxLineBytes(f, "longer lines are kept as they are, not edited")
	opts.addHandoffCap(f, "which handoffs must be deferred")
	f.Var(&opts.now, "now", "judge liveness at this RFC 3339 time instead of the clock (calls of a file written less than an hour before are left open)")
	opts.addForce(f, forceRepair)
	addThreadFlag(f, &opts.thread, "repair")
	addQuiet(f, &opts.quiet)
	f.BoolVar(&opts.undo, "undo", false, "undo the last in-place repair --write of FILE: restore FILE.bak and the quarantine")
	return cmd
}

func (o *repairOptions) validate() error {
	if slices.Contains(o.paths, rollout.StdinPath) {
		return usageError("save it to a file first", "repair needs a file: standard input cannot be read twice or replaced")
	}
	if o.undo && (o.write || o.output != "" || o.diff != "" || o.report != "" || len(o.fix) > 0) {
		return usageError("run repair --undo FILE alone", "--undo takes no other repair flag")
	}
	if o.several() && (o.output != "" || o.report != "") {
		return usageError("repair the files one at a time to use -o or --report", "-o and --report take one input file; %d paths given", len(o.paths))
	}
	if o.output == "-" {
		// Everywhere else "-" is standard output; a repaired rollout is
		// re-verified where it is written and its removed lines go beside
		// it, which a pipe cannot hold: named, never a file called "-".
		return usageError("write it to a file with -o OUT; --diff=full prints the change on standard output",
			"repair -o - : the repaired rollout needs a file (it is re-verified there, and its quarantine goes beside it)")
	}
	if o.output != "" && !o.write {
		return usageError("add --write: nothing is written without it", "-o %s given without --write", o.output)
	}
	if o.noBackup && (!o.write || o.output != "") {
		return usageError("--no-backup only applies to --write without -o", "--no-backup given without --write in place")
	}
	if o.diff != "" && o.diff != "short" && o.diff != "full" {
		return usageError("use --diff, or --diff=full for whole lines", "invalid --diff %q", o.diff)
	}
	if o.color != "auto" && o.color != "always" && o.color != "never" {
		return usageError("use --color auto|always|never", "invalid --color %q", o.color)
	}
	if err := o.validateLimits(); err != nil {
		return err
	}
	var err error
	if o.fixes, err = checks.SelectFixes(o.fix); err != nil {
		return ruleError(err)
	}
	return nil
}

// several: more than one file to repair (several paths, or a directory).
func (o *repairOptions) several() bool {
	return len(o.paths) > 1 || isDir(o.paths[0])
}

// runRepairMany repairs each rollout of the paths in its own transaction,
// reports each as a single repair does, then sums up; the exit code is the
// worst outcome's.
func runRepairMany(ctx context.Context, a *app, o *repairOptions) error {
	// A directory without rollouts (a month without sessions) is a note,
	// as verify, space and reclaim have it.
	found, err := lineage.Select(o.paths, nil)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	for _, e := range found.Empty {
		notef(a.io.Err, "%s: nothing to repair", termsafe.String(e.Error()))
	}
	files := found.Paths
	// Each file's report goes to the terminal between redraws of the
	// progress line: through writers that clear it first.
	bar := progress.New(a.io.Err, "repairing", files, showProgress(a, o.quiet))
	defer bar.Finish()
	streams := *a.io
	streams.Out, streams.Err = bar.Writer(a.io.Out), bar.Writer(a.io.Err)
	withProgress := *a
	withProgress.io = &streams
	a = &withProgress
	outcomes := map[string]int{}
	var status exitStatus
	for _, u := range found.Unusable {
		errorf(a.io.Err, "%s", termsafe.String(u.Error()))
		outcomes["not read"]++
		status.raise(exitIncomplete)
	}
	for i, p := range files {
		if i > 0 {
			fmt.Fprintln(a.io.Out)
		}
		one := *o
		one.path, one.paths = p, []string{p}
		c := exitOK
		if err := runRepair(ctx, a, &one); err != nil {
			c = reportError(a.io, err)
		}
		outcomes[repairOutcomeName(c)]++
		status.raise(c)
		bar.StepFile(p)
	}
	fmt.Fprintf(a.io.Out, "\nrepair: %s: %s\n", report.Count(len(files), "file"), report.RepairOutcomes(outcomes))
	return status.err()
}

func repairOutcomeName(code int) string {
	return map[int]string{exitOK: "clean", exitFindings: "errors remain", exitIncomplete: "incomplete",
		exitUnsafe: "refused", exitUsage: "unusable", exitInternal: "internal error"}[code]
}

// runUndo undoes the last in-place repair of each file.
func runUndo(a *app, o *repairOptions) error {
	var status exitStatus
	for _, p := range o.paths {
		out, err := repair.Undo(p, repair.UndoOptions{Force: o.force, Stage: o.stage})
		if err != nil {
			var ref *inplace.Refusal
			switch {
			case errors.As(err, &ref) && ref.Kind == inplace.Changed:
				err = &exitError{code: exitUnsafe, err: ref, hint: "nothing was touched; compare the files by hand (rollout diff BACKUP " + p + ")"}
			case errors.As(err, &ref):
				err = refusalError(ref)
			case errors.Is(err, repair.ErrNothingToUndo):
				err = &exitError{code: exitUsage, err: err}
			}
			status.raise(reportError(a.io, err))
			if out == nil {
				continue
			}
		}
		report.PrintRepairUndo(a.io.Out, p, out)
		if out.Late != nil {
			status.raise(reportError(a.io, lateError(out.Late)))
		}
	}
	return status.err()
}

// lateError is exit 4 for bytes an agent appended while a file was
// replaced: kept, but not in the file.
func lateError(l *inplace.Late) error {
	return &exitError{code: exitUnsafe, err: errors.New(termsafe.String(l.Error())),
		hint: "an agent was writing to it: stop it before replacing the file, then add those bytes back if they belong there"}
}

func runRepair(ctx context.Context, a *app, o *repairOptions) error {
	if err := o.checkOutputs(); err != nil {
		return err
	}
	t, err := repair.Begin(repair.Options{
		Path: o.path, Output: o.output, Write: o.write, NoBackup: o.noBackup,
		Fix: o.fixes, RandomIDs: o.randomIDs, MaxLineBytes: o.maxLineBytes, HandoffCap: o.handoffCap,
		Now: o.now.time(), Force: o.force, Stage: o.stage,
	})
	if err != nil {
		var ref *inplace.Refusal
		if errors.As(err, &ref) {
			return refusalError(ref)
		}
		if errors.As(err, new(*reconstruct.ReadError)) && errors.Is(err, io.ErrUnexpectedEOF) && !o.fixes["line/torn-tail"] {
			return &exitError{code: exitIncomplete, err: err, hint: "line/torn-tail's fix salvages the readable part of a .zst cut short: add it to --fix"}
		}
		return err
	}
	if t.Refusal != nil && errors.Is(t.Refusal, repair.ErrOnlyTornRecord) {
		t.Finish()
		return refusalError(t.Refusal) // one message: no plan to quarantine the only line
	}
	p := o.printer(a)
	if !t.NothingToFix() {
		p.PrintPlan(&t.Outcome)
		if err := p.PrintDiff(t); err != nil {
			t.Finish()
			return err
		}
	}
	out := t.Finish()
	return o.finish(a, p, out)
}

// printer prints this repair's plan, diff and outcome.
func (o *repairOptions) printer(a *app) *report.RepairPrinter {
	return &report.RepairPrinter{Out: a.io.Out, Err: a.io.Err, Path: o.path, Write: o.write, Output: o.output,
		Diff: o.diff, Color: a.io.useColor(o.color, a.io.OutIsTTY), OutIsTTY: a.io.OutIsTTY,
		Say:  func(format string, args ...any) { printf(a.io.Err, format, args...) },
		Hint: func(format string, args ...any) { hintf(a.io.Err, format, args...) }}
}

// checkOutputs refuses, before anything is read, a report or -o output
// that is the input (or its quarantine or backup). In place, the
// quarantine is the input's own, by design.
func (o *repairOptions) checkOutputs() error {
	outputs := []string{o.report}
	if o.write && o.output != "" {
		outputs = append(outputs, o.output, o.output+outfile.QuarantineSuffix)
	}
	return checkOutputsOf([]string{o.path}, outputs...)
}

// refusalError maps a refusal to its exit code and a hint.
func refusalError(ref *inplace.Refusal) error {
	e := &exitError{code: exitUnsafe, err: ref}
	switch ref.Kind {
	case inplace.Changed:
		e.hint = "the agent may still be writing to it: stop it (or wait for the turn to end) and run repair again"
	case inplace.Symlink:
		e.hint = "repair the file it points to, or write the result elsewhere with -o OUT"
	case inplace.WriteFailed:
		e.hint = "check the free space and permissions of the directory of " + ref.Path + ", or write elsewhere with -o OUT"
	case inplace.NotRollout:
		e.code, e.hint = exitUsage, cmp.Or(inputHint(ref), "name one rollout file (.jsonl or .jsonl.zst)")
		if errors.Is(ref, repair.ErrOnlyTornRecord) {
			e.hint = "restore the file from a backup if there is one; otherwise the thread cannot be resumed (Codex's state DB keeps its threads row: its title and first message, not its history)"
		}
	case inplace.Compressed:
		e.code, e.hint = exitUsage, "decompress it (gunzip, bunzip2, unxz), repair the result, and compress it again if you need to"
	case inplace.InUse:
		e.hint = "stop the agent (or let it exit) and run repair again; --force replaces the file anyway, and what the process writes next is lost"
	case inplace.Referenced:
		e.hint = "a rollout a fork or revert continues is immutable below its cutoff, as Codex treats it (its compression skips it): leave it as it is, or fix only what lies after the cutoff; --force does not override this"
	case inplace.CodexWriter:
		e.hint = "let Codex finish the turn, or exit the Codex process that has the thread open (a TUI, `codex exec`, an idle app-server), and run again; --force does not override Codex's writer lock"
	case inplace.HistoryUnreadable:
		e.hint = "run again once Codex has released the database (it holds it while a transaction runs, or for good in exclusive locking mode: exit that Codex); a damaged or foreign thread_history_N.sqlite must be moved out of the home first"
	case inplace.Busy:
		e.hint = "wait for the other repair or reclaim, or for Codex's rollout compression or migration, to finish"
	case inplace.NotRegular:
		e.hint = "move " + ref.Path + " out of the way: repair only appends to a regular file there"
	case inplace.UnsafeStore:
		e.hint = "the artifacts store must belong to root or the Codex home's owner and be writable by no one else: remove " + ref.Path + " (or chown and chmod it) and run again"
	case inplace.BadOutput:
		e.code, e.hint = exitUsage, "name another output file with -o, or repair in place with --write alone"
	}
	return e
}

// finish prints the outcome and the remaining findings, writes the report
// and returns the exit code.
func (o *repairOptions) finish(a *app, p *report.RepairPrinter, out *repair.Outcome) error {
	if out.NothingToFix() {
		fmt.Fprintf(a.io.Out, "%s: nothing to repair: %s\n", termsafe.String(o.path), report.NothingToRepair(out, o.fixes))
	}
	remaining := out.Remaining()
	p.PrintOutcome(out, remaining)
	if o.report != "" {
		if err := writeOutput(a, o.report, "the report", func(w io.Writer) error { return report.WriteRepairJSON(w, out) }); err != nil {
			return err
		}
	}
	if out.Refusal != nil {
		return refusalError(out.Refusal)
	}
	var status exitStatus
	for _, f := range remaining {
		switch {
		case f.Incomplete:
			status.raise(exitIncomplete)
		case f.Severity == checks.Error:
			status.raise(exitFindings)
		}
	}
	if out.Late != nil {
		return lateError(out.Late)
	}
	if out.Warning != "" {
		return &exitError{code: exitUnsafe, err: errors.New(out.Warning)}
	}
	return status.err()
}
