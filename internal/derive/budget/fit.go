package budget

import (
	"cmp"
	"fmt"
)

// The calibration fit searches the compaction threshold (and, for
// --compact-at auto, the post-compaction fill) that best reproduces the
// recorded compactions at each rollout's recorded window. Candidates are a
// fixed grid, so that the scores of many rollouts (or of shards run on
// other machines) add up point by point and the fit of a fleet is exact,
// whatever the order or grouping of its rollouts.
const (
	fitMinPermille  = 500 // 50% of the recorded window
	fitMaxPermille  = 1000
	fitStepPermille = 5 // 0.5%
	fitMaxPostPct   = 50
	fitStepPostPct  = 5
)

// FitPoint is one candidate and its score summed over the rollouts added.
type FitPoint struct {
	Permille int // threshold in tenths of a percent of the recorded window
	// PostPercent is the post-compaction fill as a percentage of the
	// recorded window; -1: the run's own (--post-compact-tokens, else the
	// mean of each rollout's recorded post-compaction fills).
	PostPercent int
	Reproduced  int // recorded compactions matched at the same request +/- 1
	Exact       int // recorded compactions matched at the same request
	Simulated   int // simulated compactions
}

// FitGrid scores every candidate over the rollouts added to it.
type FitGrid struct {
	Points   []FitPoint
	Recorded int // recorded compactions of the rollouts added
}

// newFitGrid returns an empty grid: thresholds from 50% to 100% of the
// recorded window by 0.5%, each with the run's post-compaction fill and,
// when joint, also with 0% to 50% of the window by 5%.
func newFitGrid(joint bool) *FitGrid {
	posts := []int{-1}
	if joint {
		for p := 0; p <= fitMaxPostPct; p += fitStepPostPct {
			posts = append(posts, p)
		}
	}
	g := &FitGrid{}
	for t := fitMinPermille; t <= fitMaxPermille; t += fitStepPermille {
		for _, p := range posts {
			g.Points = append(g.Points, FitPoint{Permille: t, PostPercent: p})
		}
	}
	return g
}

// Joint reports whether the grid also searches the post-compaction fill.
func (g *FitGrid) Joint() bool {
	return len(g.Points) > 0 && g.Points[len(g.Points)-1].PostPercent >= 0
}

// Add scores one rollout at its recorded window; post is the run's
// post-compaction fill (< 0: the rollout's recorded mean). A rollout that
// records no window tells nothing and is skipped.
func (g *FitGrid) Add(ev *Evidence, post int64) {
	W := ev.Window
	if W <= 0 {
		return
	}
	if post < 0 {
		post = ev.DefaultPostCompact()
	}
	rec := ev.CompactionRequests()
	g.Recorded += len(rec)
	cal := Settings{}
	for i := range g.Points {
		pt := &g.Points[i]
		P := post
		if pt.PostPercent >= 0 {
			P = W * int64(pt.PostPercent) / 100
		}
		o := run(ev, W, W*int64(pt.Permille)/1000, P, &cal, false)
		pt.Reproduced += matchWithin1(rec, o.CompactionRequests)
		pt.Exact += matchExact(rec, o.CompactionRequests)
		pt.Simulated += o.Compactions
	}
}

// Merge adds another grid's scores (the same kind of grid).
func (g *FitGrid) Merge(o *FitGrid) error {
	if len(g.Points) != len(o.Points) {
		return fmt.Errorf("calibration grids differ (%d and %d candidates)", len(g.Points), len(o.Points))
	}
	for i := range g.Points {
		a, b := &g.Points[i], o.Points[i]
		if a.Permille != b.Permille || a.PostPercent != b.PostPercent {
			return fmt.Errorf("calibration grids differ at candidate %d", i)
		}
		a.Reproduced += b.Reproduced
		a.Exact += b.Exact
		a.Simulated += b.Simulated
	}
	g.Recorded += o.Recorded
	return nil
}

// quality compares how well two candidates reproduce the recording of
// rec compactions: the higher F1 score, 2*reproduced / (recorded +
// simulated), which counts both kinds of error (recorded compactions not
// reproduced, simulated ones that match none), so that neither never
// compacting nor compacting before every request (which "reproduces"
// everything) scores well; then the most reproduced at the very request.
func quality(a, b FitPoint, rec int) int {
	return cmp.Or(
		cmp.Compare(int64(a.Reproduced)*int64(rec+b.Simulated), int64(b.Reproduced)*int64(rec+a.Simulated)),
		cmp.Compare(a.Exact, b.Exact),
	)
}

// better orders candidates by quality, then the higher threshold (the
// highest that still triggers every reproduced compaction is the tightest
// estimate), then the run's own post-compaction fill, then the lower one.
func better(a, b FitPoint, rec int) bool {
	return cmp.Or(quality(a, b, rec),
		cmp.Compare(a.Permille, b.Permille),
		cmp.Compare(b.PostPercent, a.PostPercent)) > 0
}

// Best is the best candidate; ok is false when nothing was recorded to fit
// (no rollout with a window and a recorded compaction) or when no
// candidate reproduces any recorded compaction (the model does not
// describe this recording at any threshold).
func (g *FitGrid) Best() (FitPoint, bool) {
	if g.Recorded == 0 || len(g.Points) == 0 {
		return FitPoint{}, false
	}
	best := g.Points[0]
	for _, p := range g.Points[1:] {
		if better(p, best, g.Recorded) {
			best = p
		}
	}
	return best, best.Reproduced > 0
}

// Threshold is the candidate's threshold as a percentage.
func (p FitPoint) Threshold() Threshold { return Threshold{num: int64(p.Permille), den: 10} }

// Fitted is the calibration fit of one rollout or of a fleet.
type Fitted struct {
	CompactAt CompactAt `json:"compact_at"` // the fitted threshold, a percentage of the recorded window
	// Threshold is CompactAt in tokens at the recorded window (one
	// rollout; null for a fleet, whose windows differ).
	Threshold *int64 `json:"threshold"`
	// PostCompactPercent is the fitted post-compaction fill as a
	// percentage of the recorded window; null: the run's own.
	PostCompactPercent *int `json:"post_compact_percent"`
	// PostCompactTokens is the post-compaction fill the fit used at the
	// recorded window (one rollout; null for a fleet).
	PostCompactTokens   *int64 `json:"post_compact_tokens"`
	RecordedCompactions int    `json:"recorded_compactions"`
	Reproduced          int    `json:"reproduced"`
	Exact               int    `json:"exact"`
	Simulated           int    `json:"simulated"`
	// Better: the fitted setting reproduces the recording better than the
	// chosen --compact-at (the table then shows it beside the chosen one).
	Better bool `json:"better_than_chosen"`
}

// fitted describes the best point of g against the chosen setting's
// score (its Permille and PostPercent are ignored).
func fitted(g *FitGrid, chosen FitPoint) *Fitted {
	best, ok := g.Best()
	if !ok {
		return nil
	}
	f := &Fitted{CompactAt: best.Threshold().JSON(), RecordedCompactions: g.Recorded,
		Reproduced: best.Reproduced, Exact: best.Exact, Simulated: best.Simulated,
		Better: quality(best, chosen, g.Recorded) > 0}
	if best.PostPercent >= 0 {
		p := best.PostPercent
		f.PostCompactPercent = &p
	}
	return f
}

// matchExact counts recorded compactions that a simulated compaction
// reproduces at the same request. Both lists are ascending.
func matchExact(recorded, simulated []int) int {
	n, j := 0, 0
	for _, r := range recorded {
		for j < len(simulated) && simulated[j] < r {
			j++
		}
		if j < len(simulated) && simulated[j] == r {
			n++
			j++
		}
	}
	return n
}
