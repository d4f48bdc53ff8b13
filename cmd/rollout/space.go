package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/internal/derive/space"
	"github.com/rollout-dev/rollout/internal/output/progress"
	"github.com/rollout-dev/rollout/internal/output/report"
)

type spaceOptions struct {
	inputFlags
	quiet     bool
	format    string
	output    string
	out       reportOutput // --format and -o, parsed
	top       int
	minRepeat int
	coldAfter time.Duration
	jobs      int
	replayFlags
	keepTurns int
}

func newSpaceCmd(a *app, runF func(context.Context, *spaceOptions) error) *cobra.Command {
	opts := &spaceOptions{}
	var coldAfter string
	cmd := &cobra.Command{
		Use:   "space [PATH...]",
		Short: "Show where the bytes of rollouts are, and what each reclaim policy would free",
		Long: `space reads rollouts once and accounts for every byte: by record type, by JSON
path class (arrays collapsed to [], e.g.
compacted.replacement_history[].content[].image_url), in large strings that
occur more than once (count x size), per file, and per tree of a parent thread
with the sub-agents it spawned and the threads attached to it. It ends with what each reclaim policy would
free and what it gives up:

  compress                cold plain files (idle for --cold-after) as .jsonl.zst
                          (the size is a zstd estimate); gives up nothing
  superseded-checkpoints  the replacement_history of compactions that a later
                          compaction supersedes; gives up rolling back past
                          the later compaction (not counted when a rollback
                          follows the newest compaction)
  duplicate-exec-output   command output in item_completed events that
                          repeats the same call's tool output exactly; gives
                          up the output a client shows when it re-opens the
                          thread

PATH is as for verify; with no PATH it reads $CODEX_HOME/sessions and
$CODEX_HOME/archived_sessions. Nothing is modified.`,
		Example: `  rollout space
  rollout space --top 20 ~/.codex/sessions/2026/03
  rollout space --format csv -o space.csv ~/.codex`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.paths = args
			d, err := parseDays(coldAfter)
			if err != nil {
				return usageError("use e.g. --cold-after 7d, 36h or 0s", "invalid --cold-after %q", coldAfter)
			}
			opts.coldAfter = d
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runSpace(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.format, "format", report.FormatsOf(report.DocSpace)[0], "output format: "+report.FormatHelp(report.DocSpace))
	addOutput(f, &opts.output, "the report")
	addQuiet(f, &opts.quiet)
	f.IntVar(&opts.top, "top", space.DefaultTop, "rows per table")
	f.IntVar(&opts.minRepeat, "min-repeat", space.DefaultMinRepeat, "smallest string (bytes) tracked for repetition")
	f.StringVar(&coldAfter, "cold-after", "7d", "a file idle this long is cold (compress policy): 7d, 36h, 0s")
	f.IntVar(&opts.jobs, "jobs", runtime.NumCPU(), "files read in parallel (output is identical for any value)")
	opts.addFilesFrom(f)
	opts.addManifest(f)
	opts.addMaxLineBytes(f, "longer lines are counted unread")
	f.IntVar(&opts.keepTurns, "keep-turns", 20, "before-turn: the N of the estimate (rollbacks limited to the last N user turns)")
	opts.addForce(f, forceReadFiles)
	return cmd
}

// parseDays is time.ParseDuration plus a "d" (24h) unit.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.ParseFloat(n, 64)
		if err != nil || days < 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(days * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d < 0 {
		err = fmt.Errorf("negative duration %q", s)
	}
	return d, err
}

func (o *spaceOptions) validate() error {
	outs, err := parseOutputs(report.DocSpace, []string{o.format}, o.output)
	if err != nil {
		return err
	}
	o.out = outs[0]
	if o.keepTurns < 1 {
		return usageError("use --keep-turns 1 or more", "invalid --keep-turns %d", o.keepTurns)
	}
	if o.top < 1 {
		return usageError("use --top 1 or more", "invalid --top %d", o.top)
	}
	if o.minRepeat < 2 {
		return usageError("use --min-repeat 2 or more", "invalid --min-repeat %d", o.minRepeat)
	}
	if o.jobs < 1 {
		return usageError("use --jobs 1 or more", "invalid --jobs %d", o.jobs)
	}
	return o.validateLimits()
}

func runSpace(ctx context.Context, a *app, o *spaceOptions) error {
	in, err := o.resolve(a)
	if err != nil {
		return err
	}
	paths := in.paths
	if err := checkOutputsOf(paths, o.out.file); err != nil {
		return err
	}
	bar := progress.New(a.io.Err, "reading", paths, showProgress(a, o.quiet))
	now := time.Now()
	sum := space.NewSummary(o.top)
	defer sum.Close()
	sum.ColdAfter, sum.KeepTurns = o.coldAfter, o.keepTurns
	var status exitStatus
	var failed []report.SpaceFailure
	ro := space.ReadOptions{MinRepeat: o.minRepeat, Top: o.top, KeepTurns: o.keepTurns, ColdAfter: o.coldAfter,
		Now: now, MaxLineBytes: o.maxLineBytes, Force: o.force, OnRead: bar.Add}
	space.ReadAll(paths, a.io.In, ro, o.jobs, sum, bar.Step, func(path string, err error) {
		errorf(bar.Writer(a.io.Err), "%v", err)
		failed = append(failed, report.SpaceFailure{Path: path, Error: err.Error()})
		status.raise(exitIncomplete)
	})
	bar.Finish()
	homes := spaceHomes(o)
	for _, u := range homes {
		sum.Attach(home.New(u.Home).AttachedEdges())
	}
	doc := report.SpaceDoc{Summary: sum, Failed: failed, Homes: homes, Top: o.top}
	if err := writeOutput(a, o.out.file, "the report", func(w io.Writer) error {
		return report.Write(w, report.DocSpace, o.out.name, doc)
	}); err != nil {
		return err
	}
	return status.err()
}

// spaceHomes measures the state of the Codex homes space reads: the
// default home with no PATH, else each PATH that is a home or lies in one.
func spaceHomes(o *spaceOptions) []home.Usage {
	var dirs []string
	if len(o.paths) == 0 && o.filesFrom == "" && len(o.threads) == 0 {
		if d, err := codexHome(); err == nil && fileExists(d) {
			dirs = append(dirs, d)
		}
	}
	return home.UsageOf(dirs, o.paths)
}
