package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/outfile"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/repair"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/spf13/cobra"
)

type repairOptions struct {
	path         string
	write        bool
	output       string
	noBackup     bool
	diff         string // "": none; "short": the readable diff; "full": the unified diff
	color        string
	fix          []string
	report       string
	randomIDs    bool
	maxLineBytes int64
	handoffCap   int64
	now          nowFlag
	thread       string
	force        bool

	// stage, when set (tests only), is called at each step of a run:
	// "analysed", then with --write "written", "backed-up", "checked",
	// "quarantined", "renamed".
	stage func(string)
}

func newRepairCmd(a *app, runF func(context.Context, *repairOptions) error) *cobra.Command {
	opts := &repairOptions{}
	cmd := &cobra.Command{
		Use:   "repair FILE",
		Short: "Fix what verify reports, byte for byte, atomically (dry run by default)",
		Long: `repair plans a fix for each finding that has one and, by default, only shows
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
xz content is refused: decompress it first.

Lines that no fix touches are copied byte for byte; a fixed line keeps its key
order and every byte the fix does not change. Lines removed from the rollout
(a torn tail, an unparseable line, ...) are appended to FILE.quarantine.jsonl
(OUT.quarantine.jsonl with -o). Ids repair assigns are derived from the thread
id, the line and the item, so the same input always gives the same output.

The default fixes are those not marked opt-in in ` + "`rollout explain`" + `; --fix picks
others: rule ids, areas (ordinal/), "default" or "all".

Exit codes: 0 when no error remains after the repair, 1 when some remain
(they are listed), 3 when lines were too long to analyse, 4 when the write was
refused (file changed or open for writing, another repair running, symlink,
quarantine or backup not a regular file, write failed), 2 for usage errors and input
repair cannot use (gzip/bzip2/xz, or nothing in it is a rollout record).`,
		Example: `  rollout repair rollout.jsonl                      # show the plan
  rollout repair --diff rollout.jsonl               # and what changes in each line
  rollout repair --diff=full rollout.jsonl > fix.diff  # a unified diff for patch
  rollout repair --write rollout.jsonl              # apply it, keep rollout.jsonl.bak
  rollout repair --write -o fixed.jsonl rollout.jsonl
  rollout repair --fix default,tool/orphan-call --write --report fixes.json rollout.jsonl`,
		Args: argsAtMost(1, "one FILE (or --thread ID)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := fileOrThread(cmd, args, opts.thread)
			if err != nil {
				return err
			}
			opts.path = path
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRepair(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.write, "write", false, "apply the plan (default: dry run, nothing is written)")
	f.StringVarP(&opts.output, "output", "o", "", "with --write: write the result to OUT instead of replacing FILE")
	f.BoolVar(&opts.noBackup, "no-backup", false, "with --write: do not keep FILE.bak")
	f.StringVar(&opts.diff, "diff", "", "also print the changes: --diff (each changed line's changed words, with context, bounded) or --diff=full (a unified diff of whole lines that patch applies)")
	f.Lookup("diff").NoOptDefVal = "short"
	f.StringVar(&opts.color, "color", "auto", "colour of --diff: auto|always|never (NO_COLOR disables auto)")
	f.StringSliceVar(&opts.fix, "fix", nil, `fixes to apply: rule ids, areas (ordinal/), "default", "all" (default: the fixes not marked opt-in)`)
	f.StringVar(&opts.report, "report", "", "write the changes (applied, or planned in a dry run) as JSON to FILE")
	f.BoolVar(&opts.randomIDs, "random-ids", false, "make new ids from random bits instead of deriving them (output no longer deterministic)")
	f.Int64Var(&opts.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to analyse and edit; longer lines are kept as they are")
	f.Int64Var(&opts.handoffCap, "handoff-cap", reconstruct.DefaultHandoffCap, "cap of a context handoff's budget (which handoffs must be deferred)")
	f.Var(&opts.now, "now", "judge liveness at this RFC 3339 time instead of the clock (calls of a file written less than an hour before are left open)")
	f.BoolVar(&opts.force, "force", false, "repair a file whose first line is not a JSON object (a damaged first line); with --write, replace FILE even while another process holds it open for writing (what it writes next is lost)")
	f.StringVar(&opts.thread, "thread", "", "repair the rollout of thread ID, found under $CODEX_HOME (see `rollout find`)")
	return cmd
}

func (o *repairOptions) validate() error {
	if o.path == rollout.StdinPath {
		return usageError("save it to a file first", "repair needs a file: standard input cannot be read twice or replaced")
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
	if o.handoffCap < 1 {
		return usageError("", "invalid --handoff-cap %d", o.handoffCap)
	}
	if o.maxLineBytes < 1 {
		return usageError("", "invalid --max-line-bytes %d", o.maxLineBytes)
	}
	if _, err := checks.SelectFixes(o.fix); err != nil {
		return ruleError(err)
	}
	return nil
}

func runRepair(ctx context.Context, a *app, o *repairOptions) error {
	if err := o.checkOutputs(); err != nil {
		return err
	}
	t, err := repair.Begin(repair.Options{
		Path: o.path, Output: o.output, Write: o.write, NoBackup: o.noBackup,
		Fix: o.fix, RandomIDs: o.randomIDs, MaxLineBytes: o.maxLineBytes, HandoffCap: o.handoffCap,
		Now: o.now.time(), Force: o.force, Stage: o.stage,
	})
	if err != nil {
		var ref *repair.Refusal
		if errors.As(err, &ref) {
			return refusalError(ref)
		}
		return err
	}
	p := &repairPrinter{a: a, o: o}
	if !t.NothingToFix() {
		p.printPlan(&t.Outcome)
		if err := p.printDiff(t); err != nil {
			t.Finish()
			return err
		}
	}
	out := t.Finish()
	return p.finish(out)
}

// checkOutputs refuses, before anything is read, a report or -o output
// that is the input (or its quarantine or backup). In place, the
// quarantine is the input's own, by design.
func (o *repairOptions) checkOutputs() error {
	var inputs outfile.Inputs
	inputs.Add(o.path)
	outputs := []string{o.report}
	if o.write && o.output != "" {
		outputs = append(outputs, o.output, o.output+outfile.QuarantineSuffix)
	}
	if err := inputs.Check(outputs...); err != nil {
		return outputConflict(err)
	}
	return nil
}

// refusalError maps a refusal to its exit code and a hint.
func refusalError(ref *repair.Refusal) error {
	e := &exitError{code: exitUnsafe, err: ref}
	switch ref.Kind {
	case repair.Changed:
		e.hint = "the agent may still be writing to it: stop it (or wait for the turn to end) and run repair again"
	case repair.Symlink:
		e.hint = "repair the file it points to, or write the result elsewhere with -o OUT"
	case repair.WriteFailed:
		e.hint = "check the free space and permissions of the directory of " + ref.Path + ", or write elsewhere with -o OUT"
	case repair.NotRollout:
		e.code, e.hint = exitUsage, "name one rollout file (.jsonl or .jsonl.zst)"
		if hint := inputHint(ref); hint != "" {
			e.hint = hint
		}
	case repair.Compressed:
		e.code, e.hint = exitUsage, "decompress it (gunzip, bunzip2, unxz), repair the result, and compress it again if you need to"
	case repair.InUse:
		e.hint = "stop the agent (or let it exit) and run repair again; --force replaces the file anyway, and what the process writes next is lost"
	case repair.Busy:
		e.hint = "wait for the other repair to finish"
	case repair.NotRegular:
		e.hint = "move " + ref.Path + " out of the way: repair only appends to a regular file there"
	case repair.BadOutput:
		e.code, e.hint = exitUsage, "name another output file with -o, or repair in place with --write alone"
	}
	return e
}

// finish prints the outcome and the remaining findings, writes the report
// and returns the exit code.
func (p *repairPrinter) finish(out *repair.Outcome) error {
	o := p.o
	if out.NothingToFix() {
		fmt.Fprintf(p.a.io.Out, "%s: nothing to repair\n", o.path)
	}
	remaining := out.Remaining()
	p.printOutcome(out, remaining)
	if o.report != "" {
		if err := outfile.Write(o.report, outfile.Options{}, func(w io.Writer) error { return writeRepairReport(w, out) }); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing the report to %s: %w", o.report, err)}
		}
	}
	if out.Refusal != nil {
		return refusalError(out.Refusal)
	}
	code := exitOK
	for _, f := range remaining {
		switch {
		case f.Incomplete:
			code = exitIncomplete
		case f.Severity == checks.Error && code == exitOK:
			code = exitFindings
		}
	}
	if out.Warning != "" {
		return &exitError{code: exitUnsafe, err: errors.New(out.Warning)}
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}
