package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/base/config"
	"github.com/rollout-dev/rollout/internal/base/pool"
	"github.com/rollout-dev/rollout/internal/derive/policy"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/spf13/cobra"
)

type verifyOptions struct {
	inputFlags
	formats     []string
	output      string // -o: the file of the format that names none
	sourceRoot  string
	failOn      string
	selectRules []string
	ignoreRules []string
	replayLimits
	maxFindings int
	jobs        int
	color       string
	now         nowFlag
	force       bool
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
  rollout verify --baseline .rollout-baseline.json --show-severity warning --statistics sessions/`,
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
	f.StringArrayVar(&opts.formats, "format", nil, "report format: "+strings.Join(report.Formats(), "|")+", or FORMAT=FILE (repeatable)")
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
	f.StringVar(&opts.color, "color", "auto", "colour: auto|always|never (NO_COLOR disables auto)")
	f.Var(&opts.now, "now", "judge liveness at this RFC 3339 time instead of the clock (an unanswered call of a file written less than an hour before is in progress)")
	addForce(f, &opts.force, forceReadFiles)
	opts.addThreads(f, "also verify")
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
		o.formats = []string{"text"}
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

// verifyInput is one file to verify, in report order (by path).
type verifyInput struct {
	path string
	// order is the position in the input order, that of the messages on
	// stderr.
	order int
	// unusable is set for an entry a walk could not use: it is reported as
	// not analysed, never opened.
	unusable error
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
	inputs := reportOrder(in)
	progress := newProgress(a.io, "verifying", in.paths, showProgress(a, o.quiet))
	settings, err := o.settings()
	if err != nil {
		return err
	}
	run := &result.Report{Tool: "rollout", Version: version(), Command: "verify", Notes: in.notes,
		Settings: settings, Shard: o.shardPart}
	root, err := sourceRoot(o.sourceRoot)
	if err != nil {
		return err
	}
	reports := openReports(a, o, run, report.Options{FailOn: o.failOnSev, Statistics: o.statistics, SourceRoot: root}, progress)
	var messages fileMessages
	emit := func(i int, out policy.Input) {
		out.Named = in.named[inputs[i].path]
		messages.add(inputs[i].order, out)
		reports.file(pipe.File(out))
	}
	lin := lineagesOf(in)
	opts := checks.Options{MaxLineBytes: o.maxLineBytes, MaxFindingsPerRule: o.maxFindings, HandoffCap: o.handoffCap, Now: o.now.time(), Force: o.force, OnRead: progress.add,
		Lineage: lin.ancestry}
	analyse(inputs, o.jobs, a.io.In, opts, pipe.NeedsHashes(), progress.step, emit)
	progress.finish()
	run.Notes = append(run.Notes, lin.Notes()...)
	messages.write(a.io.Err)
	run.Suppressed, run.Hidden = pipe.Suppressed(), pipe.Hidden()
	if err := o.saveBaseline(a, pipe); err != nil {
		reports.discard()
		return err
	}
	if err := reports.close(); err != nil {
		return err
	}
	if code := verifyExitCode(pipe.Status()); code != exitOK {
		return silentExit(code)
	}
	return nil
}

// reportOrder lists the inputs by path, the order of the report:
// verifying them in that order lets each file go to the printers as soon
// as the ones before it are done.
func reportOrder(in *verifyInputs) []verifyInput {
	inputs := make([]verifyInput, 0, len(in.paths)+len(in.unusable))
	for i, p := range in.paths {
		inputs = append(inputs, verifyInput{path: p, order: i})
	}
	for i, e := range in.unusable {
		inputs = append(inputs, verifyInput{path: e.Path, order: len(in.paths) + i, unusable: e})
	}
	slices.SortStableFunc(inputs, func(x, y verifyInput) int { return strings.Compare(x.path, y.path) })
	return inputs
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// fileErrorCode is the exit code of a named file that could not be read
// (policy.ReadStatus).
func fileErrorCode(err error) int { return verifyExitCode(policy.ReadStatus(err)) }

// analyse verifies files on a pool of workers and hands each outcome to
// emit, on the calling goroutine, in input order: file i as soon as files
// 0..i-1 have been emitted, so the output does not depend on --jobs.
// Workers run ahead of emit by at most aheadFiles files, and beyond jobs
// files only while the outcomes waiting hold fewer than aheadFindings
// findings: memory follows the largest files, not the run.
// With hash set, each result also carries the hashes of the records its
// findings are on (for baseline fingerprints).
func analyse(inputs []verifyInput, jobs int, stdin io.Reader, opts checks.Options, hash bool, step func(), emit func(int, policy.Input)) {
	pool.InOrder(len(inputs), jobs, aheadFiles, findingsOf, aheadFindings, func(i int) policy.Input {
		out := analyseInput(inputs[i], stdin, opts, hash)
		if inputs[i].unusable == nil {
			step() // progress counts the files read
		}
		return out
	}, emit)
}

// How far the workers may run ahead of the file being emitted (analyse).
const (
	aheadFiles    = 256
	aheadFindings = 1 << 16
)

func findingsOf(out policy.Input) int {
	if out.Result == nil {
		return 0
	}
	return len(out.Result.Findings)
}

// analyseInput verifies one input and keeps of the result what the report
// needs.
func analyseInput(in verifyInput, stdin io.Reader, opts checks.Options, hash bool) policy.Input {
	if in.unusable != nil {
		return policy.Input{Path: in.path, Err: in.unusable}
	}
	out := analyseOne(in.path, stdin, opts)
	if hash && out.Err == nil {
		out.Hashes = policy.HashRecords(in.path, out.Result, opts.MaxLineBytes)
	}
	out.Result = slim(out.Result)
	return out
}

// slim keeps of a result what the report needs (findings, a few summary
// fields) and lets the reconstructed state go: holding every file's state
// until the report was printed cost about 130 KB per file.
func slim(res *checks.Result) *checks.Result {
	if res == nil {
		return nil
	}
	st := res.State
	return &checks.Result{Path: res.Path, Records: res.Records, Findings: slices.Clip(res.Findings),
		State: &reconstruct.State{Era: st.Era, HistoryMode: st.HistoryMode, CLIVersion: st.CLIVersion, ThreadID: st.ThreadID}}
}

// analyseOne runs the checks on one file; a panic outside the engine's own
// recovery (opening the file, say) still becomes an internal error for that
// file instead of killing the other workers.
func analyseOne(path string, stdin io.Reader, opts checks.Options) (out policy.Input) {
	defer func() {
		if v := recover(); v != nil {
			out = policy.Input{Path: path, Err: &reconstruct.InternalError{Path: path, Value: v, Stack: debug.Stack()}}
		}
	}()
	res, err := checks.Run(path, stdin, opts)
	return policy.Input{Path: path, Result: res, Err: err}
}

// checkOutputs refuses, before anything is read, a report file that is one
// of the inputs (or an input's quarantine or backup).
func (o *verifyOptions) checkOutputs(paths []string) error {
	files := o.writeBaseline != "" && o.writeBaseline != "-"
	for _, out := range o.outputs {
		files = files || out.file != "" && out.file != "-"
	}
	if !files {
		return nil // nothing is written but standard output: no input to stat
	}
	var inputs outfile.Inputs
	inputs.Add(paths...)
	if o.filesFrom != "" {
		inputs.Add(o.filesFrom)
	}
	for _, out := range o.outputs {
		if out.file != "" {
			if err := inputs.Check(out.file); err != nil {
				return outputConflict(err)
			}
		}
	}
	if o.writeBaseline != "" {
		if err := inputs.Check(o.writeBaseline); err != nil {
			return outputConflict(err)
		}
	}
	return nil
}

// reportOutputs are the reports of a run being written, one Stream per
// --format, plus the step summary of --format github in GitHub Actions.
// A report that fails stops being written; the others go on.
type reportOutputs struct {
	outs []*reportStream
}

type reportStream struct {
	name   string
	stream *report.Stream
	file   *outfile.File // nil for standard output
	bw     *bufio.Writer
	err    error
	// wrap says what failed, with which exit code.
	wrap func(error) error
	// closeFile closes what the report is written to, when the command
	// opened it (the step summary).
	closeFile func() error
}

// openReports starts every requested report. Report files are written to
// a temporary file renamed over the target on close (outfile), so nothing
// at the path changes before the run is done.
func openReports(a *app, o *verifyOptions, run *result.Report, ropts report.Options, p *progress) *reportOutputs {
	rs := &reportOutputs{}
	github := false
	for _, out := range o.outputs {
		name, file := out.name, out.file
		github = github || name == "github"
		ro := ropts
		r := &reportStream{name: name}
		rs.outs = append(rs.outs, r)
		var w io.Writer
		if file == "" {
			ro.Color = name == "text" && a.io.useColor(o.color, a.io.OutIsTTY)
			if name == "html" {
				ro.Links = htmlLinks(".")
			}
			r.wrap = func(err error) error { return fmt.Errorf("writing %s report: %w", name, err) }
			w = p.writer(a.io.Out)
		} else {
			ro.Color = o.color == "always"
			if name == "html" {
				ro.Links = htmlLinks(filepath.Dir(file))
			}
			r.wrap = func(err error) error {
				return &exitError{code: exitUsage, err: fmt.Errorf("writing %s report to %s: %w", name, file, err)}
			}
			if r.file, r.err = outfile.Create(file, outfile.Options{}); r.err != nil {
				continue
			}
			r.bw = bufio.NewWriterSize(r.file, 64<<10)
			w = r.bw
		}
		r.stream, r.err = report.NewStream(name, w, run, ro)
	}
	if summary := os.Getenv("GITHUB_STEP_SUMMARY"); github && summary != "" {
		r := &reportStream{name: "markdown", wrap: func(err error) error {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing the step summary to %s: %w", summary, err)}
		}}
		w := &stepSummary{path: summary}
		r.bw, r.closeFile = bufio.NewWriterSize(w, 64<<10), w.close
		r.bw.WriteString("### rollout verify\n\n")
		r.stream, r.err = report.NewStream("markdown", r.bw, run, ropts)
		rs.outs = append(rs.outs, r)
	}
	return rs
}

// file hands one normalized file to every report still being written.
func (rs *reportOutputs) file(f *result.FileResult) {
	for _, r := range rs.outs {
		if r.err == nil {
			r.err = r.stream.File(f)
		}
	}
}

// close completes every report and returns the first error, in the order
// of --format (the step summary last).
func (rs *reportOutputs) close() error {
	var first error
	for _, r := range rs.outs {
		if r.err == nil {
			r.err = r.stream.Close()
		} else if r.stream != nil {
			r.stream.Discard()
		}
		if r.err == nil && r.bw != nil {
			r.err = r.bw.Flush()
		}
		if r.file != nil {
			if r.err == nil {
				r.err = r.file.Commit()
			} else {
				r.file.Abort()
			}
		}
		if r.closeFile != nil {
			if err := r.closeFile(); r.err == nil {
				r.err = err
			}
		}
		if r.err != nil && first == nil {
			first = r.wrap(r.err)
		}
	}
	return first
}

// discard drops every report: report files are left as they were.
func (rs *reportOutputs) discard() {
	for _, r := range rs.outs {
		if r.stream != nil {
			r.stream.Discard()
		}
		if r.file != nil {
			r.file.Abort()
		}
	}
}

// writeReports writes a whole report in every requested format (merge).
func writeReports(a *app, o *verifyOptions, rep *result.Report, ropts report.Options) error {
	rs := openReports(a, o, rep, ropts, &progress{})
	for i := range rep.Files {
		rs.file(&rep.Files[i])
	}
	return rs.close()
}

// stepSummary appends to the job summary file GitHub Actions names in
// $GITHUB_STEP_SUMMARY (other steps write to it too: it is appended to,
// never replaced), opened on the first write.
type stepSummary struct {
	path string
	f    *os.File
}

func (s *stepSummary) Write(p []byte) (int, error) {
	if s.f == nil {
		f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			return 0, err
		}
		s.f = f
	}
	return s.f.Write(p)
}

func (s *stepSummary) close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// htmlLinks are the links of an HTML report written in dir: to each
// rollout, and to the page `rollout view` wrote beside it, if there is one.
func htmlLinks(dir string) report.Links {
	return report.Links{
		File: func(path string) string {
			if path == "-" {
				return ""
			}
			return report.RelativeLink(dir, path)
		},
		View: func(path string) string {
			if path == "-" || !fileExists(viewPath(path)) {
				return ""
			}
			return report.RelativeLink(dir, viewPath(path))
		},
	}
}
