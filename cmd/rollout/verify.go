package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
	"github.com/rollout-dev/rollout/internal/derive/incremental"
	"github.com/rollout-dev/rollout/internal/derive/policy"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/progress"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
)

type verifyOptions struct {
	inputFlags
	formats     []string
	output      string // -o: the file of the format that names none
	sourceRoot  string
	failOn      string
	selectRules []string
	ignoreRules []string
	replayFlags
	maxFindings int
	jobs        int
	color       string
	now         nowFlag
	since       string // --since: the previous run's JSON report
	// CI policy (verify_policy.go).
	configPath    string
	baseline      string
	writeBaseline string
	quiet         bool
	showSeverity  string
	statistics    bool

	// Parsed once by validate from the flags above.
	outputs   []reportOutput
	failOnSev checks.Severity
	showSev   checks.Severity
	filter    checks.Filter
	cfg       *config.Config // nil when no config file applies
}

func newVerifyCmd(a *app, runF func(context.Context, *verifyOptions) error) *cobra.Command {
	opts := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify [PATH...]",
		Short: "Report every inconsistency in rollouts, with rule id, file and line",
		Long: `verify streams each rollout through the replay engine and runs the check
catalog (see ` + "`rollout explain`" + `). PATH is a file (.jsonl, .jsonl.zst), a directory
(walked for rollout-*.jsonl[.zst]; entries that cannot be read and FIFOs,
sockets or devices are reported as not analysed, exit 3, without being
opened; other *.jsonl files are named on stderr, not read) or - for standard
input. With no PATH it reads
$CODEX_HOME/sessions and $CODEX_HOME/archived_sessions (CODEX_HOME defaults to ~/.codex).

Settings come from .rollout.yaml, found from the working directory upward,
or from --config FILE; flags override it (docs/ci.md).`,
		Example: `  rollout verify fixtures/clean/envelope-legacy.jsonl
  rollout verify --format sarif=rollout.sarif --format text ~/.codex/sessions
  rollout verify --select ordinal/ --fail-on warning --jobs 4 sessions/
  rollout verify --write-baseline .rollout-baseline.json sessions/
  rollout verify --baseline .rollout-baseline.json --show-severity warning --statistics sessions/
  rollout verify --manifest manifest.jsonl --now T --since verify.json --format json=verify.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			if err := opts.applyConfig(cmd.Flags()); err != nil {
				return err
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runVerify(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.formats, "format", nil, "report format: "+report.FormatHelp(report.DocVerify)+", or FORMAT=FILE (repeatable; parquet=DIR writes tables into DIR)")
	addOutput(f, &opts.output, "the report of the --format that names no FILE")
	addSourceRoot(f, &opts.sourceRoot)
	f.StringVar(&opts.failOn, "fail-on", "error", "exit 1 on findings at or above this severity: error|warning|info|never")
	f.StringSliceVar(&opts.selectRules, "select", nil, "only these rules or areas (e.g. ordinal/,item/missing-id)")
	f.StringSliceVar(&opts.ignoreRules, "ignore", nil, "skip these rules or areas")
	opts.addMaxLineBytes(f, "longer lines are kept and reported")
	f.IntVar(&opts.maxFindings, "max-findings-per-rule", checks.DefaultMaxFindingsPerRule, "per file and rule, findings listed in full; the rest are counted in one summary finding (0: no limit)")
	opts.addHandoffCap(f, "handoff/* rules")
	f.IntVar(&opts.jobs, "jobs", runtime.NumCPU(), "files verified in parallel (output is identical for any value)")
	opts.addShard(f, "files", "")
	opts.addFilesFrom(f)
	opts.addManifest(f)
	f.StringVar(&opts.color, "color", "auto", "colour: auto|always|never (NO_COLOR disables auto)")
	f.Var(&opts.now, "now", "judge liveness at this RFC 3339 time instead of the clock (an unanswered call of a file written less than an hour before is in progress)")
	opts.addForce(f, forceReadFiles)
	opts.addThreads(f, "also verify")
	f.StringVar(&opts.since, "since", "", "reuse the results of the previous run's JSON report `REPORT` for the files stored as it recorded them (size and version); read the others (docs/scale.md)")
	f.StringVar(&opts.configPath, "config", "", "read settings from FILE instead of the .rollout.yaml found from the working directory upward")
	f.StringVar(&opts.baseline, "baseline", "", "report only findings not recorded in FILE (see --write-baseline)")
	f.StringVar(&opts.writeBaseline, "write-baseline", "", "record every finding in FILE as accepted, then report as with --baseline FILE")
	f.BoolVar(&opts.quiet, "quiet", false, "show only findings at or above --fail-on, and no progress line")
	f.StringVar(&opts.showSeverity, "show-severity", "info", "show only findings at or above this severity: error|warning|info")
	f.BoolVar(&opts.statistics, "statistics", false, "add counts of the findings shown, by rule and severity (text and json)")
	return cmd
}

// validate checks the options and parses each flag once, into the fields
// the run reads (outputs, failOnSev, showSev, filter, shardPart).
func (o *verifyOptions) validate() error {
	var err error
	if o.failOnSev, err = parseFailOn(o.failOn); err != nil {
		return err
	}
	if len(o.formats) == 0 {
		o.formats = []string{report.DefaultFormat(report.DocVerify)}
	}
	if o.outputs, err = parseOutputs(report.DocVerify, o.formats, o.output); err != nil {
		return err
	}
	if o.jobs < 1 {
		return usageError("use --jobs 1 or more", "invalid --jobs %d", o.jobs)
	}
	if err := o.validateLimits(); err != nil {
		return err
	}
	if o.maxFindings < 0 {
		return usageError("use 0 for no limit", "invalid --max-findings-per-rule %d", o.maxFindings)
	}
	if o.shardPart, err = parseShardFlag(o.shard); err != nil {
		return err
	}
	if o.color != "auto" && o.color != "always" && o.color != "never" {
		return usageError("use --color auto|always|never", "invalid --color %q", o.color)
	}
	if o.showSev, err = checks.ParseSeverity(o.showSeverity); err != nil {
		return usageError("use --show-severity error|warning|info", "invalid --show-severity %q", o.showSeverity)
	}
	if o.filter, err = checks.NewFilter(o.selectRules, o.ignoreRules); err != nil {
		return ruleError(err)
	}
	return nil
}

// runVerify analyses the files on a pool of workers and hands each, in
// report order, to the policy's steps and then to every report.
func runVerify(ctx context.Context, a *app, o *verifyOptions) error {
	in, err := o.resolve(a)
	if err != nil {
		return err
	}
	if err := o.checkOutputs(in.paths); err != nil {
		return err
	}
	pipe, err := o.pipeline()
	if err != nil {
		return err
	}
	inputs := policy.Targets(in.paths, in.unusable, in.described)
	bar := progress.New(a.io.Err, "verifying", in.paths, showProgress(a, o.quiet))
	settings, err := o.settings()
	if err != nil {
		return err
	}
	prev, err := o.previous(a, in, settings)
	if err != nil {
		return err
	}
	run := &result.Report{Tool: "rollout", Version: version(), Command: "verify", Notes: in.notes,
		Settings: settings, Shard: o.shardPart}
	root, err := sourceRoot(o.sourceRoot)
	if err != nil {
		return err
	}
	ro := report.Options{FailOn: o.failOnSev, Statistics: o.statistics, SourceRoot: root}
	reports := report.OpenOutputs(o.reportOutputs(), run, o.outputOptions(a, ro, bar.Writer(a.io.Out)))
	if err := reports.Err(); err != nil {
		reports.Discard()
		return reportsError(err)
	}
	var messages fileMessages
	emit := func(i int, out policy.Input) {
		out.Named = in.named[inputs[i].Path]
		messages.add(inputs[i].Order, out)
		reports.File(pipe.File(out))
	}
	lin := lineagesOf(in)
	opts := checks.Options{MaxLineBytes: o.maxLineBytes, MaxFindingsPerRule: o.maxFindings, HandoffCap: o.handoffCap, Now: o.now.time(), Force: o.force, OnRead: bar.Add,
		Lineage: lin.ancestry}
	policy.Analyse(inputs, o.jobs, a.io.In, opts, pipe.NeedsHashes(), prev.Reuser(), bar.Step, emit)
	bar.Finish()
	if prev != nil {
		printf(a.io.Err, "--since: %s", prev.Summary(len(in.paths)))
	}
	run.Notes = append(run.Notes, lin.Notes()...)
	messages.write(a.io.Err)
	run.Suppressed, run.Hidden = pipe.Suppressed(), pipe.Hidden()
	if err := o.saveBaseline(a, pipe); err != nil {
		reports.Discard()
		return err
	}
	if err := reportsError(reports.Close()); err != nil {
		return err
	}
	if code := verifyExitCode(pipe.Status()); code != exitOK {
		return silentExit(code)
	}
	return nil
}

// fileMessages are the messages about files, written to stderr in input
// order after the run.
type fileMessages []fileMessage

type fileMessage struct {
	order int
	text  string
}

// add says why a file could not be analysed, or not to its end.
func (m *fileMessages) add(order int, in policy.Input) {
	say := func(kind, format string, args ...any) {
		*m = append(*m, fileMessage{order, msgLine(kind, format, args...)})
	}
	var ie *reconstruct.InternalError
	switch {
	case in.Err == nil:
	case errors.As(in.Err, &ie):
		say("internal error", "%s:%d: %v", ie.Path, ie.Line, ie.Value)
	case in.Named:
		say("error", "%v", in.Err)
		if hint := inputHint(in.Err); hint != "" {
			say("hint", "%s", hint)
		}
	default:
		say("error", "%v", in.Err)
	}
}

func (m fileMessages) write(w io.Writer) {
	slices.SortStableFunc(m, func(x, y fileMessage) int { return cmp.Compare(x.order, y.order) })
	for _, msg := range m {
		fmt.Fprint(w, msg.text)
	}
}

// settings are what the report records of the options that change what
// it lists, so that merge refuses shards run differently.
func (o *verifyOptions) settings() (*result.Settings, error) {
	s := &result.Settings{Select: nonNil(o.selectRules), Ignore: nonNil(o.ignoreRules), PerPathIgnores: map[string][]string{},
		ShowSeverity: o.shown().String(), MaxLineBytes: o.maxLineBytes, MaxFindingsPerRule: o.maxFindings,
		HandoffCap: o.handoffCap, Force: o.force}
	if o.cfg != nil && o.cfg.PerPathIgnores != nil {
		s.PerPathIgnores = o.cfg.PerPathIgnores
	}
	if o.now.set {
		s.Now = o.now.t.Format(time.RFC3339Nano)
	}
	switch {
	case o.writeBaseline != "":
		s.Baseline = "written"
	case o.baseline != "":
		data, err := os.ReadFile(o.baseline)
		if err != nil {
			return nil, usageError("", "reading the baseline: %v", err)
		}
		s.Baseline = fmt.Sprintf("sha256:%x", sha256.Sum256(data))
	}
	return s, nil
}

// previous reads --since, the report of the previous run, whose results
// hold for the files unchanged since (internal/derive/incremental); nil
// without --since.
func (o *verifyOptions) previous(a *app, in *verifyInputs, s *result.Settings) (*incremental.Previous, error) {
	if o.since == "" {
		return nil, nil
	}
	data, err := os.ReadFile(o.since)
	if err != nil {
		return nil, usageError("", "reading --since: %v", err)
	}
	rep, err := report.ReadJSON(data)
	if err != nil {
		return nil, usageError("--since reads a report of verify --format json", "--since %s: %v", o.since, err)
	}
	prev, err := incremental.New(rep, incremental.Run{Version: version(), Settings: s, FailOn: o.failOnSev, ThreadIDs: in.threadIDs})
	if err != nil {
		return nil, usageError("leave --since out to read every file", "--since %s: %v", o.since, err)
	}
	if n := prev.Note(); n != "" {
		notef(a.io.Err, "--since: %s", n)
	}
	return prev, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fileErrorCode is the exit code of a named file that could not be read
// (policy.ReadStatus).
func fileErrorCode(err error) int { return verifyExitCode(policy.ReadStatus(err)) }

// checkOutputs refuses, before anything is read, a report file that is one
// of the inputs (or an input's quarantine or backup).
func (o *verifyOptions) checkOutputs(paths []string) error {
	if o.filesFrom != "" {
		paths = append(slices.Clone(paths), o.filesFrom)
	}
	return checkOutputsOf(paths, append(filesOf(o.outputs), o.writeBaseline)...)
}

// reportOutputs are the --format outputs, as report.OpenOutputs takes them.
func (o *verifyOptions) reportOutputs() []report.Output {
	outs := make([]report.Output, len(o.outputs))
	for i, out := range o.outputs {
		outs[i] = report.Output{Format: out.name, File: out.file}
	}
	return outs
}

// outputOptions are the report options with what --color, the terminal
// and GitHub Actions decide; stdout is where a report without a file goes.
func (o *verifyOptions) outputOptions(a *app, ro report.Options, stdout io.Writer) report.OutputOptions {
	return report.OutputOptions{Report: ro, Stdout: stdout,
		ColorStdout: a.io.useColor(o.color, a.io.OutIsTTY), ColorFile: o.color == "always",
		ViewPage: viewPath, StepSummary: os.Getenv("GITHUB_STEP_SUMMARY")}
}

// reportsError is the error of writing the reports: one bound for a file
// (or the step summary) is a usage error, whatever it wraps.
func reportsError(err error) error {
	if we := (*report.WriteError)(nil); errors.As(err, &we) && we.ToFile {
		return &exitError{code: exitUsage, err: err}
	}
	return err
}
