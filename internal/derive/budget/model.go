package budget

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-dev/rollout/reconstruct"
)

// DefaultHandoffCap is the budget cap of handoffs.md unless configured.
const DefaultHandoffCap = reconstruct.DefaultHandoffCap

// ErrNoWindow: no --window was given and the rollout records none.
var ErrNoWindow = errors.New("the rollout records no context window")

// handoffBudget is the budget of handoffs.md at a turn start: with window
// W, context fill F and a prompt of P tokens,
//
//	reserve = max(16000, ceil(W/4))
//	budget  = max(0, min(cap, 64000, W - F - P - reserve))
//
// It is the engine's formula (the one verify judges recorded handoffs
// with), so the model and the checks cannot drift apart.
func handoffBudget(window, fill, prompt, cap int64) int64 {
	return reconstruct.HandoffBudget(window, fill, prompt, cap)
}

// Threshold is a compaction threshold: an absolute number of tokens or a
// percentage of the window. The zero value is 90%.
type Threshold struct {
	tokens   int64
	num, den int64 // percentage num/den; den == 0: absolute tokens
	auto     bool  // fit it to the recorded compactions (see FitGrid)
}

// autoThreshold is the threshold that --compact-at auto asks for: the one that best
// reproduces the recorded compactions.
func autoThreshold() Threshold { return Threshold{auto: true} }

// IsAuto reports whether the threshold is to be fitted.
func (t Threshold) IsAuto() bool { return t.auto }

// Percent returns the threshold p% of the window (p may have decimals).
func Percent(p float64) Threshold {
	t, _ := ParseThreshold(strconv.FormatFloat(p, 'f', -1, 64) + "%")
	return t
}

// Tokens returns an absolute threshold.
func Tokens(n int64) Threshold { return Threshold{tokens: n} }

// ParseThreshold reads N (tokens, k/M suffixes allowed) or P% (0 < P <=
// 100, up to 4 decimals).
func ParseThreshold(s string) (Threshold, error) {
	if s == "auto" {
		return autoThreshold(), nil
	}
	if p, ok := strings.CutSuffix(s, "%"); ok {
		whole, frac, _ := strings.Cut(p, ".")
		if whole == "" || len(frac) > 4 || strings.TrimLeft(whole+frac, "0123456789") != "" {
			return Threshold{}, fmt.Errorf("invalid percentage %q (want e.g. 90%% or 87.5%%)", s)
		}
		num, err := strconv.ParseInt(whole+frac, 10, 64)
		den := int64(math.Pow10(len(frac)))
		if err != nil || num <= 0 || num > 100*den {
			return Threshold{}, fmt.Errorf("invalid percentage %q (want more than 0%% and at most 100%%)", s)
		}
		return Threshold{num: num, den: den}, nil
	}
	n, err := ParseTokens(s)
	if err != nil || n <= 0 {
		return Threshold{}, fmt.Errorf("invalid threshold %q (want tokens, e.g. 230000, or a percentage, e.g. 90%%)", s)
	}
	return Threshold{tokens: n}, nil
}

// At is the threshold in tokens for window w: P% gives floor(P/100 * w).
func (t Threshold) At(w int64) int64 {
	if t.den == 0 && t.tokens == 0 {
		t = Threshold{num: 90, den: 1}
	}
	if t.den == 0 {
		return t.tokens
	}
	// Exact integer arithmetic: 90% of 258400 is 232560, not 232559.
	v := new(big.Int).Mul(big.NewInt(w), big.NewInt(t.num))
	v.Quo(v, big.NewInt(100*t.den))
	return v.Int64()
}

func (t Threshold) String() string {
	if t.auto {
		return "auto"
	}
	if t.den == 0 && t.tokens == 0 {
		return "90%"
	}
	if t.den == 0 {
		return strconv.FormatInt(t.tokens, 10)
	}
	s := new(big.Rat).SetFrac64(t.num, t.den).FloatString(4)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// CompactAt is a threshold as the JSON outputs give it: a kind and a
// number, so that a consumer reads it without parsing "90%".
type CompactAt struct {
	Kind  string   `json:"kind"`  // percent | tokens | auto
	Value *float64 `json:"value"` // the percentage (87.5) or the tokens; null for auto
}

// The kinds of CompactAt.
const (
	KindPercent = "percent"
	KindTokens  = "tokens"
	KindAuto    = "auto"
)

// JSON is the threshold as the JSON outputs give it.
func (t Threshold) JSON() CompactAt {
	var v float64
	switch {
	case t.auto:
		return CompactAt{Kind: KindAuto}
	case t.den == 0 && t.tokens == 0:
		v = 90
	case t.den == 0:
		v = float64(t.tokens)
		return CompactAt{Kind: KindTokens, Value: &v}
	default:
		v, _ = new(big.Rat).SetFrac64(t.num, t.den).Float64()
	}
	return CompactAt{Kind: KindPercent, Value: &v}
}

// String spells the threshold as --compact-at takes it: "87.5%",
// "230000", "auto".
func (c CompactAt) String() string {
	switch {
	case c.Kind == KindAuto || c.Value == nil:
		return "auto"
	case c.Kind == KindTokens:
		return strconv.FormatFloat(*c.Value, 'f', -1, 64)
	default:
		return strconv.FormatFloat(*c.Value, 'f', -1, 64) + "%"
	}
}

// ParseWindows reads a comma-separated list of windows, each a token
// count above 0 (ParseTokens). The tool prints counts with thousands
// separators ("1,000,000"), so a part of exactly three digits continues
// the number before it when that began with one to three plain digits:
// "1,000,000" is one window, "128000,258400" and "64k,100,000" are two.
func ParseWindows(s string) ([]int64, error) {
	var ws []int64
	for _, part := range joinThousands(strings.Split(s, ",")) {
		v, err := ParseTokens(strings.TrimSpace(part))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("invalid window %q (want tokens, e.g. 258400, 258,400 or 128k)", strings.TrimSpace(part))
		}
		ws = append(ws, v)
	}
	return ws, nil
}

// joinThousands rejoins the digit groups of "1,000,000" that a split on
// commas took apart.
func joinThousands(parts []string) []string {
	var out []string
	grouping := false // the last part of out may take another group
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if grouping && len(p) == 3 && allDigits(p) {
			out[len(out)-1] += "," + p
			continue
		}
		out = append(out, p)
		grouping = len(p) >= 1 && len(p) <= 3 && allDigits(p)
	}
	return out
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// ParseTokens reads a token count: digits, optionally grouped by commas
// as the tool prints them ("258,400"), or a number with a k (x1000) or M
// (x1000000) suffix in either case ("258400", "128k", "1m", "1.5M").
func ParseTokens(s string) (int64, error) {
	if groups := strings.Split(s, ","); len(groups) > 1 {
		for i, g := range groups {
			if !allDigits(g) || len(g) > 3 || (i > 0 && len(g) != 3) {
				return 0, fmt.Errorf("invalid token count %q (digit groups are 1,000,000)", s)
			}
		}
		s = strings.Join(groups, "")
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, s = 1e3, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, s = 1e6, s[:len(s)-1]
	}
	if mult == 1 {
		return strconv.ParseInt(s, 10, 64)
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*mult > math.MaxInt64/2 || s == "" || strings.ContainsAny(s, "eEpPxX_+-") {
		return 0, fmt.Errorf("invalid token count %q", s)
	}
	v := f * mult
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("invalid token count %q (not a whole number)", s)
	}
	return int64(v), nil
}

// Settings are the what-if parameters. Start from DefaultSettings.
type Settings struct {
	// Windows are the simulated context windows, one result each, in this
	// order; empty: the recorded window.
	Windows   []int64
	CompactAt Threshold
	// PostCompact is the fill right after a simulated compaction; < 0:
	// Evidence.DefaultPostCompact.
	PostCompact int64
	// PostCompactPercent, when set, is the post-compaction fill as a
	// percentage of each rollout's recorded window (a fleet's fit); it
	// overrides PostCompact.
	PostCompactPercent *int
	// HandoffTokens adds one handoff of this many tokens arriving at the
	// first turn (0: none).
	HandoffTokens int64
	HandoffCap    int64
	// Ledger is the shared ledger's size (0: no ledger). Every request
	// charges WeightOutput*output + WeightInput*(input-cached).
	Ledger                    int64
	WeightOutput, WeightInput float64
	// ReminderEvery fires a reminder each time the charged total crosses a
	// multiple of it (0: none). It works without a ledger too.
	ReminderEvery int64
	// Trace keeps the fill after every request, for charts.
	Trace bool
	// Stop, when set, ends the simulation after that many requests as an
	// exhausted ledger does (the rest of the turn and every later one are
	// aborted): a shared ledger that another thread exhausted (see
	// shareLedger). Shared names that exhaustion in the outcome.
	Stop   *int
	Shared *SharedLedger
}

// DefaultSettings are the defaults of cli.md.
func DefaultSettings() Settings {
	return Settings{CompactAt: Percent(90), PostCompact: -1, HandoffCap: DefaultHandoffCap,
		WeightOutput: 1, WeightInput: 1}
}

// Result is the designed output of simulate-budget (budget.md). Fields
// tagged "-" feed the table and the charts, never the JSON.
type Result struct {
	Path        string      `json:"path"`
	Requests    int         `json:"requests"`
	Turns       int         `json:"turns"`
	Recorded    Recorded    `json:"recorded"`
	Calibration Calibration `json:"calibration"`
	Settings    []Outcome   `json:"settings"`

	// RecordedFills are the recorded fills per request (with Trace).
	RecordedFills []int64 `json:"-"`
	// Warnings are settings that make the model degenerate, for stderr.
	Warnings []string `json:"-"`
	params   Settings
	// The calibration run's exact matches and simulated compactions, for
	// a fleet's sums.
	calExact, calSimulated int
	grid                   *FitGrid // the calibration fit's scores of this rollout
}

// calibrate replays the evidence at the recorded window with threshold
// s.CompactAt: how many recorded compactions the model reproduces, and
// whether the fit (grid) finds a better threshold.
func (res *Result) calibrate(ev *Evidence, s Settings, post int64, grid *FitGrid) {
	t := s.CompactAt.At(ev.Window)
	cal := Settings{PostCompact: post, HandoffCap: s.HandoffCap}
	o := run(ev, ev.Window, t, post, &cal, false)
	res.Calibration.Threshold = &t
	res.Calibration.Reproduced = matchWithin1(res.Recorded.CompactionRequests, o.CompactionRequests)
	res.calExact = matchExact(res.Recorded.CompactionRequests, o.CompactionRequests)
	res.calSimulated = o.Compactions
	chosen := FitPoint{Reproduced: res.Calibration.Reproduced, Simulated: o.Compactions, Exact: res.calExact}
	if f := fitted(grid, chosen); f != nil {
		best, _ := grid.Best()
		ft, fp := best.Threshold().At(ev.Window), post
		if best.PostPercent >= 0 {
			fp = ev.Window * int64(best.PostPercent) / 100
		}
		f.Threshold, f.PostCompactTokens = &ft, &fp
		res.Calibration.Fitted = f
	}
}

// Params are the settings the result was simulated with (CompactAt
// resolved when it was auto), for the table's columns.
func (r *Result) Params() Settings { return r.params }

// Recorded is what the rollout itself did.
type Recorded struct {
	Window             int64 `json:"window"`
	Compactions        int   `json:"compactions"`
	CompactionRequests []int `json:"compaction_requests"`
	PeakFill           int64 `json:"peak_fill"` // additive
}

// Calibration: the model replayed with the recorded window and the given
// threshold, and how many recorded compactions it reproduces (same request
// number, +/- 1).
type Calibration struct {
	// Threshold is CompactAt in tokens at the recorded window (null: the
	// rollout records no window).
	Threshold           *int64 `json:"threshold"`
	RecordedCompactions int    `json:"recorded_compactions"`
	Reproduced          int    `json:"reproduced"`
	// CompactAt is the threshold used (after --compact-at auto), Auto
	// whether it was fitted, Fitted the best fit over the grid of FitGrid
	// (null when nothing was recorded to fit).
	CompactAt CompactAt `json:"compact_at"`
	Auto      bool      `json:"auto"`
	Fitted    *Fitted   `json:"fitted"`
}

// Outcome is the model's result under one window.
type Outcome struct {
	Window             int64 `json:"window"`
	Threshold          int64 `json:"threshold"`
	PostCompactTokens  int64 `json:"post_compact_tokens"`
	Compactions        int   `json:"compactions"`
	CompactionRequests []int `json:"compaction_requests"`
	PeakFill           int64 `json:"peak_fill"`
	Overflows          int   `json:"overflows"`
	OverflowRequests   []int `json:"overflow_requests"`
	Deferrals          int   `json:"deferrals"`
	LedgerExhaustedAt  *int  `json:"ledger_exhausted_at"`
	Reminders          int   `json:"reminders"`
	// Additive: per-handoff detail.
	Undelivered int              `json:"undelivered"`
	Handoffs    []HandoffOutcome `json:"handoffs"`
	// SharedLedger: this thread was charged to a ledger shared with its
	// parent or sub-agents, which the named thread and request exhausted
	// (null: no shared ledger, or not exhausted).
	SharedLedger *SharedLedger `json:"shared_ledger,omitempty"`

	Trace *Trace `json:"-"`
}

// HandoffOutcome is what became of one handoff under one setting. Turn
// numbers are 1-based among the turns that were not rolled back; null
// arrival: its target turn is not in the rollout and it was judged at the
// end of the file.
type HandoffOutcome struct {
	ID            string `json:"id,omitempty"`
	Source        string `json:"source"` // "flag" (--handoff-tokens) or "recorded"
	Tokens        int64  `json:"tokens"`
	ArrivalTurn   *int   `json:"arrival_turn"`
	Delivered     bool   `json:"delivered"`
	DeliveredTurn *int   `json:"delivered_turn"`
	WaitedTurns   int    `json:"waited_turns"` // turns at which it was deferred
}

// Trace is the fill per simulated request, for charts.
type Trace struct {
	// Fills[i] is the fill after request i+1 added its growth (above the
	// window when that request overflowed).
	Fills []int64
	// CompactionFrom[k] is the fill that compaction k started from.
	CompactionFrom []int64
}

// Simulate runs the model of budget.md over the evidence, once per window.
// Its cost is linear in the requests, turns and handoffs.
func Simulate(ev *Evidence, s Settings) (*Result, error) {
	windows := s.Windows
	if len(windows) == 0 {
		if ev.Window <= 0 {
			return nil, ErrNoWindow
		}
		windows = []int64{ev.Window}
	}
	for _, w := range windows {
		if w <= 0 {
			return nil, fmt.Errorf("invalid window %d", w)
		}
	}
	post := s.PostCompact
	if post < 0 {
		post = ev.DefaultPostCompact()
	}
	if s.PostCompactPercent != nil && ev.Window > 0 {
		post = ev.Window * int64(*s.PostCompactPercent) / 100
	}
	// The fit searches the post-compaction fill too only when nothing fixes it.
	auto := s.CompactAt.IsAuto()
	grid := newFitGrid(auto && s.PostCompact < 0 && s.PostCompactPercent == nil)
	grid.Add(ev, post)
	var warnings []string
	if auto {
		s.CompactAt = Percent(90)
		if best, ok := grid.Best(); ok {
			s.CompactAt = best.Threshold()
			if best.PostPercent >= 0 {
				post = ev.Window * int64(best.PostPercent) / 100
			}
		} else {
			warnings = append(warnings, "--compact-at auto: no recorded compaction to fit; using 90%")
		}
	}
	res := &Result{Warnings: warnings, Path: ev.Path,
		Requests: len(ev.Requests), Turns: len(ev.Turns), params: s,
		Recorded: Recorded{Window: ev.Window, Compactions: len(ev.Compactions),
			CompactionRequests: ev.CompactionRequests()},
		Settings: make([]Outcome, 0, len(windows)), grid: grid,
	}
	for _, r := range ev.Requests {
		res.Recorded.PeakFill = max(res.Recorded.PeakFill, r.Fill)
		if s.Trace {
			res.RecordedFills = append(res.RecordedFills, r.Fill)
		}
	}

	res.Calibration = Calibration{RecordedCompactions: len(ev.Compactions), CompactAt: s.CompactAt.JSON(), Auto: auto}
	if ev.Window > 0 {
		res.calibrate(ev, s, post, grid)
	}

	for _, w := range windows {
		t := s.CompactAt.At(w)
		if t <= 0 {
			return nil, fmt.Errorf("threshold %s of window %d is 0 tokens", s.CompactAt, w)
		}
		o := run(ev, w, t, post, &s, true)
		res.Settings = append(res.Settings, o)
		switch {
		case t > w:
			res.Warnings = append(res.Warnings, fmt.Sprintf("window %d: threshold %d is above the window; the model never compacts, requests overflow instead", w, t))
		case post > w:
			res.Warnings = append(res.Warnings, fmt.Sprintf("window %d: the post-compaction fill %d does not fit in the window", w, post))
		case post >= t:
			res.Warnings = append(res.Warnings, fmt.Sprintf("window %d: the post-compaction fill %d is at or above the threshold %d; the model compacts before every request", w, post, t))
		}
	}
	return res, nil
}

// pending is a handoff not delivered yet.
type pending struct {
	out     *HandoffOutcome
	arrival int // 0-based turn; len(turns) = judged at the end of the file
}

// run is the model under one setting. full enables handoffs, the ledger
// and reminders (calibration runs without them).
func run(ev *Evidence, W, T, P int64, s *Settings, full bool) Outcome {
	o := Outcome{Window: W, Threshold: T, PostCompactTokens: P,
		CompactionRequests: []int{}, OverflowRequests: []int{}, Handoffs: []HandoffOutcome{}}
	if full && s.Trace {
		o.Trace = &Trace{Fills: make([]int64, 0, len(ev.Requests))}
	}
	turns := ev.Turns
	var queue []pending // in arrival order
	if full {
		o.Handoffs, queue = handoffQueue(ev, s)
	}
	var active []pending
	next := 0 // next queue entry to arrive

	// meet judges the arrived handoffs at turn t (len(turns): the end of
	// the file, prompt 0) against the budget at fill f.
	meet := func(t int, f int64) {
		if t == len(turns) {
			// Handoffs still waiting at the end stay undelivered; only
			// those whose target turn is not in the rollout are judged.
			active = active[:0]
		}
		for next < len(queue) && queue[next].arrival <= t {
			active = append(active, queue[next])
			next++
		}
		if len(active) == 0 {
			return
		}
		var prompt int64
		if t < len(turns) {
			prompt = turns[t].PromptTokens
		}
		left := handoffBudget(W, f, prompt, s.HandoffCap)
		kept := active[:0]
		for _, p := range active {
			switch {
			case p.out.Tokens <= left:
				left -= p.out.Tokens
				p.out.Delivered = true
				if t < len(turns) {
					n := t + 1
					p.out.DeliveredTurn = &n
				}
			case t < len(turns):
				p.out.WaitedTurns++
				o.Deferrals++
				kept = append(kept, p)
			}
			// At the end of the file one that does not fit stays
			// undelivered: there is no later turn to retry at.
		}
		active = kept
	}

	var led ledger
	f := int64(0)
	ti := 0
	aborted := false
	if full && s.Stop != nil && *s.Stop == 0 {
		// The shared ledger was exhausted before this thread's first
		// request: nothing of it happens.
		aborted = true
	}
	for i, r := range ev.Requests {
		if aborted {
			break
		}
		for full && ti < len(turns) && turns[ti].FirstRequest <= i {
			meet(ti, f)
			ti++
		}
		if i > 0 && f >= T {
			o.Compactions++
			o.CompactionRequests = append(o.CompactionRequests, i+1)
			if o.Trace != nil {
				o.Trace.CompactionFrom = append(o.Trace.CompactionFrom, f)
			}
			f = P
		}
		// A context cannot be negative, whatever a recorded drop says.
		f = max(0, f+r.Growth)
		if o.Trace != nil {
			o.Trace.Fills = append(o.Trace.Fills, f)
		}
		if f > W {
			o.Overflows++
			o.OverflowRequests = append(o.OverflowRequests, i+1)
			f = P
		} else {
			o.PeakFill = max(o.PeakFill, f)
		}
		if full && led.charge(s, r, &o) {
			n := i + 1
			o.LedgerExhaustedAt = &n
			aborted = true
			break
		}
		if full && s.Stop != nil && i+1 >= *s.Stop {
			aborted = true
			break
		}
	}
	if full && !aborted {
		for ; ti < len(turns); ti++ {
			meet(ti, f)
		}
		meet(len(turns), f)
	}
	if full && s.Shared != nil {
		sh := *s.Shared
		o.SharedLedger = &sh
		if sh.ThreadID == ev.ThreadID && ev.ThreadID != "" {
			n := sh.Request
			o.LedgerExhaustedAt = &n
		}
	}
	for _, h := range o.Handoffs {
		if !h.Delivered {
			o.Undelivered++
		}
	}
	return o
}

// ledger is the charged total of the shared ledger.
type ledger struct{ total float64 }

// charge books one request; it reports whether the ledger is exhausted
// (charged total >= ledger size).
func (l *ledger) charge(s *Settings, r Request, o *Outcome) bool {
	if s.Ledger <= 0 && s.ReminderEvery <= 0 {
		return false
	}
	before := l.total
	l.total += s.WeightOutput*float64(r.Output) + s.WeightInput*float64(max(0, r.Input-r.Cached))
	if s.ReminderEvery > 0 {
		every := float64(s.ReminderEvery)
		o.Reminders += int(math.Floor(l.total/every) - math.Floor(before/every))
	}
	return s.Ledger > 0 && l.total >= float64(s.Ledger)
}

// handoffQueue lists the handoffs of a run in arrival order: the one of
// --handoff-tokens at the first turn, then the recorded ones at their
// target turns (record order among equals).
func handoffQueue(ev *Evidence, s *Settings) ([]HandoffOutcome, []pending) {
	end := len(ev.Turns)
	type entry struct {
		h       HandoffOutcome
		arrival int
	}
	var es []entry
	if s.HandoffTokens > 0 {
		es = append(es, entry{HandoffOutcome{Source: "flag", Tokens: s.HandoffTokens}, 0})
	}
	for _, h := range ev.Handoffs {
		a := h.TargetTurn
		if a < 0 || a >= end {
			a = end
		}
		es = append(es, entry{HandoffOutcome{ID: h.ID, Source: "recorded", Tokens: h.Tokens}, a})
	}
	slices.SortStableFunc(es, func(a, b entry) int { return cmp.Compare(a.arrival, b.arrival) })
	outs := make([]HandoffOutcome, len(es))
	queue := make([]pending, len(es))
	for i, e := range es {
		outs[i] = e.h
		if e.arrival < end {
			n := e.arrival + 1
			outs[i].ArrivalTurn = &n
		}
		queue[i] = pending{out: &outs[i], arrival: e.arrival}
	}
	return outs, queue
}

// matchWithin1 counts recorded compactions that a simulated compaction
// reproduces at the same request number +/- 1, each simulated compaction
// matching at most one recorded one. Both lists are ascending; greedy
// earliest matching is optimal for equal-width windows.
func matchWithin1(recorded, simulated []int) int {
	n, j := 0, 0
	for _, r := range recorded {
		for j < len(simulated) && simulated[j] < r-1 {
			j++
		}
		if j < len(simulated) && simulated[j] <= r+1 {
			n++
			j++
		}
	}
	return n
}
