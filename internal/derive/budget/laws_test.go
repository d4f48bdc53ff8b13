package budget

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rollout-dev/rollout/reconstruct"
)

// synthetic builds a thread of n requests through the Collector: growth in
// [0, maxGrowth] (never negative), a recorded compaction with probability
// 1/20 (the next fill is a post-compaction fill in [5k, 25k]), a turn
// every 1 to 8 requests, a rollback now and then.
func synthetic(seed uint64, n int, maxGrowth int64) *Evidence {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	c := NewCollector()
	line := 1
	next := func() int { line++; return line }
	fill := 5000 + r.Int64N(20000)
	untilTurn := 0
	for i := 0; i < n; i++ {
		if untilTurn == 0 {
			c.Observe(obs(next(), reconstruct.FlowTurnStartedEvidence{TurnID: "", Window: 258400}))
			c.Observe(obs(next(), reconstruct.FlowUserPromptEvidence{TurnID: "", Tokens: int64(2 + r.IntN(4000))}))
			untilTurn = 1 + r.IntN(8)
		}
		untilTurn--
		if i > 0 && r.IntN(20) == 0 {
			c.Observe(obs(next(), reconstruct.FlowCompactionEvidence{}))
			fill = 5000 + r.Int64N(20000)
		} else if i > 0 {
			fill += r.Int64N(maxGrowth + 1)
		}
		out := r.Int64N(3000)
		c.Observe(reconstruct.Observation{Pos: reconstruct.Pos{Line: next()},
			Evidence: reconstruct.FlowTokenCountEvidence{Fill: fill, Window: 258400, Input: fill - out,
				Cached: (fill - out) / 2, Output: out, Total: int64(i)}})
	}
	return c.Evidence(nil)
}

func settingsFor(windows ...int64) Settings {
	s := DefaultSettings()
	s.Windows = windows
	return s
}

// Law 1: a window larger than every simulated fill gives zero compactions
// and zero overflows.
func TestLawHugeWindow(t *testing.T) {
	evs := []*Evidence{extract(t, fixtures+"basic.jsonl"), extract(t, fixtures+"calibration.jsonl"),
		extract(t, fixtures+"handoff-seed.jsonl")}
	for seed := uint64(1); seed <= 20; seed++ {
		evs = append(evs, synthetic(seed, 500, 30000))
	}
	for i, ev := range evs {
		// No compaction ever: the fill is at most F0 + every positive growth.
		var bound int64
		for _, r := range ev.Requests {
			bound += max(0, r.Growth)
		}
		for _, w := range []int64{bound*10/9 + 10, 1 << 50} {
			res, err := Simulate(ev, settingsFor(w))
			if err != nil {
				t.Fatal(err)
			}
			o := res.Settings[0]
			if o.Compactions != 0 || o.Overflows != 0 {
				t.Errorf("evidence %d, window %d: %d compactions, %d overflows; want 0, 0", i, w, o.Compactions, o.Overflows)
			}
			if o.PeakFill > bound {
				t.Errorf("evidence %d: peak %d above the bound %d", i, o.PeakFill, bound)
			}
		}
	}
}

// Law 2: with no negative growth, growing W (T a fixed fraction of W)
// never increases the compactions. The law needs "no overflow": an
// overflow also resets the context (TestLawCounterexampleOverflow), so
// what holds for every window is that compactions + overflows never
// increase; compactions alone never increase between windows without
// overflows.
func TestLawMonotone(t *testing.T) {
	compared := 0
	for seed := uint64(1); seed <= 30; seed++ {
		ev := synthetic(seed, 400, 25000)
		for _, r := range ev.Requests {
			if r.Growth < 0 {
				t.Fatalf("seed %d: negative growth", seed)
			}
		}
		var windows []int64
		for w := int64(20000); w <= 4000000; w = w*11/10 + 1 {
			windows = append(windows, w)
		}
		for _, at := range []Threshold{Percent(90), Percent(50), Percent(99.5), Percent(100)} {
			s := settingsFor(windows...)
			s.CompactAt = at
			res, err := Simulate(ev, s)
			if err != nil {
				t.Fatal(err)
			}
			for i := 1; i < len(res.Settings); i++ {
				a, b := res.Settings[i-1], res.Settings[i]
				if b.Compactions+b.Overflows > a.Compactions+a.Overflows {
					t.Errorf("seed %d at %s: W %d -> %d: compactions+overflows %d -> %d", seed, at, a.Window, b.Window,
						a.Compactions+a.Overflows, b.Compactions+b.Overflows)
				}
				if a.Overflows == 0 && b.Overflows == 0 {
					compared++
					if b.Compactions > a.Compactions {
						t.Errorf("seed %d at %s: W %d -> %d: compactions %d -> %d", seed, at, a.Window, b.Window, a.Compactions, b.Compactions)
					}
				}
			}
		}
	}
	if compared < 1000 {
		t.Errorf("only %d overflow-free window pairs compared: the law was barely exercised", compared)
	}
}

// The law as budget.md words it does not survive overflows: growth 50 per
// request, P = 0. At W = 40 (T = 36) every request overflows and resets
// the context, so nothing is ever compacted; at W = 100 (T = 90) the fill
// reaches 100 >= 90 after request 2 and compacts before 3, 5, ...
func TestLawCounterexampleOverflow(t *testing.T) {
	c := NewCollector()
	for i := 1; i <= 6; i++ {
		c.Observe(tokenCount(i, int64(50*i)))
	}
	ev := c.Evidence(nil)
	s := settingsFor(40, 100)
	s.PostCompact = 0
	res, _ := Simulate(ev, s)
	small, big := res.Settings[0], res.Settings[1]
	// W=40: 50 > 40 at every request: 6 overflows, 0 compactions.
	// W=100: 50, 100 (>= 90), compaction at 3: 0 + 50, 4: 100, compaction
	// at 5: 50, 6: 100 -> compactions at 3 and 5.
	if small.Compactions != 0 || small.Overflows != 6 || big.Compactions != 2 || big.Overflows != 0 {
		t.Errorf("W=40: %d compactions %d overflows; W=100: %d compactions %d overflows",
			small.Compactions, small.Overflows, big.Compactions, big.Overflows)
	}
	if fmt.Sprint(big.CompactionRequests) != "[3 5]" {
		t.Errorf("W=100 compactions at %v, want [3 5]", big.CompactionRequests)
	}
}

// Law 3: the same input and settings give byte-identical output.
func TestLawDeterministic(t *testing.T) {
	render := func() []byte {
		ev := extract(t, fixtures+"basic.jsonl")
		s := settingsFor(30000, 64000, 100000, 200000)
		s.HandoffTokens = 15000
		s.Ledger = 150000
		s.ReminderEvery = 25000
		res, err := Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		// The printers are pure functions of the result (report's goldens).
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := render()
	for i := 0; i < 5; i++ {
		if got := render(); !bytes.Equal(first, got) {
			t.Fatalf("run %d differs from run 0", i+1)
		}
	}
}

func BenchmarkSimulate(b *testing.B) {
	ev := synthetic(7, 100000, 25000)
	s := settingsFor(128000, 258400, 1000000)
	s.HandoffTokens = 20000
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Simulate(ev, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCollect(b *testing.B) {
	o := reconstruct.Observation{Evidence: reconstruct.FlowTokenCountEvidence{
		Fill: 1, Window: 2, Input: 3, Cached: 4, Output: 5, Total: 6}}
	b.ReportAllocs()
	for b.Loop() {
		c := NewCollector()
		for i := 0; i < 10000; i++ {
			o.Pos.Line = i
			c.Observe(o)
		}
		c.Evidence(nil)
	}
}
