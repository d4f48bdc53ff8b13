package main

import (
	"context"
	"errors"
	"io"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/reconstruct"
)

type simulateBudgetOptions struct {
	inputFlags
	quiet        bool
	since, until string
	jobs         int
	perSession   bool
	series       string
	format       string
	output       string
	out          reportOutput // --format and -o, parsed
	replayFlags
	settings budget.Settings
}

func newSimulateBudgetCmd(a *app, runF func(context.Context, *simulateBudgetOptions) error) *cobra.Command {
	opts := &simulateBudgetOptions{settings: budget.DefaultSettings()}
	s := &opts.settings
	var post budget.OptionalTokens
	cmd := &cobra.Command{
		Use:   "simulate-budget [PATH...]",
		Short: "What-if context windows, compaction and handoff budgets over a recorded thread",
		Long: `simulate-budget replays the evidence a rollout holds (one token_count per model
request, the recorded compactions, the turns and their prompts) under other
settings and shows what would have happened: compactions, overflows, handoff
deferrals, ledger exhaustion. One result per --window, side by side; the
calibration line says how many recorded compactions the model reproduces at
the recorded window. Token counts take k and M suffixes in either case
(128k, 1m) and the digit groups the tool prints (1,000,000).

Over many rollouts (several paths, a directory, --files-from, or no path:
$CODEX_HOME/sessions and archived_sessions) it reports the fleet view per
setting: rollouts simulated, rollouts with an overflow, compactions in all
and per rollout (p50/p95), peak fill (p50/p95/max), handoffs deferred and
ledgers exhausted. With --ledger, rollouts linked as parent and sub-agents
(session_meta) share one ledger, charged in request-time order.
--compact-at auto fits the threshold that best reproduces the recorded
compactions.

The model (docs/simulate-budget.md): after a request, if the fill reached the
threshold, the context is compacted to the post-compaction fill before the
next request; a request whose fill then exceeds the window overflows. A
threshold P% of window W is floor(P/100 * W) tokens.`,
		Example: `  rollout simulate-budget fixtures/budget/basic.jsonl
  rollout simulate-budget --window 64k,100k,200k --format json rollout.jsonl
  rollout simulate-budget --window 1m --thread 019cd719
  rollout simulate-budget --handoff-tokens 20000 --handoff-cap 64000 rollout.jsonl
  rollout simulate-budget --window 128000,258400 --format png -o budget.png rollout.jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.resolveOneThread(); err != nil {
				return err
			}
			if v, ok := post.Get(); ok {
				s.PostCompact = v
			}
			if err := opts.validate(a); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			if opts.fleetMode() {
				return runSimulateFleet(cmd.Context(), a, opts)
			}
			return runSimulateBudget(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.Var((*budget.WindowList)(&s.Windows), "window", "context window(s) to simulate, N[,N...] or repeated (default: the recorded window)")
	f.Var((*budget.ThresholdValue)(&s.CompactAt), "compact-at", "compaction threshold: tokens N, a percentage P% of each window, or auto (fitted to the recorded compactions)")
	f.Var(&post, "post-compact-tokens", "fill right after a compaction (default: mean of the recorded post-compaction fills, else the first request's fill)")
	f.Var((*budget.TokenCount)(&s.HandoffTokens), "handoff-tokens", "add one handoff of N tokens arriving at the first turn")
	f.Var((*budget.TokenCount)(&s.HandoffCap), "handoff-cap", "handoff budget cap (handoffs.md)")
	f.Var((*budget.TokenCount)(&s.Ledger), "ledger", "shared ledger of N tokens; the request that exhausts it aborts the rest")
	f.Float64Var(&s.WeightOutput, "weight-output", 1, "ledger charge per output token")
	f.Float64Var(&s.WeightInput, "weight-input", 1, "ledger charge per uncached input token")
	f.Var((*budget.TokenCount)(&s.ReminderEvery), "reminder-every", "count a reminder each time the charged total crosses a multiple of N")
	f.StringVar(&opts.format, "format", report.FormatsOf(report.DocBudget)[0], "output: "+report.FormatHelp(report.DocBudget)+" (svg/png: a chart of fill per request)")
	addOutput(f, &opts.output, "the report")
	addQuiet(f, &opts.quiet)
	opts.addMaxLineBytes(f, "longer lines are not replayed (a warning says how many)")
	opts.addFilesFrom(f)
	opts.addManifest(f)
	opts.addThreads(f, "simulate")
	f.IntVar(&opts.jobs, "jobs", runtime.NumCPU(), "rollouts read in parallel (output is identical for any value)")
	opts.addShard(f, "rollouts", "; merge the JSON reports with rollout merge")
	f.StringVar(&opts.since, "since", "", "only sessions started at or after this time (RFC 3339 or a date)")
	f.StringVar(&opts.until, "until", "", "only sessions started before this time (RFC 3339 or a date)")
	f.BoolVar(&opts.perSession, "per-session", false, "also one row per rollout (path, thread id)")
	f.StringVar(&opts.series, "series", "", "write the fill per simulated request to FILE as CSV (path, window, request, fill, event)")
	opts.addForce(f, forceReadFile)
	return cmd
}

// resolveOneThread makes one --thread, alone, the one rollout to report,
// as one FILE is.
func (o *simulateBudgetOptions) resolveOneThread() (err error) {
	if len(o.paths) == 0 && len(o.threads) == 1 && o.filesFrom == "" && o.manifest == "" {
		o.paths = make([]string, 1)
		o.paths[0], err = resolveThread(o.threads[0])
		o.threads = nil
	}
	return err
}

func (o *simulateBudgetOptions) validate(a *app) error {
	outs, err := parseOutputs(o.document(), []string{o.format}, o.output)
	if err != nil {
		return err
	}
	o.out, o.format = outs[0], outs[0].name
	if f, _ := report.LookupFormat(o.document(), o.format); f.Dir {
		o.perSession = true // the table's rows are the per-session rows
	}
	if err := refuseBinaryOnTerminal(a, o.document(), outs, "write it to a file with -o FILE, or redirect standard output"); err != nil {
		return err
	}
	if o.series == "-" && o.out.file == "" {
		return usageError("write the report to a file with -o FILE, or the series with --series FILE", "--series - and the report would both go to standard output")
	}
	s := &o.settings
	if s.HandoffCap < 0 {
		return usageError("", "invalid --handoff-cap %d", s.HandoffCap)
	}
	if s.WeightOutput < 0 || s.WeightInput < 0 {
		return usageError("weights are charges per token, 0 or more", "invalid ledger weight")
	}
	if err := o.validateLimits(); err != nil {
		return err
	}
	if o.jobs < 1 {
		return usageError("use --jobs 1 or more", "invalid --jobs %d", o.jobs)
	}
	if o.shardPart, err = parseShardFlag(o.shard); err != nil {
		return err
	}
	if _, _, err := o.timeRange(); err != nil {
		return err
	}
	return nil
}

func runSimulateBudget(ctx context.Context, a *app, o *simulateBudgetOptions) error {
	path := o.paths[0]
	if err := o.checkOutputs([]string{path}); err != nil {
		return err
	}
	lin := lineagesOfFile(path)
	ro := o.replayOptions("", nil)
	ro.Ancestry = func() *reconstruct.Ancestry { return lin.ancestry(path) }
	ev, oversized, err := budget.ReadEvidence(path, a.io.In, ro)
	if err != nil {
		return err
	}
	lin.sayNotes(a)
	s := o.settings
	f, _ := report.LookupFormat(report.DocBudget, o.out.name)
	s.Trace = f.Trace || o.series != ""
	r, err := budget.Simulate(ev, s)
	if errors.Is(err, budget.ErrNoWindow) {
		return usageError("name the window(s) to simulate with --window N", "%s: %v", path, err)
	}
	if err != nil {
		return usageError("", "%v", err)
	}
	for _, w := range r.Warnings {
		warningf(a.io.Err, "%s", w)
	}
	if oversized > 0 {
		warningf(a.io.Err, "%s: %d line(s) over --max-line-bytes were not read; the evidence may miss requests", path, oversized)
	}
	if r.Requests == 0 {
		notef(a.io.Err, "%s: nothing to simulate: it records no request's token counts (token_count events with info; Codex writes them once a model has answered)", termsafe.String(path))
	}

	if o.series != "" {
		if err := writeOutput(a, o.series, "--series", func(w io.Writer) error { return report.WriteBudgetSeries(w, r) }); err != nil {
			return err
		}
	}
	if err := writeOutput(a, o.out.file, o.out.name, func(w io.Writer) error {
		return report.Write(w, report.DocBudget, o.out.name, r)
	}); err != nil {
		return err
	}
	if oversized > 0 {
		return silentExit(exitIncomplete)
	}
	return nil
}

// document is what simulate-budget writes: the fleet view over many
// rollouts, else one rollout's result.
func (o *simulateBudgetOptions) document() report.Document {
	if o.fleetMode() {
		return report.DocFleet
	}
	return report.DocBudget
}
