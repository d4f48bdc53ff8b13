package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/output/progress"
	"github.com/rollout-dev/rollout/internal/output/report"
	"github.com/rollout-dev/rollout/reconstruct"
)

// fleetMode: simulate-budget reports one rollout as before when given
// exactly one file (or -) and nothing that names a set of rollouts.
func (o *simulateBudgetOptions) fleetMode() bool {
	if len(o.paths) != 1 || len(o.threads) > 0 || o.filesFrom != "" || o.manifest != "" || o.shard != "" || o.since != "" || o.until != "" || o.perSession {
		return true
	}
	if objstore.IsURI(o.paths[0]) {
		_, err := objstore.Stat(context.Background(), o.paths[0])
		return err != nil // not one object: a prefix, listed
	}
	return isDir(o.paths[0])
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
	bar := progress.New(a.io.Err, "simulating", in.paths, showProgress(a, o.quiet))
	bar.CountBytesOnly()
	errW := bar.Writer(a.io.Err)
	run := budget.FleetRun{Paths: in.paths, Settings: o.settings, Since: since, Until: until,
		SinceText: o.since, UntilText: o.until, PerSession: o.perSession, Jobs: o.jobs,
		// Each rollout is read alone; Ancestry resolves its lineage.
		Replay: o.replayOptions("", nil), Ancestry: lin.ancestry, Stdin: a.io.In,
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
	run.Replay.Open.OnRead = bar.Add
	fleet, err := runFleet(a, run, o.series)
	bar.Finish()
	if err != nil {
		return err
	}
	fleet.Shard = o.shardPart
	lin.sayNotes(a)
	if err := writeFleet(a, fleet, o.out); err != nil {
		return err
	}
	return status.err()
}

// runFleet runs the simulation, writing the rows of --series to the file
// series names ("" for none) as the rollouts are counted.
func runFleet(a *app, run budget.FleetRun, series string) (*budget.Fleet, error) {
	if series == "" {
		return budget.RunFleet(run)
	}
	var fleet *budget.Fleet
	err := writeOutput(a, series, "--series", func(w io.Writer) error {
		rows := report.NewSeries(w)
		run.Series = rows.Add
		var err error
		if fleet, err = budget.RunFleet(run); err != nil {
			return err
		}
		return rows.Flush()
	})
	return fleet, err
}

// writeFleet writes a fleet in one format, to standard output or a file.
func writeFleet(a *app, f *budget.Fleet, out reportOutput) error {
	if format, _ := report.LookupFormat(report.DocFleet, out.name); format.Dir {
		if err := report.WriteDir(report.DocFleet, out.name, out.file, f); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing %s to %s: %w", out.name, out.file, err)}
		}
		return nil
	}
	return writeOutput(a, out.file, out.name, func(w io.Writer) error { return report.Write(w, report.DocFleet, out.name, f) })
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
	if o.filesFrom != "" {
		paths = append(slices.Clone(paths), o.filesFrom)
	}
	return checkOutputsOf(paths, o.out.file, o.series)
}
