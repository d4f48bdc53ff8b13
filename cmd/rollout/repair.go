package main

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"strings"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/spf13/cobra"
)

type repairOptions struct {
	path         string
	write        bool
	output       string
	noBackup     bool
	diff         bool
	fix          []string
	report       string
	randomIDs    bool
	maxLineBytes int64
	handoffCap   int64

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
the plan: one line per fix with its rule, line and before/after (--diff adds a
unified diff). Nothing is written without --write.

--write replaces FILE atomically: the result goes to a temporary file in the
same directory, is fsynced and verified, FILE is kept as FILE.bak (FILE.bak.N
when taken; --no-backup skips it), and the rename happens only if FILE did not
change since it was read (size, mtime and content); otherwise repair exits 4
and FILE is untouched. With -o OUT the result goes to OUT instead and FILE is
never modified. A .zst file is written back compressed.

Lines that no fix touches are copied byte for byte; a fixed line keeps its key
order and every byte the fix does not change. Lines removed from the rollout
(a torn tail, an unparseable line, ...) are appended to FILE.quarantine.jsonl
(OUT.quarantine.jsonl with -o). Ids repair assigns are derived from the thread
id, the line and the item, so the same input always gives the same output.

The default fixes are those not marked opt-in in ` + "`rollout explain`" + `; --fix picks
others: rule ids, areas (ordinal/), "default" or "all".

Exit codes: 0 when no error remains after the repair, 1 when some remain
(they are listed), 3 when lines were too long to analyse, 4 when the write was
refused (file changed, symlink, write failed), 2 for usage errors.`,
		Example: `  rollout repair rollout.jsonl                      # show the plan
  rollout repair --diff rollout.jsonl               # and the unified diff
  rollout repair --write rollout.jsonl              # apply it, keep rollout.jsonl.bak
  rollout repair --write -o fixed.jsonl rollout.jsonl
  rollout repair --fix default,tool/orphan-call --write --report fixes.json rollout.jsonl`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.path = args[0]
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
	f.BoolVar(&opts.diff, "diff", false, "also print a unified diff of the changes")
	f.StringSliceVar(&opts.fix, "fix", nil, `fixes to apply: rule ids, areas (ordinal/), "default", "all" (default: the fixes not marked opt-in)`)
	f.StringVar(&opts.report, "report", "", "write the changes (applied, or planned in a dry run) as JSON to FILE")
	f.BoolVar(&opts.randomIDs, "random-ids", false, "make new ids from random bits instead of deriving them (output no longer deterministic)")
	f.Int64Var(&opts.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to analyse and edit; longer lines are kept as they are")
	f.Int64Var(&opts.handoffCap, "handoff-cap", reconstruct.DefaultHandoffCap, "cap of a context handoff's budget (which handoffs must be deferred)")
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
	if o.handoffCap < 1 {
		return usageError("", "invalid --handoff-cap %d", o.handoffCap)
	}
	if o.maxLineBytes < 1 {
		return usageError("", "invalid --max-line-bytes %d", o.maxLineBytes)
	}
	if _, err := checks.SelectFixes(o.fix); err != nil {
		return usageError("list the rules and their fixes with `rollout explain`", "%v", err)
	}
	return nil
}

func (o *repairOptions) at(stage string) {
	if o.stage != nil {
		o.stage(stage)
	}
}

// repairRun is one repair of one file.
type repairRun struct {
	a    *app
	o    *repairOptions
	seed maphash.Seed // for the change-detection hashes of this run

	src   snapshot       // the input as pass 1 read it
	in    *checks.Result // its analysis
	facts checks.FixFacts
	fp    *checks.FixPlan

	changes     []changeRec
	skips       []rollout.Skip
	quarantine  []quarantineRec
	stats       *rollout.RewriteStats
	out         *checks.Result // the analysis of the output (nil: identical to the input)
	sinks       *sinks         // the temporary files of a write
	target      string         // the file the result replaces or creates
	qpath       string         // its quarantine file
	backup      string
	wrote       bool
	refusal     error // why the write was refused (exit 4)
	postWarning string
}

func runRepair(ctx context.Context, a *app, o *repairOptions) error {
	r := &repairRun{a: a, o: o, seed: maphash.MakeSeed()}
	return r.run()
}

func (r *repairRun) run() error {
	o := r.o
	if err := r.checkPaths(); err != nil {
		return err
	}
	// With -o, the input is copied to OUT while pass 1 reads it (as it is,
	// or decompressed when only one of them is .zst): when there is nothing
	// to fix, that copy is the result.
	var spec *outFile
	recompress := rollout.IsCompressed(o.path) != rollout.IsCompressed(r.target)
	if o.write && o.output != "" {
		var err error
		if spec, err = createOut(r.target, !recompress, false); err != nil {
			return &exitError{code: exitUnsafe, err: err, hint: "check the directory of " + r.target}
		}
	}
	in, snap, err := analyseForRepair(o.path, r.seed, o.checkOptions(r.facts.Observe), spec, recompress)
	if err == nil {
		r.in, r.src = in, snap
		r.fp, err = checks.PlanFixes(in, &r.facts, checks.FixOptions{Fix: o.fix, RandomIDs: o.randomIDs})
		if err != nil {
			err = usageError("", "%v", err)
		}
	}
	if spec != nil && (err != nil || !r.fp.Plan.Empty()) {
		spec.abort()
		spec = nil
	}
	if err != nil {
		return err
	}
	o.at("analysed")

	if r.fp.Plan.Empty() {
		if spec != nil {
			r.sinks = &sinks{out: spec}
			r.refusal = r.commit() // a failed copy fails here
		}
		return r.finish()
	}
	if err := r.rewrite(); err != nil {
		return err
	}
	if r.refusal == nil {
		r.refusal = r.guard()
	}
	r.printPlan()
	if o.diff {
		if err := r.printDiff(); err != nil {
			return err
		}
	}
	switch {
	case r.refusal != nil || !o.write:
	case r.stats.Changes == 0 && o.output == "":
		// Every planned edit was skipped: the file stays as it is.
		r.discard()
	default:
		r.refusal = r.commit()
	}
	return r.finish()
}

// checkPaths refuses what repair must not touch before anything is read.
func (r *repairRun) checkPaths() error {
	o := r.o
	fi, err := os.Lstat(o.path)
	if err != nil {
		return &exitError{code: exitUsage, err: &rollout.PathError{Path: o.path, Err: errors.Unwrap(err)}}
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0 && o.write && o.output == "":
		return &exitError{code: exitUnsafe, err: fmt.Errorf("%s is a symbolic link: refusing to replace it", o.path),
			hint: "repair the file it points to, or write the result elsewhere with -o OUT"}
	case fi.IsDir():
		return usageError("name one rollout file", "%s is a directory", o.path)
	}
	if st, err := os.Stat(o.path); err != nil || !st.Mode().IsRegular() {
		return usageError("", "%s is not a regular file", o.path)
	}
	r.target = o.path
	if o.output != "" {
		r.target = o.output
		if ofi, err := os.Lstat(o.output); err == nil {
			switch {
			case ofi.Mode()&os.ModeSymlink != 0:
				return &exitError{code: exitUnsafe, err: fmt.Errorf("%s is a symbolic link: refusing to replace it", o.output)}
			case ofi.IsDir():
				return usageError("name the output file", "-o %s is a directory", o.output)
			}
			if ifi, err := os.Stat(o.path); err == nil && os.SameFile(ifi, ofi) {
				return usageError("use --write without -o to repair in place", "-o names the input file")
			}
		}
	}
	r.qpath = r.target + ".quarantine.jsonl"
	return nil
}

// guard refuses a repair that would leave more errors of some rule than the
// input had: a fix must never make a file worse.
func (r *repairRun) guard() error {
	if r.out == nil {
		return nil
	}
	before, after := errorsByRule(r.in.Findings), errorsByRule(r.out.Findings)
	var worse []string
	for rule, n := range after {
		if n > before[rule] {
			worse = append(worse, fmt.Sprintf("%s (%d, was %d)", rule, n, before[rule]))
		}
	}
	if len(worse) == 0 {
		return nil
	}
	return fmt.Errorf("the repaired file would have more errors than the original: %s (a bug in repair: please report it)",
		strings.Join(worse, ", "))
}

func errorsByRule(fs []checks.Finding) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		if f.Severity == checks.Error {
			m[f.Rule]++
		}
	}
	return m
}

// finish prints the outcome and the remaining findings, writes the report
// and returns the exit code.
func (r *repairRun) finish() error {
	o := r.o
	if r.fp.Plan.Empty() {
		fmt.Fprintf(r.a.io.Out, "%s: nothing to repair\n", o.path)
	}
	remaining := r.remaining()
	r.printOutcome(remaining)
	if o.report != "" {
		if err := writeFileAtomic(o.report, r.writeReport); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing the report to %s: %w", o.report, err)}
		}
	}
	if r.refusal != nil {
		return &exitError{code: exitUnsafe, err: r.refusal, hint: r.refusalHint()}
	}
	code := exitOK
	for _, f := range remaining {
		switch {
		case f.Rule == "line/oversized":
			code = exitIncomplete
		case f.Severity == checks.Error && code == exitOK:
			code = exitFindings
		}
	}
	if r.postWarning != "" {
		return &exitError{code: exitUnsafe, err: errors.New(r.postWarning)}
	}
	if code != exitOK {
		return silentExit(code)
	}
	return nil
}

func (r *repairRun) refusalHint() string {
	switch {
	case errors.Is(r.refusal, errFileChanged):
		return "the agent may still be writing to it: stop it (or wait for the turn to end) and run repair again"
	case errors.Is(r.refusal, errWriteFailed):
		return "check the free space and permissions of the directory, or write elsewhere with -o OUT"
	}
	return ""
}

// remaining is what verify would report on the result.
func (r *repairRun) remaining() []checks.Finding {
	if r.out != nil {
		return r.out.Findings
	}
	return r.in.Findings
}

// reopen opens the input again, decompressed (for a line moved to the front).
func (r *repairRun) reopen() (io.ReadCloser, error) {
	return rollout.Open(r.o.path, nil)
}

// checkOptions are the analysis settings of both passes: the input and the
// re-verification of the output must judge by the same rules.
func (o *repairOptions) checkOptions(flow reconstruct.Observer) checks.Options {
	return checks.Options{MaxLineBytes: o.maxLineBytes, HandoffCap: o.handoffCap, Flow: flow}
}
