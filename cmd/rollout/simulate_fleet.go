package main

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/edit/outfile"
	"github.com/rollout-dev/rollout/internal/output/chart"
	"github.com/rollout-dev/rollout/reconstruct"
)

// fleetMode: simulate-budget reports one rollout as before when given
// exactly one file (or -) and nothing that names a set of rollouts.
func (o *simulateBudgetOptions) fleetMode() bool {
	if len(o.paths) != 1 || o.filesFrom != "" || o.shard != "" || o.since != "" || o.until != "" || o.perSession {
		return true
	}
	fi, err := os.Stat(o.paths[0])
	return err == nil && fi.IsDir()
}

// replayOptions is how simulate-budget reads each rollout (its lineage
// aside: see budget.FleetRun.Ancestry).
func (o *simulateBudgetOptions) replayOptions() reconstruct.ReplayOptions {
	return o.replayLimits.replayOptions("", o.force, nil)
}

func runSimulateFleet(ctx context.Context, a *app, o *simulateBudgetOptions) error {
	// With a shared ledger, a shard takes whole groups of linked threads
	// (by their root's id), which are only known once every rollout's
	// session_meta is read: budget.RunFleet shards them.
	byGroup := o.shard != "" && o.settings.Ledger > 0
	sel := o.inputFlags
	if byGroup {
		sel.shardPart = nil
	}
	in, err := sel.resolve(a)
	if err != nil {
		return err
	}
	for _, n := range in.notes {
		notef(a.io.Err, "%s", n)
	}
	lin := lineagesOf(in)
	if err := o.checkOutputs(in.paths); err != nil {
		return err
	}
	since, until, err := o.timeRange()
	if err != nil {
		return err
	}
	var status exitStatus
	raise := status.raise
	// Bytes only: a run may read a rollout more than once (the fit of
	// --compact-at auto, the session metas of a shared ledger).
	progress := newProgress(a.io, "simulating", in.paths, showProgress(a, o.quiet))
	progress.files = 0
	errW := progress.writer(a.io.Err)
	run := budget.FleetRun{Paths: in.paths, Settings: o.settings, Since: since, Until: until,
		SinceText: o.since, UntilText: o.until, PerSession: o.perSession, Jobs: o.jobs,
		Replay: o.replayOptions(), Ancestry: lin.ancestry, Stdin: a.io.In,
		Problem: func(p budget.FleetProblem) {
			var ie *reconstruct.InternalError
			switch {
			case errors.As(p.Err, &ie):
				internalf(errW, "%s:%d: %v", ie.Path, ie.Line, ie.Value)
				raise(exitInternal)
			case p.Err != nil:
				errorf(errW, "%v", p.Err)
				raise(fileErrorCode(p.Err))
			default:
				warningf(errW, "%s", p.Warning)
				if p.Incomplete {
					raise(exitIncomplete)
				}
			}
		}}
	if byGroup {
		run.InShard = o.shardPart.Contains
	}
	run.Replay.Open.OnRead = progress.add
	var fleet *budget.Fleet
	simulateAll := func(series io.Writer) error {
		run.Series = series
		fleet, err = budget.RunFleet(run)
		return err
	}
	if o.series != "" {
		err = writeOutput(a, o.series, "--series", simulateAll)
	} else {
		err = simulateAll(nil)
	}
	progress.finish()
	if err != nil {
		return err
	}
	fleet.Shard = o.shardPart
	lin.sayNotes(a)
	if err := writeFleet(a, fleet, o.format, o.output); err != nil {
		return err
	}
	return status.err()
}

// writeFleet renders a fleet in a format, to standard output or a file.
func writeFleet(a *app, f *budget.Fleet, format, output string) error {
	write := func(w io.Writer) error {
		switch format {
		case "json":
			return f.WriteJSON(w)
		case "csv":
			return f.WriteCSV(w)
		case "svg", "png":
			return chart.WriteFleet(w, f, format)
		}
		return f.WriteTable(w)
	}
	return writeOutput(a, output, format, write)
}

// timeRange parses --since and --until: RFC 3339, or a date (UTC
// midnight). --until is exclusive.
func (o *simulateBudgetOptions) timeRange() (since, until time.Time, err error) {
	parse := func(flag, v string) (time.Time, error) {
		if v == "" {
			return time.Time{}, nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
			if t, err := time.Parse(layout, v); err == nil {
				return t, nil
			}
		}
		return time.Time{}, usageError("use a date (2026-05-04) or an RFC 3339 time (2026-05-04T09:00:00Z)", "invalid --%s %q", flag, v)
	}
	if since, err = parse("since", o.since); err != nil {
		return
	}
	until, err = parse("until", o.until)
	return
}

func isExitError(err error) bool {
	var ee *exitError
	return errors.As(err, &ee)
}

// checkOutputs refuses an output (-o, --series) that is one of the inputs.
func (o *simulateBudgetOptions) checkOutputs(paths []string) error {
	var inputs outfile.Inputs
	inputs.Add(paths...)
	if o.filesFrom != "" {
		inputs.Add(o.filesFrom)
	}
	for _, out := range []string{o.output, o.series} {
		if err := inputs.Check(out); err != nil {
			return outputConflict(err)
		}
	}
	return nil
}
