package budget

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/rollout-dev/rollout/internal/base/shard"
)

// A fleet is many rollouts simulated under the same settings. Fleet keeps
// what the fleet view needs in a size independent of the number of
// rollouts: sums, and histograms whose size is bounded by the values
// (compactions per rollout, peak fill in 1,000-token buckets). Sums and
// histograms add up exactly, so the fleets of shards merge into the fleet
// of a single run, byte for byte once encoded.
type Fleet struct {
	Params FleetParams `json:"params"`
	// Sessions counts the rollouts simulated; SkippedNoWindow those that
	// record no window when --window is not given (nothing to simulate).
	Sessions        int              `json:"sessions"`
	SkippedNoWindow int              `json:"skipped_no_window"`
	Requests        int              `json:"requests"`
	Calibration     FleetCalibration `json:"calibration"`
	Settings        []FleetOutcome   `json:"settings"`
	// Ledgers lists the shared ledgers that were exhausted (rollouts
	// linked as parent and sub-agents), in the order of their root's path.
	Ledgers []LedgerExhaustion `json:"shared_ledgers"`
	// PerSession holds one row per rollout with --per-session, sorted by
	// path; null without it.
	PerSession []SessionRow `json:"per_session"`
	// Shard is the part of the run the report covers (--shard K/N),
	// present only in the report of a shard; a merge checks that it has
	// every shard once.
	Shard *shard.Spec `json:"shard,omitempty"`
}

// FleetParams are the settings of the run, for the table and for merging
// (only reports made with the same parameters merge).
type FleetParams struct {
	Windows            []int64   `json:"windows"` // []: each rollout's recorded window
	CompactAt          CompactAt `json:"compact_at"`
	PostCompactTokens  *int64    `json:"post_compact_tokens"`  // null: each rollout's recorded mean
	PostCompactPercent *int      `json:"post_compact_percent"` // fitted by --compact-at auto
	HandoffTokens      int64     `json:"handoff_tokens"`
	HandoffCap         int64     `json:"handoff_cap"`
	Ledger             int64     `json:"ledger"`
	WeightOutput       float64   `json:"weight_output"`
	WeightInput        float64   `json:"weight_input"`
	ReminderEvery      int64     `json:"reminder_every"`
	Since              string    `json:"since"`
	Until              string    `json:"until"`
}

// FleetCalibration sums the calibration of every rollout with a recorded
// window, and the fit over all of them.
type FleetCalibration struct {
	RecordedCompactions int     `json:"recorded_compactions"`
	Reproduced          int     `json:"reproduced"`
	Exact               int     `json:"exact"`
	Simulated           int     `json:"simulated"`
	Auto                bool    `json:"auto"`
	Fitted              *Fitted `json:"fitted"`
	// Grid is the fit's score per candidate (see GridRow). Merging adds
	// them up.
	Grid []GridRow `json:"fit_grid"`
}

// FleetOutcome is the fleet view of one setting.
type FleetOutcome struct {
	Window    int64     `json:"window"` // 0: each rollout's recorded window
	CompactAt CompactAt `json:"compact_at"`
	// Threshold is CompactAt in tokens at Window (null at each rollout's
	// recorded window when CompactAt is a percentage: the windows differ).
	Threshold           *int64 `json:"threshold"`
	Sessions            int    `json:"sessions"`
	SessionsOverflowing int    `json:"sessions_with_overflow"`
	Overflows           int    `json:"overflows"`
	Compactions         int    `json:"compactions"`
	CompactionsP50      int64  `json:"compactions_p50"`
	CompactionsP95      int64  `json:"compactions_p95"`
	// Peak fill percentiles are the upper edge of their 1,000-token
	// bucket, never above the maximum, which is exact.
	PeakFillP50       int64 `json:"peak_fill_p50"`
	PeakFillP95       int64 `json:"peak_fill_p95"`
	PeakFillMax       int64 `json:"peak_fill_max"`
	Deferrals         int   `json:"handoffs_deferred"`
	Undelivered       int   `json:"handoffs_undelivered"`
	LedgerExhaustions int   `json:"ledger_exhaustions"`
	Reminders         int   `json:"reminders"`
	// Histograms, [value, sessions] sorted by value: compactions per
	// rollout, and peak fill in 1,000-token buckets (bucket b holds
	// fills in ((b-1)*1000, b*1000]).
	CompactionsHistogram [][2]int64 `json:"compactions_histogram"`
	PeakFillHistogram    [][2]int64 `json:"peak_fill_histogram"`

	compactions, peaks map[int64]int64
}

// PeakBucket is the width of a peak-fill histogram bucket, in tokens.
const PeakBucket = 1000

// SessionRow is one rollout of the fleet (--per-session).
type SessionRow struct {
	Path                string           `json:"path"`
	ThreadID            string           `json:"thread_id"`
	ParentThreadID      string           `json:"parent_thread_id"`
	StartedAt           string           `json:"started_at"`
	Requests            int              `json:"requests"`
	RecordedWindow      int64            `json:"recorded_window"`
	RecordedCompactions int              `json:"recorded_compactions"`
	Reproduced          int              `json:"reproduced"`
	Settings            []SessionOutcome `json:"settings"`
}

// SessionOutcome is one rollout under one setting, without request lists.
type SessionOutcome struct {
	Window            int64 `json:"window"`
	Threshold         int64 `json:"threshold"`
	PostCompactTokens int64 `json:"post_compact_tokens"`
	Compactions       int   `json:"compactions"`
	PeakFill          int64 `json:"peak_fill"`
	Overflows         int   `json:"overflows"`
	Deferrals         int   `json:"deferrals"`
	Undelivered       int   `json:"undelivered"`
	LedgerExhaustedAt *int  `json:"ledger_exhausted_at"`
	Reminders         int   `json:"reminders"`
	// SharedLedger: the thread shared a ledger that ran out (see Outcome).
	SharedLedger *SharedLedger `json:"shared_ledger,omitempty"`
}

// newFleet starts an empty fleet for settings s (CompactAt already
// resolved when it was auto).
func newFleet(s Settings, since, until string, auto bool) *Fleet {
	f := &Fleet{
		Params: FleetParams{Windows: append([]int64{}, s.Windows...), CompactAt: s.CompactAt.JSON(),
			PostCompactPercent: s.PostCompactPercent, HandoffTokens: s.HandoffTokens, HandoffCap: s.HandoffCap,
			Ledger: s.Ledger, WeightOutput: s.WeightOutput, WeightInput: s.WeightInput,
			ReminderEvery: s.ReminderEvery, Since: since, Until: until},
		Ledgers: []LedgerExhaustion{},
	}
	if s.PostCompact >= 0 {
		p := s.PostCompact
		f.Params.PostCompactTokens = &p
	}
	f.Calibration.Auto = auto
	f.SetGrid(newFitGrid(false))
	windows := s.Windows
	if len(windows) == 0 {
		windows = []int64{0}
	}
	for _, w := range windows {
		o := FleetOutcome{Window: w, CompactAt: s.CompactAt.JSON(), compactions: map[int64]int64{}, peaks: map[int64]int64{}}
		if c := s.CompactAt.JSON(); w > 0 || c.Kind == KindTokens {
			t := s.CompactAt.At(w)
			o.Threshold = &t
		}
		f.Settings = append(f.Settings, o)
	}
	return f
}

// Add counts one simulated rollout: its result and its calibration scores
// (those Simulate computed; a fleet fitted by --compact-at auto was given
// its whole grid by SetGrid and adds none). row is its --per-session row,
// or nil.
func (f *Fleet) Add(r *Result, row *SessionRow) error {
	var g *FitGrid
	if !f.Calibration.Auto {
		g = r.grid
	}
	if len(r.Settings) != len(f.Settings) {
		return fmt.Errorf("%s: %d settings, the fleet has %d", r.Path, len(r.Settings), len(f.Settings))
	}
	f.Sessions++
	f.Requests += r.Requests
	c := &f.Calibration
	c.RecordedCompactions += r.Calibration.RecordedCompactions
	c.Reproduced += r.Calibration.Reproduced
	c.Exact += r.calExact
	c.Simulated += r.calSimulated
	if g != nil {
		if len(g.Points) != len(c.Grid) {
			return fmt.Errorf("%s: calibration grid of %d candidates, the fleet has %d", r.Path, len(g.Points), len(c.Grid))
		}
		for i, p := range g.Points {
			c.Grid[i][2] += p.Reproduced
			c.Grid[i][3] += p.Exact
			c.Grid[i][4] += p.Simulated
		}
	}
	for i, o := range r.Settings {
		fo := &f.Settings[i]
		fo.Sessions++
		fo.Compactions += o.Compactions
		fo.Overflows += o.Overflows
		if o.Overflows > 0 {
			fo.SessionsOverflowing++
		}
		fo.Deferrals += o.Deferrals
		fo.Undelivered += o.Undelivered
		fo.Reminders += o.Reminders
		if o.LedgerExhaustedAt != nil && o.SharedLedger == nil {
			fo.LedgerExhaustions++
		}
		fo.compactions[int64(o.Compactions)]++
		fo.peaks[(o.PeakFill+PeakBucket-1)/PeakBucket]++
		fo.PeakFillMax = max(fo.PeakFillMax, o.PeakFill)
	}
	if row != nil {
		f.PerSession = append(f.PerSession, *row)
	}
	return nil
}

// SetGrid sets the calibration scores of the whole fleet (the fit of
// --compact-at auto, made before the simulation).
func (f *Fleet) SetGrid(g *FitGrid) {
	f.Calibration.Grid = f.Calibration.Grid[:0]
	for _, p := range g.Points {
		f.Calibration.Grid = append(f.Calibration.Grid, GridRow{p.Permille, p.PostPercent, p.Reproduced, p.Exact, p.Simulated})
	}
}

// AddLedger records an exhausted shared ledger (counted once per setting
// where it was exhausted).
func (f *Fleet) AddLedger(l LedgerExhaustion) {
	f.Ledgers = append(f.Ledgers, l)
	for i := range f.Settings {
		if f.Settings[i].Window == l.Window {
			f.Settings[i].LedgerExhaustions++
		}
	}
}

// sessionRow builds the --per-session row of one result.
func sessionRow(r *Result, ev *Evidence) *SessionRow {
	row := &SessionRow{Path: r.Path, ThreadID: ev.ThreadID, ParentThreadID: ev.ParentThreadID,
		StartedAt: ev.StartedAt, Requests: r.Requests, RecordedWindow: r.Recorded.Window,
		RecordedCompactions: r.Calibration.RecordedCompactions, Reproduced: r.Calibration.Reproduced,
		Settings: make([]SessionOutcome, 0, len(r.Settings))}
	for _, o := range r.Settings {
		row.Settings = append(row.Settings, SessionOutcome{Window: o.Window, Threshold: o.Threshold,
			PostCompactTokens: o.PostCompactTokens, Compactions: o.Compactions, PeakFill: o.PeakFill,
			Overflows: o.Overflows, Deferrals: o.Deferrals, Undelivered: o.Undelivered,
			LedgerExhaustedAt: o.LedgerExhaustedAt, Reminders: o.Reminders, SharedLedger: o.SharedLedger})
	}
	return row
}

// Merge adds another fleet's counts (a shard of the same run).
func (f *Fleet) Merge(o *Fleet) error {
	pa, _ := json.Marshal(f.Params)
	pb, _ := json.Marshal(o.Params)
	if !bytes.Equal(pa, pb) {
		return fmt.Errorf("the reports were made with different settings (%s and %s)", pa, pb)
	}
	if len(f.Settings) != len(o.Settings) ||
		len(f.Calibration.Grid) != len(o.Calibration.Grid) || f.Calibration.Auto != o.Calibration.Auto {
		return fmt.Errorf("the reports were made with different settings")
	}
	f.Sessions += o.Sessions
	f.SkippedNoWindow += o.SkippedNoWindow
	f.Requests += o.Requests
	c, oc := &f.Calibration, o.Calibration
	c.RecordedCompactions += oc.RecordedCompactions
	c.Reproduced += oc.Reproduced
	c.Exact += oc.Exact
	c.Simulated += oc.Simulated
	for i := range c.Grid {
		if c.Grid[i][0] != oc.Grid[i][0] || c.Grid[i][1] != oc.Grid[i][1] {
			return fmt.Errorf("the reports' calibration grids differ")
		}
		for k := 2; k < 5; k++ {
			c.Grid[i][k] += oc.Grid[i][k]
		}
	}
	for i := range f.Settings {
		a, b := &f.Settings[i], o.Settings[i]
		if a.Window != b.Window || a.CompactAt.String() != b.CompactAt.String() {
			return fmt.Errorf("the reports simulate different settings")
		}
		a.Sessions += b.Sessions
		a.SessionsOverflowing += b.SessionsOverflowing
		a.Overflows += b.Overflows
		a.Compactions += b.Compactions
		a.PeakFillMax = max(a.PeakFillMax, b.PeakFillMax)
		a.Deferrals += b.Deferrals
		a.Undelivered += b.Undelivered
		a.LedgerExhaustions += b.LedgerExhaustions
		a.Reminders += b.Reminders
		a.maps()
		bc, bp := b.compactions, b.peaks
		if bc == nil {
			bc, bp = histMap(b.CompactionsHistogram), histMap(b.PeakFillHistogram)
		}
		for k, v := range bc {
			a.compactions[k] += v
		}
		for k, v := range bp {
			a.peaks[k] += v
		}
	}
	f.Ledgers = append(f.Ledgers, o.Ledgers...)
	if o.PerSession != nil {
		f.PerSession = append(f.PerSession, o.PerSession...)
	}
	return nil
}

// Finish computes the percentiles, the fit and the canonical order; call
// it once, after the last Add or Merge, before encoding.
func (f *Fleet) Finish() {
	for i := range f.Settings {
		o := &f.Settings[i]
		o.maps()
		o.CompactionsHistogram, o.PeakFillHistogram = histList(o.compactions), histList(o.peaks)
		o.CompactionsP50 = percentile(o.CompactionsHistogram, o.Sessions, 50)
		o.CompactionsP95 = percentile(o.CompactionsHistogram, o.Sessions, 95)
		o.PeakFillP50 = min(o.PeakFillMax, percentile(o.PeakFillHistogram, o.Sessions, 50)*PeakBucket)
		o.PeakFillP95 = min(o.PeakFillMax, percentile(o.PeakFillHistogram, o.Sessions, 95)*PeakBucket)
	}
	c := &f.Calibration
	g := &FitGrid{Recorded: c.RecordedCompactions}
	for _, p := range c.Grid {
		g.Points = append(g.Points, FitPoint{Permille: p[0], PostPercent: p[1], Reproduced: p[2], Exact: p[3], Simulated: p[4]})
	}
	c.Fitted = fitted(g, FitPoint{Reproduced: c.Reproduced, Exact: c.Exact, Simulated: c.Simulated})
	slices.SortStableFunc(f.Ledgers, func(a, b LedgerExhaustion) int {
		return cmp.Or(cmp.Compare(a.RootPath, b.RootPath), cmp.Compare(a.Window, b.Window))
	})
	if f.PerSession != nil {
		slices.SortStableFunc(f.PerSession, func(a, b SessionRow) int { return cmp.Compare(a.Path, b.Path) })
	}
}

// maps makes the histograms counting maps again (after decoding).
func (o *FleetOutcome) maps() {
	if o.compactions == nil {
		o.compactions, o.peaks = histMap(o.CompactionsHistogram), histMap(o.PeakFillHistogram)
	}
}

func histMap(h [][2]int64) map[int64]int64 {
	m := make(map[int64]int64, len(h))
	for _, kv := range h {
		m[kv[0]] += kv[1]
	}
	return m
}

func histList(m map[int64]int64) [][2]int64 {
	out := make([][2]int64, 0, len(m))
	for k, v := range m {
		if v != 0 {
			out = append(out, [2]int64{k, v})
		}
	}
	slices.SortFunc(out, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	return out
}

// percentile is the nearest-rank p-th percentile of n values given as a
// sorted histogram: the smallest value with at least ceil(p/100 * n)
// values at or below it (0 for no values).
func percentile(h [][2]int64, n, p int) int64 {
	if n == 0 {
		return 0
	}
	rank := (int64(n)*int64(p) + 99) / 100
	var seen int64
	for _, kv := range h {
		seen += kv[1]
		if seen >= rank {
			return kv[0]
		}
	}
	return h[len(h)-1][0]
}

// GridRow is one candidate of a fleet's calibration grid: threshold
// permille of the recorded window, post-compaction percent (-1: the run's
// own), reproduced, exact, simulated. It encodes as an object with those
// names (gridRowJSON).
type GridRow [5]int

// gridRowJSON is a GridRow in the JSON outputs.
type gridRowJSON struct {
	CompactAtPermille  int  `json:"compact_at_permille"`  // of the recorded window
	PostCompactPercent *int `json:"post_compact_percent"` // of the recorded window; null: the run's own
	Reproduced         int  `json:"reproduced"`
	Exact              int  `json:"exact"`
	Simulated          int  `json:"simulated"`
}

func (g GridRow) MarshalJSON() ([]byte, error) {
	j := gridRowJSON{CompactAtPermille: g[0], Reproduced: g[2], Exact: g[3], Simulated: g[4]}
	if g[1] >= 0 {
		p := g[1]
		j.PostCompactPercent = &p
	}
	return json.Marshal(j)
}

func (g *GridRow) UnmarshalJSON(b []byte) error {
	var j gridRowJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("invalid fit_grid row %s: %w", b, err)
	}
	*g = GridRow{j.CompactAtPermille, -1, j.Reproduced, j.Exact, j.Simulated}
	if j.PostCompactPercent != nil {
		g[1] = *j.PostCompactPercent
	}
	return nil
}
