package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/rollout-dev/rollout/budget"
	"github.com/rollout-dev/rollout/chart"
	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/outfile"
	"github.com/rollout-dev/rollout/internal/pool"
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

// evidence streams one rollout through the replay engine and keeps the
// budget evidence; oversized counts the lines over --max-line-bytes.
func (o *simulateBudgetOptions) evidence(a *app, path string) (ev *budget.Evidence, oversized int, err error) {
	c := budget.NewCollector()
	st, err := reconstruct.ReplayFile(path, a.io.In, checks.Options{MaxLineBytes: o.maxLineBytes, Force: o.force}.Replay(), c.Observe)
	if err != nil {
		return nil, 0, err
	}
	ev = c.Evidence(st)
	ev.Path = path
	return ev, st.Unread, nil
}

// sessionMeta reads only the first line: thread, parent and start.
func (o *simulateBudgetOptions) sessionMeta(a *app, path string) (thread, parent, started string, err error) {
	ro := checks.Options{MaxLineBytes: o.maxLineBytes, Force: o.force}.Replay()
	ro.StopAfterLine = 1
	st, err := reconstruct.ReplayFile(path, a.io.In, ro)
	if err != nil {
		return "", "", "", err
	}
	return st.ThreadID, st.ParentThreadID, st.StartedAt, nil
}

// fleetRun is the state of one fleet simulation.
type fleetRun struct {
	a            *app
	o            *simulateBudgetOptions
	s            budget.Settings
	fleet        *budget.Fleet
	series       *csv.Writer
	code         int
	mu           sync.Mutex
	since, until time.Time // --since, --until (zero: open)
	// reported names the rollouts already reported on standard error:
	// with --compact-at auto each is read twice, its problems said once.
	reported map[string]bool
}

// say writes one message to standard error, once per rollout, whole.
func (r *fleetRun) say(path, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported == nil {
		r.reported = map[string]bool{}
	}
	if path != "" && r.reported[path] {
		return
	}
	r.reported[path] = true
	fmt.Fprintf(r.a.io.Err, format, args...)
}

func (r *fleetRun) raise(c int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if exitPriority(c) > exitPriority(r.code) {
		r.code = c
	}
}

func (r *fleetRun) fileError(path string, err error) {
	var ie *reconstruct.InternalError
	if errors.As(err, &ie) {
		r.say(path, "rollout: internal error: %s:%d: %v\n", ie.Path, ie.Line, ie.Value)
		r.raise(exitInternal)
		return
	}
	r.say(path, "rollout: error: %v\n", err)
	r.raise(fileErrorCode(err))
}

// read returns a rollout's evidence, or nil: after reporting why, or when
// the session started outside --since/--until.
func (r *fleetRun) read(path string) *budget.Evidence {
	ev, oversized, err := r.o.evidence(r.a, path)
	if err != nil {
		r.fileError(path, err)
		return nil
	}
	if !inRange(ev.StartedAt, r.since, r.until) {
		return nil // not selected: nothing to say
	}
	if oversized > 0 {
		r.say(path, "rollout: warning: %s: %d line(s) over --max-line-bytes were not read; the evidence may miss requests\n", path, oversized)
		r.raise(exitIncomplete)
	}
	return ev
}

// simulated is one rollout's outcome, ready to be counted.
type simulated struct {
	ev  *budget.Evidence
	res *budget.Result
}

func (r *fleetRun) simulate(ev *budget.Evidence, s budget.Settings) *simulated {
	if ev == nil {
		return nil
	}
	if len(s.Windows) == 0 && ev.Window <= 0 {
		return &simulated{ev: ev}
	}
	s.Trace = r.series != nil
	res, err := budget.Simulate(ev, s)
	if err != nil {
		r.fileError(ev.Path, fmt.Errorf("%s: %w", ev.Path, err))
		return nil
	}
	return &simulated{ev, res}
}

func (r *fleetRun) count(sim *simulated) error {
	if sim == nil {
		return nil
	}
	if sim.res == nil {
		r.fleet.SkippedNoWindow++
		return nil
	}
	var row *budget.SessionRow
	if r.o.perSession {
		row = budget.Row(sim.res, sim.ev)
	}
	if err := r.fleet.Add(sim.res, row); err != nil {
		return err
	}
	if r.series != nil {
		return sim.res.WriteSeries(r.series)
	}
	return nil
}

func runSimulateFleet(ctx context.Context, a *app, o *simulateBudgetOptions) error {
	// With a shared ledger, a shard takes whole groups of linked threads
	// (by their root's id), which are only known once every rollout's
	// session_meta is read.
	byGroup := o.shard != "" && o.settings.Ledger > 0
	vo := &verifyOptions{paths: o.paths, filesFrom: o.filesFrom, shardPart: o.shardPart}
	if byGroup {
		vo.shardPart = shardSpec{}
	}
	in, err := vo.inputs(a)
	if err != nil {
		return err
	}
	for _, n := range in.notes {
		fmt.Fprintf(a.io.Err, "rollout: note: %s\n", n)
	}
	paths := in.paths
	// The canonical order: a shard's report merges into the single run's.
	slices.Sort(paths)
	if err := o.checkOutputs(paths); err != nil {
		return err
	}
	r := &fleetRun{a: a, o: o, s: o.settings}
	since, until, err := o.timeRange()
	if err != nil {
		return err
	}

	// Session metas (first lines only), when a shared ledger needs them:
	// the groups of linked threads. --since/--until select as each
	// rollout is read.
	type meta struct{ thread, parent, started string }
	groups := map[string][]int{} // root thread -> indexes into paths
	threads := map[int]string{}  // index into paths -> thread, for groups
	r.since, r.until = since, until
	if r.s.Ledger > 0 {
		metas := make([]*meta, len(paths))
		pool.InOrder(len(paths), o.jobs, 2*o.jobs, nil, 0, func(i int) *meta {
			t, p, st, err := o.sessionMeta(a, paths[i])
			if err != nil {
				r.fileError(paths[i], err)
				return nil
			}
			return &meta{t, p, st}
		}, func(i int, m *meta) { metas[i] = m })
		kept := paths[:0]
		var keptMetas []*meta
		for i, m := range metas {
			if m == nil || !inRange(m.started, since, until) {
				continue
			}
			kept = append(kept, paths[i])
			keptMetas = append(keptMetas, m)
		}
		paths = kept
		if r.s.Ledger > 0 {
			parent := map[string]string{}
			for _, m := range keptMetas {
				if m.thread != "" {
					parent[m.thread] = m.parent
				}
			}
			for i, m := range keptMetas {
				// Up the parent links; a parent whose rollout is not among
				// the inputs still roots the group of its sub-agents.
				root := m.thread
				for hops := 0; parent[root] != "" && hops <= len(parent); hops++ {
					root = parent[root]
				}
				if root != "" {
					groups[root] = append(groups[root], i)
					threads[i] = m.thread
				}
			}
		}
	}
	for root, idx := range groups {
		if len(idx) < 2 {
			delete(groups, root)
		}
	}
	if byGroup {
		k, n := o.shardPart.k, o.shardPart.n
		key := slices.Clone(paths)
		for root, idx := range groups {
			for _, i := range idx {
				key[i] = root
			}
		}
		moved := map[int]int{}
		var kept []string
		for i, p := range paths {
			if inShard(key[i], k, n) {
				moved[i] = len(kept)
				kept = append(kept, p)
			}
		}
		paths = kept
		oldGroups, oldThreads := groups, threads
		groups, threads = map[string][]int{}, map[int]string{}
		for root, idx := range oldGroups {
			for _, i := range idx {
				if j, ok := moved[i]; ok {
					groups[root] = append(groups[root], j)
					threads[j] = oldThreads[i]
				}
			}
		}
	}
	shared := map[int]bool{}
	for _, idx := range groups {
		for _, i := range idx {
			shared[i] = true
		}
	}

	// --compact-at auto: fit on the whole selection first (a second pass).
	auto := r.s.CompactAt.IsAuto()
	var fit *budget.FitGrid
	if auto {
		fit = budget.NewFitGrid(r.s.PostCompact < 0)
		pool.InOrder(len(paths), o.jobs, 2*o.jobs, nil, 0, func(i int) *budget.FitGrid {
			ev := r.read(paths[i])
			if ev == nil {
				return nil
			}
			g := budget.NewFitGrid(fit.Joint())
			g.Add(ev, r.s.PostCompact)
			return g
		}, func(_ int, g *budget.FitGrid) {
			if g != nil {
				fit.Merge(g)
			}
		})
		r.s.CompactAt = budget.Percent(90)
		if best, ok := fit.Best(); ok {
			r.s.CompactAt = best.Threshold()
			if best.PostPercent >= 0 {
				p := best.PostPercent
				r.s.PostCompactPercent = &p
			}
		} else {
			fmt.Fprintf(a.io.Err, "rollout: warning: --compact-at auto: no recorded compaction to fit; using 90%%\n")
		}
	}
	r.fleet = budget.NewFleet(r.s, o.since, o.until, auto)
	if fit != nil {
		r.fleet.SetGrid(fit)
	}

	simulateAll := func(series io.Writer) error {
		if series != nil {
			r.series = csv.NewWriter(series)
			r.series.Write(budget.SeriesHeader)
		}
		return r.all(paths, shared, groups, threads)
	}
	if o.series != "" {
		err = outfile.Write(o.series, outfile.Options{}, simulateAll)
		if err != nil && !isExitError(err) {
			err = &exitError{code: exitUsage, err: fmt.Errorf("writing --series %s: %w", o.series, err)}
		}
	} else {
		err = simulateAll(nil)
	}
	if err != nil {
		return err
	}
	if err := writeFleet(a, r.fleet, o.format, o.output); err != nil {
		return err
	}
	if r.code != exitOK {
		return silentExit(r.code)
	}
	return nil
}

// all simulates the rollouts: those on their own in path order on the
// workers, then the groups that share a ledger.
func (r *fleetRun) all(paths []string, shared map[int]bool, groups map[string][]int, threads map[int]string) error {
	o := r.o
	var single []int
	for i := range paths {
		if !shared[i] {
			single = append(single, i)
		}
	}
	var countErr error
	pool.InOrder(len(single), o.jobs, 2*o.jobs, nil, 0, func(k int) *simulated {
		return r.simulate(r.read(paths[single[k]]), r.s)
	}, func(_ int, sim *simulated) {
		if err := r.count(sim); err != nil && countErr == nil {
			countErr = err
		}
	})
	// Threads sharing a ledger: each group once all of it is read, in the
	// order of its first rollout's path.
	var roots []string
	for root := range groups {
		roots = append(roots, root)
	}
	slices.SortFunc(roots, func(x, y string) int { return slices.Compare(groups[x], groups[y]) })
	for _, root := range roots {
		idx := groups[root]
		// The root thread's rollout first, when it is there.
		slices.SortStableFunc(idx, func(x, y int) int { return boolRank(threads[x] != root) - boolRank(threads[y] != root) })
		evs := make([]*budget.Evidence, len(idx))
		pool.InOrder(len(idx), o.jobs, 2*o.jobs, nil, 0, func(k int) *budget.Evidence { return r.read(paths[idx[k]]) },
			func(k int, ev *budget.Evidence) { evs[k] = ev })
		evs = slices.DeleteFunc(evs, func(ev *budget.Evidence) bool { return ev == nil })
		if len(evs) == 0 {
			continue
		}
		windows := r.s.Windows
		if len(windows) == 0 {
			windows = []int64{0}
		}
		// The ledger does not depend on the window, only on the charges.
		settings, ex := budget.ShareLedger(evs, r.s)
		if ex != nil {
			for _, w := range windows {
				e := *ex
				e.Window = w
				r.fleet.AddLedger(e)
			}
		}
		for k, ev := range evs {
			if err := r.count(r.simulate(ev, settings[k])); err != nil && countErr == nil {
				countErr = err
			}
		}
	}
	if countErr != nil {
		return countErr
	}
	r.fleet.Finish()
	if r.series != nil {
		r.series.Flush()
		return r.series.Error()
	}
	return nil
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
	if output != "" {
		if err := outfile.Write(output, outfile.Options{}, write); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("writing %s to %s: %w", format, output, err)}
		}
		return nil
	}
	if err := write(a.io.Out); err != nil {
		return fmt.Errorf("writing %s: %w", format, err)
	}
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
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

// inRange: a session whose start is unknown is outside any range.
func inRange(started string, since, until time.Time) bool {
	if since.IsZero() && until.IsZero() {
		return true
	}
	t, err := time.Parse(time.RFC3339Nano, started)
	if err != nil {
		return false
	}
	return (since.IsZero() || !t.Before(since)) && (until.IsZero() || t.Before(until))
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
