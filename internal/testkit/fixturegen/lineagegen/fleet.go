package lineagegen

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// FleetOptions sizes a fleet: many Codex homes of small rollouts, as a
// bucket of many users' sessions holds them (issue 33's fleet path).
type FleetOptions struct {
	Rollouts int    // rollout files in all (exactly)
	Seed     uint64 // the same options give the same bytes
	// PerHome is the mean number of rollouts of a home (default 40); each
	// home gets between half and one and a half times as many.
	PerHome int
}

// Fleet is what WriteFleet wrote.
type Fleet struct {
	Homes []string    // the homes' directories, relative to the fleet's
	Files []FleetFile // sorted by Path
}

// FleetFile is one rollout of a fleet.
type FleetFile struct {
	Path string // slash path relative to the fleet's directory
	Home string // its home, relative to the fleet's directory
	Kind string // "root", "fork", "revert" or "subagent"
	// Source is the Path of the rollout a fork, revert or sub-agent
	// continues ("" for a root).
	Source string
	Size   int64
}

// shape is a tree of the fleet, its nodes named within it; the weights are
// guesses at a real home: most sessions stand alone.
type shape struct {
	weight int
	tree   Tree
}

var fleetShapes = []shape{
	{45, Tree{{Name: "r", Kind: "root", Turns: 1}}},
	{15, Tree{{Name: "r", Kind: "root", Turns: 2}}},
	{10, Tree{{Name: "r", Kind: "root", Turns: 2}, {Name: "f", Kind: "fork", Parent: "r", Cut: -1, Turns: 1}}},
	{5, Tree{{Name: "r", Kind: "root", Turns: 2}, {Name: "f", Kind: "fork", Parent: "r", Cut: 1, Turns: 1},
		{Name: "ff", Kind: "fork", Parent: "f", Cut: -1, Turns: 1}}},
	{8, Tree{{Name: "r", Kind: "root", Turns: 2}, {Name: "s", Kind: "subagent", Parent: "r", Cut: 1, Turns: 1}}},
	{4, Tree{{Name: "r", Kind: "root", Turns: 2}, {Name: "s1", Kind: "subagent", Parent: "r", Cut: 1, Turns: 1},
		{Name: "s2", Kind: "subagent", Parent: "r", Cut: 2, Turns: 1}, {Name: "f", Kind: "fork", Parent: "r", Cut: -1, Turns: 1}}},
	{5, Tree{{Name: "r", Kind: "root", Turns: 2}, {Name: "v", Kind: "revert", Parent: "r", Cut: 1, Turns: 1}}},
	{4, Tree{{Name: "r", Kind: "root", Turns: 1, Archived: true}, {Name: "f", Kind: "fork", Parent: "r", Cut: -1, Turns: 1}}},
	{4, Tree{{Name: "r", Kind: "root", Turns: 1, Archived: true}}},
}

// homePlan is one home of a fleet: its trees, concatenated.
type homePlan struct {
	name  string
	tree  Tree
	start time.Time
	salt  uint32
}

// WriteFleet writes a fleet of o.Rollouts rollouts under dir: homes
// dir/user-NNNN, each with sessions/YYYY/MM/DD/rollout-*.jsonl and
// archived_sessions/, a few KB a file, with paginated forks (whose
// history_base names a rollout of the same home and a byte offset it
// has), reverts and sub-agents. Ids are unique across the fleet. The
// homes hold rollouts only: no state database, no writer locks.
func WriteFleet(dir string, o FleetOptions) (*Fleet, error) {
	if o.Rollouts <= 0 {
		return nil, fmt.Errorf("lineagegen: a fleet of %d rollouts", o.Rollouts)
	}
	if o.PerHome <= 0 {
		o.PerHome = 40
	}
	plans := planFleet(o)
	results := make([]map[string]*File, len(plans))
	errs := make([]error, len(plans))
	// Homes are independent: write them in parallel, each from its plan
	// alone, so the bytes do not depend on the schedule.
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for i := range next {
				p := plans[i]
				results[i], errs[i] = WriteAt(filepath.Join(dir, p.name), p.tree, Place{Start: p.start, Salt: p.salt})
			}
		})
	}
	for i := range plans {
		next <- i
	}
	close(next)
	wg.Wait()
	fl := &Fleet{}
	for i, p := range plans {
		if errs[i] != nil {
			return nil, fmt.Errorf("lineagegen: fleet home %s: %w", p.name, errs[i])
		}
		fl.Homes = append(fl.Homes, p.name)
		for _, f := range results[i] {
			ff := FleetFile{Path: p.name + "/" + f.Path, Home: p.name, Kind: f.Node.Kind, Size: f.Size}
			if f.Node.Parent != "" {
				ff.Source = p.name + "/" + results[i][f.Node.Parent].Path
			}
			fl.Files = append(fl.Files, ff)
		}
	}
	if len(fl.Files) != o.Rollouts {
		return nil, fmt.Errorf("lineagegen: fleet planned %d rollouts, wrote %d", o.Rollouts, len(fl.Files))
	}
	slices.SortFunc(fl.Files, func(a, b FleetFile) int { return strings.Compare(a.Path, b.Path) })
	return fl, nil
}

// planFleet draws the homes and their trees from the seed.
func planFleet(o FleetOptions) []homePlan {
	rng := rand.New(rand.NewPCG(o.Seed, 0x33))
	total := 0
	for _, s := range fleetShapes {
		total += s.weight
	}
	var plans []homePlan
	left := o.Rollouts
	base := time.Date(2026, 1, 5, 8, 0, 0, 0, time.UTC)
	for h := 0; left > 0; h++ {
		want := min(left, o.PerHome/2+rng.IntN(o.PerHome+1))
		p := homePlan{name: fmt.Sprintf("user-%04d", h+1), salt: uint32(h + 1),
			// Homes start on different days and minutes: their files spread
			// over many sessions/YYYY/MM/DD directories.
			start: base.Add(time.Duration(rng.IntN(300*24*60)) * time.Minute)}
		for t := 0; len(p.tree) < want; t++ {
			pick := rng.IntN(total)
			var tree Tree
			for _, s := range fleetShapes {
				if pick < s.weight {
					tree = s.tree
					break
				}
				pick -= s.weight
			}
			if len(tree) > want-len(p.tree) {
				tree = fleetShapes[0].tree
			}
			for _, n := range tree {
				n.Name = fmt.Sprintf("t%d-%s", t, n.Name)
				if n.Parent != "" {
					n.Parent = fmt.Sprintf("t%d-%s", t, n.Parent)
				}
				p.tree = append(p.tree, n)
			}
		}
		left -= len(p.tree)
		plans = append(plans, p)
	}
	return plans
}
