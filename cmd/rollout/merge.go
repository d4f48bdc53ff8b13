package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/derive/policy"
	"github.com/rollout-dev/rollout/internal/derive/result"
	"github.com/rollout-dev/rollout/internal/output/report"
)

type mergeOptions struct {
	reports    []string
	formats    []string
	output     string
	sourceRoot string
	failOn     string
	color      string
	statistics bool
}

func newMergeCmd(a *app) *cobra.Command {
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge REPORT.json...",
		Short: "Combine the JSON reports of sharded runs into one, in any format",
		Long: `merge reads the --format json reports of one run split with --shard K/N
(verify, or simulate-budget over many rollouts) and writes the report of the
whole run in any format, byte for byte what a single run over the same
inputs would have written. It refuses what would not be that report:
reports of different commands, versions or settings, a shard given twice,
a set with a shard missing (named), shards of different N, a whole-run
report (made without --shard) with another, a file in two reports.
- reads a report from standard input; a directory stands for the *.json
files in it (a container with no shell cannot glob verify-*.json).

For verify reports: --format as verify has it (FORMAT or FORMAT=FILE,
repeatable), --fail-on, --color and --statistics as verify has them; what
selects findings (--select, --ignore, --baseline, --show-severity, --quiet)
applies in the shards. merge exits 1 on findings at or above --fail-on, 3
when a report lists a file that was not analysed. For simulate-budget reports: --format
` + report.FormatHelp(report.DocFleet) + ` (or FORMAT=FILE).`,
		Example: `  for k in 1 2 3; do rollout verify --format json --shard $k/3 sessions/ > verify-$k.json; done
  rollout merge --format sarif=rollout.sarif --format text verify-*.json
  rollout merge --format csv budget-*.json`,
		Args: argsBetween(1, -1, "one or more JSON reports of verify or simulate-budget (files, directories of them, or - for standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.reports = args
			return runMerge(cmd.Context(), a, o)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.formats, "format", nil, "output format, or FORMAT=FILE (repeatable); default text")
	addOutput(f, &o.output, "the report of the --format that names no FILE")
	addSourceRoot(f, &o.sourceRoot)
	f.StringVar(&o.failOn, "fail-on", "error", "verify reports: exit 1 on findings at or above this severity: error|warning|info|never")
	f.StringVar(&o.color, "color", "auto", "verify reports: colour: auto|always|never (NO_COLOR disables auto)")
	f.BoolVar(&o.statistics, "statistics", false, "verify reports: add counts by rule and severity (text and json)")
	return cmd
}

// mergeHint is the hint of every refusal to merge.
const mergeHint = "merge the JSON reports of every shard of one run, each once, made with the same settings (docs/scale.md)"

func runMerge(ctx context.Context, a *app, o *mergeOptions) error {
	failOn, err := parseFailOn(o.failOn)
	if err != nil {
		return err
	}
	if o.reports, err = reportFiles(o.reports); err != nil {
		return err
	}
	if o.color != "auto" && o.color != "always" && o.color != "never" {
		return usageError("use --color auto|always|never", "invalid --color %q", o.color)
	}
	if strings.Count(strings.Join(o.reports, "\x00")+"\x00", "-\x00") > 1 {
		return usageError("", "standard input can be read once")
	}
	datas := make([][]byte, len(o.reports))
	command := ""
	for i, p := range o.reports {
		var err error
		if p == "-" {
			datas[i], err = io.ReadAll(a.io.In)
		} else {
			datas[i], err = os.ReadFile(p)
		}
		if err != nil {
			return usageError("", "reading %s: %v", p, err)
		}
		var head struct {
			Command string `json:"command"`
			Kind    string `json:"kind"`
		}
		if err := json.Unmarshal(datas[i], &head); err != nil {
			return usageError("merge reads the reports of --format json", "%s: not a JSON report: %v", p, err)
		}
		kind := head.Command
		if head.Command == "simulate-budget" && head.Kind != "fleet" {
			return usageError("merge reads simulate-budget reports made over many rollouts (a directory, --files-from or --shard)",
				"%s: a simulate-budget report of one rollout", p)
		}
		if kind != "verify" && kind != "simulate-budget" {
			return usageError("", "%s: a report of %q, not of verify or simulate-budget", p, head.Command)
		}
		if command != "" && kind != command {
			return usageError("merge the reports of one command at a time", "%s is a %s report, %s a %s report", p, kind, o.reports[0], command)
		}
		command = kind
	}
	if command == "verify" {
		return mergeVerify(a, o, failOn, datas)
	}
	return mergeBudget(a, o, datas)
}

// reportFiles replaces a directory by the *.json files directly in it, in
// name order.
func reportFiles(args []string) ([]string, error) {
	var files []string
	for _, p := range args {
		entries, err := os.ReadDir(p)
		if err != nil {
			files = append(files, p) // a file, or an error reading it names it
			continue
		}
		n := len(files)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".json") && !e.IsDir() {
				files = append(files, filepath.Join(p, e.Name()))
			}
		}
		if len(files) == n {
			return nil, usageError("name the directory the shards wrote their --format json reports to", "%s: no *.json file in it", p)
		}
	}
	return files, nil
}

func mergeVerify(a *app, o *mergeOptions, failOn checks.Severity, datas [][]byte) error {
	outputs, err := parseOutputs(report.DocVerify, o.formats, o.output)
	if err != nil {
		return err
	}
	if err := checkOutputsOf(o.reports, filesOf(outputs)...); err != nil {
		return err
	}
	vo := &verifyOptions{outputs: outputs, failOnSev: failOn, color: o.color}
	reps := make([]*result.Report, len(datas))
	for i, d := range datas {
		r, err := report.ReadJSON(d)
		if err != nil {
			return usageError("", "%s: %v", o.reports[i], err)
		}
		reps[i] = r
	}
	rep, err := result.Merge(reps, o.reports)
	if err != nil {
		return usageError(mergeHint, "%v", err)
	}
	root, err := sourceRoot(o.sourceRoot)
	if err != nil {
		return err
	}
	ropts := report.Options{FailOn: failOn, Statistics: o.statistics, SourceRoot: root}
	if err := reportsError(report.WriteOutputs(vo.reportOutputs(), rep, vo.outputOptions(a, ropts, a.io.Out))); err != nil {
		return err
	}
	if code := verifyExitCode(policy.ReportStatus(rep, failOn)); code != exitOK {
		return silentExit(code)
	}
	return nil
}

// mergeBudget merges the fleet reports of simulate-budget's shards
// (budget.MergeShards says what it refuses) and writes the whole run's.
func mergeBudget(a *app, o *mergeOptions, datas [][]byte) error {
	outs, err := parseOutputs(report.DocFleet, o.formats, o.output)
	if err != nil {
		return err
	}
	if err := refuseBinaryOnTerminal(a, report.DocFleet, outs, "write it to a file with --format png=FILE, or redirect standard output"); err != nil {
		return err
	}
	if err := checkOutputsOf(o.reports, filesOf(outs)...); err != nil {
		return err
	}
	fleets := make([]*budget.Fleet, len(datas))
	for i, d := range datas {
		if fleets[i], err = report.ReadFleet(d); err != nil {
			return usageError("", "%s: %v", o.reports[i], err)
		}
	}
	fleet, err := budget.MergeShards(o.reports, fleets)
	if errors.Is(err, budget.ErrFittedShards) {
		return usageError("fit once (simulate-budget --compact-at auto over all the rollouts, or one shard), then run the shards with --compact-at at the fitted value", "%v", err)
	}
	if err != nil {
		return usageError(mergeHint, "%v", err)
	}
	for _, out := range outs {
		if err := writeFleet(a, fleet, out); err != nil {
			return err
		}
	}
	return nil
}
