package budget

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/rollout-dev/rollout/internal/base/objstore"
	"github.com/rollout-dev/rollout/internal/base/pool"
	"github.com/rollout-dev/rollout/internal/codex/forest"
	"github.com/rollout-dev/rollout/reconstruct"
)

// ReadEvidence streams one rollout through the replay engine and keeps the
// budget evidence; unread counts the lines over the replay's line limit.
func ReadEvidence(path string, stdin io.Reader, ro reconstruct.ReplayOptions) (ev *Evidence, unread int, err error) {
	c := NewCollector()
	st, err := reconstruct.ReplayFile(path, stdin, ro, c.Observe)
	if err != nil {
		return nil, 0, err
	}
	ev = c.Evidence(st)
	ev.Path = path
	return ev, st.Unread, nil
}

// sessionMeta reads only the first line: thread, parent and start.
func sessionMeta(path string, stdin io.Reader, ro reconstruct.ReplayOptions) (thread, parent, started string, err error) {
	ro.StopAfterLine = 1
	st, err := reconstruct.ReplayFile(path, stdin, ro)
	if err != nil {
		return "", "", "", err
	}
	return st.ThreadID, st.ParentThreadID, st.StartedAt, nil
}

// meta is what the first line of a rollout says about its thread.
type meta struct{ thread, parent, started string }

// FleetRun is what RunFleet simulates: many rollouts under one Settings.
type FleetRun struct {
	Paths    []string
	Settings Settings
	// Since and Until select by session start (Until exclusive; zero:
	// open); SinceText and UntilText are how the user wrote them, for the
	// report's parameters.
	Since, Until         time.Time
	SinceText, UntilText string
	PerSession           bool // a row per rollout in the fleet
	Jobs                 int  // rollouts read in parallel (the fleet does not depend on it)
	Replay               reconstruct.ReplayOptions
	// Ancestry, when set, is each rollout's lineage, replayed before it
	// (lineage.Index.Ancestry): a fork's requests are still only its own.
	Ancestry func(path string) *reconstruct.Ancestry
	Stdin    io.Reader // read for the path "-"
	// InShard, when set and Settings.Ledger > 0, keeps the rollouts whose
	// key it accepts: the root thread of a group sharing a ledger (so a
	// group stays whole in one shard), else the path.
	InShard func(key string) bool
	// Series, when set, is handed each rollout's result, simulated with
	// Trace, in path order (--series writes its rows).
	Series func(*Result) error
	// Problem is told, once per rollout, what left it out (Err) or may
	// have made it incomplete, and about the run as a whole (Path "").
	Problem func(FleetProblem)
}

// A FleetProblem is what RunFleet reports on the way.
type FleetProblem struct {
	Path string
	// Err: the rollout could not be read or simulated and is left out.
	Err error
	// Warning, when Err is nil; Incomplete when the rollout was simulated
	// on part of its lines.
	Warning    string
	Incomplete bool
}

// fleetRun is the state of one fleet simulation.
type fleetRun struct {
	in    *FleetRun
	s     Settings
	fleet *Fleet
	mu    sync.Mutex
	// reported names the rollouts already reported: with --compact-at
	// auto each is read twice, its problems said once.
	reported map[string]bool
}

// say reports one problem, once per rollout.
func (r *fleetRun) say(p FleetProblem) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reported == nil {
		r.reported = map[string]bool{}
	}
	if p.Path != "" && r.reported[p.Path] {
		return
	}
	r.reported[p.Path] = true
	if r.in.Problem != nil {
		r.in.Problem(p)
	}
}

// read returns a rollout's evidence, or nil: after reporting why, or when
// the session started outside Since/Until.
func (r *fleetRun) read(path string) *Evidence {
	ro := r.in.Replay
	if r.in.Ancestry != nil {
		ro.Ancestry = func() *reconstruct.Ancestry { return r.in.Ancestry(path) }
	}
	ev, oversized, err := ReadEvidence(path, r.in.Stdin, ro)
	if err != nil {
		r.say(FleetProblem{Path: path, Err: err})
		return nil
	}
	if !inRange(ev.StartedAt, r.in.Since, r.in.Until) {
		return nil // not selected: nothing to say
	}
	if oversized > 0 {
		r.say(FleetProblem{Path: path, Incomplete: true,
			Warning: fmt.Sprintf("%s: %d line(s) over --max-line-bytes were not read; the evidence may miss requests", path, oversized)})
	}
	return ev
}

// simulated is one rollout's outcome, ready to be counted.
type simulated struct {
	ev  *Evidence
	res *Result
}

func (r *fleetRun) simulate(ev *Evidence, s Settings) *simulated {
	if ev == nil {
		return nil
	}
	if len(s.Windows) == 0 && ev.Window <= 0 {
		return &simulated{ev: ev}
	}
	s.Trace = r.in.Series != nil
	res, err := Simulate(ev, s)
	if err != nil {
		r.say(FleetProblem{Path: ev.Path, Err: fmt.Errorf("%s: %w", ev.Path, err)})
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
	var row *SessionRow
	if r.in.PerSession {
		row = sessionRow(sim.res, sim.ev)
	}
	if err := r.fleet.Add(sim.res, row); err != nil {
		return err
	}
	if r.in.Series != nil {
		return r.in.Series(sim.res)
	}
	return nil
}

// ordered is the fleet's use of the pool: at most 2*Jobs results wait.
func ordered[T any](r *fleetRun, n int, work func(int) T, emit func(int, T)) {
	pool.InOrder(n, r.in.Jobs, 2*r.in.Jobs, nil, 0, work, emit)
}

// RunFleet simulates the rollouts of in and returns their fleet, the same
// for any Jobs and, merged, for any sharding. The paths are taken in path
// order (a shard's report merges into the single run's). A rollout that
// cannot be read is reported to in.Problem and left out; the error is
// one of Series or of counting.
func RunFleet(in FleetRun) (*Fleet, error) {
	paths := slices.Clone(in.Paths)
	slices.Sort(paths)
	r := &fleetRun{in: &in, s: in.Settings}

	groups := map[string][]int{} // root thread -> indexes into paths
	threads := map[int]string{}  // index into paths -> thread, for groups
	if r.s.Ledger > 0 {
		paths, groups, threads = r.linked(paths)
	}
	for root, idx := range groups {
		if len(idx) < 2 {
			delete(groups, root)
		}
	}
	if in.InShard != nil && r.s.Ledger > 0 {
		paths, groups, threads = inShard(paths, groups, threads, in.InShard)
	}
	shared := map[int]bool{}
	for _, idx := range groups {
		for _, i := range idx {
			shared[i] = true
		}
	}

	auto := r.s.CompactAt.IsAuto()
	var fit *FitGrid
	if auto {
		fit = r.fitAuto(paths)
	}
	r.fleet = newFleet(r.s, in.SinceText, in.UntilText, auto)
	if fit != nil {
		r.fleet.SetGrid(fit)
	}
	stop := objstore.ReadAhead(context.Background(), paths)
	defer stop()
	if err := r.all(paths, shared, groups, threads); err != nil {
		return nil, err
	}
	return r.fleet, nil
}

// linked reads the session metas (first lines only) that a shared ledger
// needs: the paths Since/Until keep, and the groups of linked threads
// among them (see ledgerGroups).
func (r *fleetRun) linked(paths []string) ([]string, map[string][]int, map[int]string) {
	metas := make([]*meta, len(paths))
	ordered(r, len(paths), func(i int) *meta {
		t, p, st, err := sessionMeta(paths[i], r.in.Stdin, r.in.Replay)
		if err != nil {
			r.say(FleetProblem{Path: paths[i], Err: err})
			return nil
		}
		return &meta{t, p, st}
	}, func(i int, m *meta) { metas[i] = m })
	kept := paths[:0]
	var keptMetas []*meta
	for i, m := range metas {
		if m == nil || !inRange(m.started, r.in.Since, r.in.Until) {
			continue
		}
		kept = append(kept, paths[i])
		keptMetas = append(keptMetas, m)
	}
	groups, threads := ledgerGroups(keptMetas)
	return kept, groups, threads
}

// inShard keeps the paths of a shard, a group of linked threads whole (by
// its root's key), and renumbers the groups to the kept paths.
func inShard(paths []string, groups map[string][]int, threads map[int]string, in func(string) bool) ([]string, map[string][]int, map[int]string) {
	key := slices.Clone(paths)
	for root, idx := range groups {
		for _, i := range idx {
			key[i] = root
		}
	}
	moved := map[int]int{}
	var kept []string
	for i, p := range paths {
		if in(key[i]) {
			moved[i] = len(kept)
			kept = append(kept, p)
		}
	}
	keptGroups, keptThreads := map[string][]int{}, map[int]string{}
	for root, idx := range groups {
		for _, i := range idx {
			if j, ok := moved[i]; ok {
				keptGroups[root] = append(keptGroups[root], j)
				keptThreads[j] = threads[i]
			}
		}
	}
	return kept, keptGroups, keptThreads
}

// fitAuto fits --compact-at auto on the whole selection first (a second
// pass) and settles r.s.CompactAt (and the post-compaction percentage).
func (r *fleetRun) fitAuto(paths []string) *FitGrid {
	fit := newFitGrid(r.s.PostCompact < 0)
	ordered(r, len(paths), func(i int) *FitGrid {
		ev := r.read(paths[i])
		if ev == nil {
			return nil
		}
		g := newFitGrid(fit.Joint())
		g.Add(ev, r.s.PostCompact)
		return g
	}, func(_ int, g *FitGrid) {
		if g != nil {
			fit.Merge(g)
		}
	})
	r.s.CompactAt = Percent(90)
	if best, ok := fit.Best(); ok {
		r.s.CompactAt = best.Threshold()
		if best.PostPercent >= 0 {
			p := best.PostPercent
			r.s.PostCompactPercent = &p
		}
	} else {
		r.say(FleetProblem{Warning: "--compact-at auto: no recorded compaction to fit; using 90%"})
	}
	return fit
}

// ledgerGroups groups the rollouts of linked threads by the thread at the
// top of their tree (forest.Forest.Top): index into metas -> its group,
// and index -> thread. A parent whose rollout is not among the inputs
// still tops the group of its sub-agents; a rollout without a thread id
// shares no ledger.
func ledgerGroups(metas []*meta) (map[string][]int, map[int]string) {
	nodes := make([]forest.Node, len(metas))
	for i, m := range metas {
		if m.thread != "" {
			nodes[i] = forest.Node{ID: m.thread, Parent: m.parent}
		}
	}
	trees := forest.New(nodes)
	groups := map[string][]int{}
	threads := map[int]string{}
	for i, m := range metas {
		if top := trees.Top(i); top != "" {
			groups[top] = append(groups[top], i)
			threads[i] = m.thread
		}
	}
	return groups, threads
}

// all simulates the rollouts: those on their own in path order on the
// workers, then the groups that share a ledger.
func (r *fleetRun) all(paths []string, shared map[int]bool, groups map[string][]int, threads map[int]string) error {
	var single []int
	for i := range paths {
		if !shared[i] {
			single = append(single, i)
		}
	}
	var countErr error
	ordered(r, len(single), func(k int) *simulated {
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
		evs := make([]*Evidence, len(idx))
		ordered(r, len(idx), func(k int) *Evidence { return r.read(paths[idx[k]]) },
			func(k int, ev *Evidence) { evs[k] = ev })
		evs = slices.DeleteFunc(evs, func(ev *Evidence) bool { return ev == nil })
		if len(evs) == 0 {
			continue
		}
		windows := r.s.Windows
		if len(windows) == 0 {
			windows = []int64{0}
		}
		// The ledger does not depend on the window, only on the charges.
		settings, ex := shareLedger(evs, r.s)
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
	return nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
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
