package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/report"
)

type homeOptions struct {
	dir         string
	formats     []string
	output      string
	sourceRoot  string
	failOn      string
	selectRules []string
	ignoreRules []string
	color       string
	replayFlags

	report    *verifyOptions // the report outputs, shared with verify's printers
	failOnSev checks.Severity
	filter    checks.Filter
}

func newHomeCmd(a *app, runF func(context.Context, *homeOptions) error) *cobra.Command {
	opts := &homeOptions{}
	cmd := &cobra.Command{
		Use:   "home [CODEX_HOME]",
		Short: "Check a Codex home: its SQLite index and projection, writer locks and migration leftovers against its rollouts",
		Long: `home checks what a Codex home keeps beside its rollout files against the files:
the threads index of state_N.sqlite (what the resume picker lists), the history
projection of thread_history_N.sqlite and its byte cursor, the writer locks in
thread-writer-locks/ and what a crashed migration leaves. Each finding says
what Codex will do and the remedy (rules home/..., see ` + "`rollout explain home/`" + `).

The databases are read read-only, in short transactions with a busy timeout,
so a running Codex is neither blocked nor disturbed; nothing is written.
CODEX_HOME defaults to $CODEX_HOME, then ~/.codex. Report formats, --fail-on,
--select and --ignore are verify's; exit codes too (3: a database could not
be read, see the notes).`,
		Example: `  rollout home
  rollout home ~/.codex --format json=home.json --format text
  rollout home --select home/projection-past-eof,home/writer-lock-held /srv/codex`,
		Args: argsBetween(0, 1, "at most one Codex home"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.dir = args[0]
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runHome(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&opts.formats, "format", nil, "report format: "+report.FormatHelp(report.DocHome)+", or FORMAT=FILE (repeatable)")
	addOutput(f, &opts.output, "the report of the --format that names no FILE")
	addSourceRoot(f, &opts.sourceRoot)
	f.StringVar(&opts.failOn, "fail-on", "error", "exit 1 on findings at or above this severity: error|warning|info|never")
	f.StringSliceVar(&opts.selectRules, "select", nil, "only these home rules (e.g. home/projection-past-eof)")
	f.StringSliceVar(&opts.ignoreRules, "ignore", nil, "skip these home rules")
	f.StringVar(&opts.color, "color", "auto", "colour: auto|always|never (NO_COLOR disables auto)")
	opts.addMaxLineBytes(f, "longer lines are not compared with the projection")
	return cmd
}

func (o *homeOptions) validate() error {
	if err := o.validateLimits(); err != nil {
		return err
	}
	var err error
	if o.failOnSev, err = parseFailOn(o.failOn); err != nil {
		return err
	}
	o.report = &verifyOptions{formats: o.formats, color: o.color}
	if o.report.outputs, err = parseOutputs(report.DocHome, o.formats, o.output); err != nil {
		return err
	}
	if o.color != "auto" && o.color != "always" && o.color != "never" {
		return usageError("use --color auto|always|never", "invalid --color %q", o.color)
	}
	if o.filter, err = checks.NewFilter(o.selectRules, o.ignoreRules); err != nil {
		return ruleError(err)
	}
	return nil
}

func runHome(ctx context.Context, a *app, o *homeOptions) error {
	dir := o.dir
	if dir == "" {
		var err error
		if dir, err = codexHome(); err != nil {
			return err
		}
	}
	if err := home.New(dir).NotAHome(); err != nil {
		return usageError("name a Codex home directory (the one that holds sessions/), or set CODEX_HOME", "%v", err)
	}
	if err := o.report.checkOutputs(nil); err != nil {
		return err
	}
	rep, err := home.Check(home.New(dir), home.CheckOptions{MaxLineBytes: o.maxLineBytes})
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("checking %s: %w", dir, err)}
	}
	run := &result.Report{Tool: "rollout", Version: version(), Command: "home", Notes: rep.Notes,
		Checked: fmt.Sprintf("%d rollouts, %d threads rows", rep.Files, rep.Threads)}
	var status exitStatus
	var findings []checks.Finding
	for _, ob := range rep.Observations {
		fd, ok := checks.FindingOf(ob.Path, ob.Observation)
		if !ok || !o.filter.Keep(fd.Rule) {
			continue
		}
		findings = append(findings, fd)
		if fd.Severity >= o.failOnSev {
			status.raise(exitFindings)
		}
	}
	if rep.Incomplete {
		status.raise(exitIncomplete)
	}
	root, err := sourceRoot(o.sourceRoot)
	if err != nil {
		return err
	}
	ro := report.Options{FailOn: o.failOnSev, SourceRoot: root}
	reports := report.OpenOutputs(o.report.reportOutputs(), run, o.report.outputOptions(a, ro, a.io.Out))
	if err := reports.Err(); err != nil {
		reports.Discard()
		return reportsError(err)
	}
	for _, fr := range result.FilesOf(findings) {
		reports.File(fr)
	}
	if err := reportsError(reports.Close()); err != nil {
		return err
	}
	return status.err()
}
