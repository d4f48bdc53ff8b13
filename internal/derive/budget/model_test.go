package budget

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/reconstruct"
)

func ptr(n int) *int { return &n }

// outcome is the part of an Outcome the hand computations check.
type outcome struct {
	Threshold, Post, Peak  int64
	Compactions, Overflows []int
	Deferrals, Undelivered int
	Exhausted              *int
	Reminders              int
}

func summarize(o Outcome) outcome {
	return outcome{Threshold: o.Threshold, Post: o.PostCompactTokens, Peak: o.PeakFill,
		Compactions: o.CompactionRequests, Overflows: o.OverflowRequests,
		Deferrals: o.Deferrals, Undelivered: o.Undelivered, Exhausted: o.LedgerExhaustedAt, Reminders: o.Reminders}
}

// Growth on basic.jsonl (evidence_test.go): F0 = 20,000, then +15,000,
// +25,000, +32,000, 0 (after the recorded compaction), +18,000, +15,000,
// +35,000. Post-compaction fill P = 12,000 (the one recorded). Ledger
// charge per request with weights 1: output + input - cached = 20,000,
// 15,000, 25,000, 32,000, 12,000, 18,000, 15,000, 35,000; cumulative
// 20k, 35k, 60k, 92k, 104k, 122k, 137k, 172k. Turn starts: before
// requests 1, 3 and 7, prompts 16, 15 and 16 tokens.
func TestSimulateBasicByHand(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	tests := []struct {
		name string
		set  func(*Settings)
		want outcome
	}{
		{
			// T = 90% of 100,000 = 90,000. Fills 20k, 35k, 60k, 92k (>= T);
			// compaction before request 5: 12k + 0 = 12k; then 30k, 45k, 80k.
			name: "recorded window",
			set:  func(s *Settings) {},
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{}},
		},
		{
			// T = 57,600. 20k, 35k, 60k (>= T, <= W); compaction before 4:
			// 12k + 32k = 44k; 5: 44k + 0 = 44k; 6: 62k (>= T); compaction
			// before 7: 12k + 15k = 27k; 8: 62k (last request, no compaction).
			name: "window 64k",
			set:  func(s *Settings) { s.Windows = []int64{64000} },
			want: outcome{Threshold: 57600, Post: 12000, Peak: 62000, Compactions: []int{4, 7}, Overflows: []int{}},
		},
		{
			// T = 180,000; the fill only grows: 20k, 35k, 60k, 92k, 92k,
			// 110k, 125k, 160k.
			name: "window 200k",
			set:  func(s *Settings) { s.Windows = []int64{200000} },
			want: outcome{Threshold: 180000, Post: 12000, Peak: 160000, Compactions: []int{}, Overflows: []int{}},
		},
		{
			// T = 63,000. 20k, 35k, 60k (< T); 4: 60k + 32k = 92k > 70k:
			// overflow, back to 12k; 5: 12k; 6: 30k; 7: 45k; 8: 80k > 70k:
			// overflow. Peak over the requests that fit: 60k.
			name: "window 70k overflows",
			set:  func(s *Settings) { s.Windows = []int64{70000} },
			want: outcome{Threshold: 63000, Post: 12000, Peak: 60000, Compactions: []int{}, Overflows: []int{4, 8}},
		},
		{
			// Absolute threshold 50,000 at W = 100,000: 20k, 35k, 60k (>= T);
			// 4: 12k + 32k = 44k; 5: 44k; 6: 62k (>= T); 7: 12k + 15k = 27k;
			// 8: 62k.
			name: "absolute threshold",
			set:  func(s *Settings) { s.CompactAt = Tokens(50000) },
			want: outcome{Threshold: 50000, Post: 12000, Peak: 62000, Compactions: []int{4, 7}, Overflows: []int{}},
		},
		{
			// P = 40,000 at W = 64k, T = 57,600: 20k, 35k, 60k; 4: 40k + 32k
			// = 72k > 64k: overflow, back to 40k; 5: 40k; 6: 58k (>= T);
			// 7: 40k + 15k = 55k; 8: 90k > 64k: overflow.
			name: "post-compaction fill given",
			set:  func(s *Settings) { s.Windows = []int64{64000}; s.PostCompact = 40000 },
			want: outcome{Threshold: 57600, Post: 40000, Peak: 60000, Compactions: []int{4, 7}, Overflows: []int{4, 8}},
		},
		{
			// Ledger 100,000: cumulative charge reaches 104,000 >= 100,000
			// at request 5, which aborts the rest. The compaction before 5
			// still happened. Reminders every 50,000: crossed at request 3
			// (60k) and 5 (104k).
			name: "ledger exhausted",
			set:  func(s *Settings) { s.Ledger = 100000; s.ReminderEvery = 50000 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{},
				Exhausted: ptr(5), Reminders: 2},
		},
		{
			// Output weighs 4: each request charges 3 x 1,000 more:
			// 23k, 41k, 69k, 104k -> exhausted at request 4, before the
			// compaction that request 5 would have needed.
			name: "ledger with output weight",
			set:  func(s *Settings) { s.Ledger = 100000; s.WeightOutput = 4 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{}, Overflows: []int{},
				Exhausted: ptr(4)},
		},
		{
			// Only output counts (1,000 per request): 8 x 1,000 = 8,000,
			// and a ledger of exactly 8,000 is exhausted by the last one.
			name: "ledger exhausted exactly at its size",
			set:  func(s *Settings) { s.Ledger = 8000; s.WeightInput = 0 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{},
				Exhausted: ptr(8)},
		},
		{
			name: "ledger one token larger survives",
			set:  func(s *Settings) { s.Ledger = 8001; s.WeightInput = 0 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{}},
		},
		{
			// Reminders without a ledger: 172,000 crosses 50k, 100k, 150k.
			name: "reminders only",
			set:  func(s *Settings) { s.ReminderEvery = 50000 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{}, Reminders: 3},
		},
		{
			// W = 30,000, T = 27,000, handoff of 15,000 at turn 1.
			// Turn 1 (fill 0, prompt 16): budget = min(16000, 64000,
			//   30000 - 0 - 16 - 16000 = 13984) = 13,984 < 15,000: deferred.
			// 1: 20k. 2: 35k > 30k: overflow, back to 12k.
			// Turn 2 (fill 12k, prompt 15): 30000 - 12000 - 15 - 16000 =
			//   1,985 < 15,000: deferred.
			// 3: 12k + 25k = 37k: overflow. 4: 12k + 32k = 44k: overflow.
			// 5: 12k + 0 = 12k. 6: 12k + 18k = 30k (fits; >= T).
			// Turn 4 (fill 30k): negative -> 0: deferred.
			// 7: compaction, 12k + 15k = 27k (>= T). 8: compaction, 12k +
			// 35k = 47k: overflow. End: still waiting -> undelivered.
			name: "handoff deferred at every turn",
			set:  func(s *Settings) { s.Windows = []int64{30000}; s.HandoffTokens = 15000 },
			want: outcome{Threshold: 27000, Post: 12000, Peak: 30000, Compactions: []int{7, 8}, Overflows: []int{2, 3, 4, 8},
				Deferrals: 3, Undelivered: 1},
		},
		{
			// Same at W = 100,000: turn 1 budget = min(16000, 64000,
			// 100000 - 16 - 25000) = 16,000 >= 15,000: delivered at once.
			name: "handoff delivered at the first turn",
			set:  func(s *Settings) { s.HandoffTokens = 15000 },
			want: outcome{Threshold: 90000, Post: 12000, Peak: 92000, Compactions: []int{5}, Overflows: []int{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultSettings()
			tt.set(&s)
			res, err := Simulate(ev, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Settings) != 1 {
				t.Fatalf("%d settings", len(res.Settings))
			}
			if diff := cmp.Diff(tt.want, summarize(res.Settings[0])); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimulateHandoffDetail(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	s := DefaultSettings()
	s.Windows = []int64{30000}
	s.HandoffTokens = 15000
	res, err := Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	want := []HandoffOutcome{{Source: "flag", Tokens: 15000, ArrivalTurn: ptr(1), WaitedTurns: 3}}
	if diff := cmp.Diff(want, res.Settings[0].Handoffs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The seed scenario of handoffs.md: a 1,000,000-token window at 840,960
// used. reserve = max(16000, ceil(1000000/4)) = 250,000, so
// 1000000 - 840960 - P - 250000 = -90,960 - P < 0: the budget is 0
// although 1000000 - 840960 = 159,040 tokens are free.
func TestHandoffBudgetSeed(t *testing.T) {
	const w, f = 1_000_000, 840_960
	if free := int64(w - f); free != 159_040 {
		t.Fatalf("free %d", free)
	}
	for _, cap := range []int64{16000, 64000, 1 << 40} {
		if b := handoffBudget(w, f, 0, cap); b != 0 {
			t.Errorf("cap %d: budget %d, want 0", cap, b)
		}
	}
	tests := []struct {
		w, f, p, cap, want int64
	}{
		// reserve = max(16000, ceil(258400/4) = 64600); 258400 - 100000 -
		// 50 - 64600 = 93,750; min(16000, 64000, 93750) = 16,000.
		{258400, 100000, 50, 16000, 16000},
		// same with cap 1e6: the 64,000 ceiling applies.
		{258400, 100000, 50, 1000000, 64000},
		// 258400 - 180000 - 50 - 64600 = 13,750.
		{258400, 180000, 50, 64000, 13750},
		// ceil(10001/4) = 2501 but the reserve is at least 16,000:
		// 40000 - 0 - 0 - 16000 = 24,000; cap 64000 -> 24,000.
		{40000, 0, 0, 64000, 24000},
		// ceil: W = 100001 -> reserve 25,001: 100001 - 10000 - 0 - 25001 =
		// 65,000 -> ceiling 64,000; with F = 12000: 63,000.
		{100001, 12000, 0, 64000, 63000},
		// Never negative.
		{20000, 19000, 10, 16000, 0},
	}
	for _, tt := range tests {
		if got := handoffBudget(tt.w, tt.f, tt.p, tt.cap); got != tt.want {
			t.Errorf("HandoffBudget(%d, %d, %d, %d) = %d, want %d", tt.w, tt.f, tt.p, tt.cap, got, tt.want)
		}
	}
}

// handoff-seed.jsonl (W = 1,000,000, T = 900,000, P = 60,000, the one
// recorded post-compaction fill):
//
//	request 1: 840,960 (before any turn)
//	turn 1 (prompt "continue" = 10 tokens) at fill 840,960:
//	    1000000 - 840960 - 10 - 250000 < 0 -> budget 0: a 20,000-token
//	    handoff is deferred although 159,040 tokens are free
//	request 2: 905,000 (+64,040, >= T)
//	request 3: compaction, 60,000 + 0 = 60,000
//	turn 2 (prompt 16 tokens) at fill 60,000:
//	    1000000 - 60000 - 16 - 250000 = 689,984 -> min(cap, 64000, ...)
//	request 4: 70,000
func TestSeedScenarioFixture(t *testing.T) {
	ev := extract(t, fixtures+"handoff-seed.jsonl")
	s := DefaultSettings()
	s.HandoffTokens = 20000
	s.HandoffCap = 64000
	res, err := Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Settings[0]
	want := outcome{Threshold: 900000, Post: 60000, Peak: 905000, Compactions: []int{3}, Overflows: []int{}, Deferrals: 1}
	if diff := cmp.Diff(want, summarize(o)); diff != "" {
		t.Errorf("cap 64000 (-want +got):\n%s", diff)
	}
	wantH := []HandoffOutcome{{Source: "flag", Tokens: 20000, ArrivalTurn: ptr(1), Delivered: true, DeliveredTurn: ptr(2), WaitedTurns: 1}}
	if diff := cmp.Diff(wantH, o.Handoffs); diff != "" {
		t.Errorf("cap 64000 handoffs (-want +got):\n%s", diff)
	}

	// Default cap 16,000: turn 2's budget is 16,000 < 20,000, deferred
	// again; still waiting at the end.
	s.HandoffCap = DefaultHandoffCap
	res, err = Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	want.Deferrals, want.Undelivered = 2, 1
	if diff := cmp.Diff(want, summarize(res.Settings[0])); diff != "" {
		t.Errorf("cap 16000 (-want +got):\n%s", diff)
	}
	if cal := res.Calibration; cal.Threshold == nil || *cal.Threshold != 900000 || cal.RecordedCompactions != 1 || cal.Reproduced != 1 {
		t.Errorf("calibration %+v", res.Calibration)
	}
}

// Recorded handoffs (Evidence.Handoffs) go through
// the same model: arrival at their target turn, end-of-file judgment when
// the target is not in the rollout. This is also the seed scenario with a
// recorded handoff.
func TestRecordedHandoffs(t *testing.T) {
	ev := seedEvidence(0)
	ev.Handoffs = []Handoff{
		// Turn 3 budget: min(64000, 64000, 1000000 - 60000 - 0 - 250000)
		// = 64,000, shared in arrival order: hof_seed (arrived at turn 2)
		// takes 20,000, then hof_late 30,000 of the 44,000 left.
		{ID: "hof_late", Line: 8, Tokens: 30000, TargetTurn: 2},
		// Turn 2 at 840,960: 1000000 - 840960 - 0 - 250000 < 0 -> budget
		// 0: deferred once, delivered at turn 3.
		{ID: "hof_seed", Line: 8, Tokens: 20000, TargetTurn: 1},
		// Not in the rollout: judged at the end (fill 60,000, prompt 0):
		// budget 64,000 -> fits exactly.
		{ID: "hof_missing", Line: 8, Tokens: 64000, TargetTurn: -1},
		// Also judged at the end: 0 left after hof_missing, and 64,001
		// would not fit a fresh 64,000 either: undelivered, and no
		// deferral (the end is not a turn).
		{ID: "hof_huge", Line: 8, Tokens: 64001, TargetTurn: -1},
	}
	s := DefaultSettings()
	s.HandoffCap = 64000
	res, err := Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	o := res.Settings[0]
	want := []HandoffOutcome{
		{ID: "hof_seed", Source: "recorded", Tokens: 20000, ArrivalTurn: ptr(2), Delivered: true, DeliveredTurn: ptr(3), WaitedTurns: 1},
		{ID: "hof_late", Source: "recorded", Tokens: 30000, ArrivalTurn: ptr(3), Delivered: true, DeliveredTurn: ptr(3)},
		{ID: "hof_missing", Source: "recorded", Tokens: 64000, Delivered: true},
		{ID: "hof_huge", Source: "recorded", Tokens: 64001},
	}
	if diff := cmp.Diff(want, o.Handoffs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if o.Deferrals != 1 || o.Undelivered != 1 {
		t.Errorf("deferrals %d, undelivered %d; want 1, 1", o.Deferrals, o.Undelivered)
	}

	// A handoff still waiting at the end is undelivered even where the
	// end-of-file budget would fit it: with a 700,000-token prompt at
	// turn 3 its budget is 0, while the end (prompt 0) has 64,000.
	ev = seedEvidence(700000)
	ev.Handoffs = []Handoff{{ID: "hof_x", Tokens: 20000, TargetTurn: 1}}
	res, _ = Simulate(ev, s)
	o = res.Settings[0]
	if o.Deferrals != 2 || o.Undelivered != 1 || o.Handoffs[0].WaitedTurns != 2 || o.Handoffs[0].Delivered {
		t.Errorf("got deferrals %d, %+v", o.Deferrals, o.Handoffs)
	}
}

// seedEvidence: W = 1,000,000, T = 900,000, P = 60,000 (the one recorded).
//
//	turn 1 at fill 0; request 1: 840,960
//	turn 2 at fill 840,960; request 2: 905,000 (>= T)
//	compaction; request 3: 60,000 + 0
//	turn 3 at fill 60,000, with a prompt of prompt3 tokens
func seedEvidence(prompt3 int64) *Evidence {
	c := NewCollector()
	turn := func(line int) {
		c.Observe(obs(line, reconstruct.FlowTurnStartedEvidence{TurnID: "", Window: 1000000}))
	}
	turn(1)
	c.Observe(tokenCount(2, 840960))
	turn(3)
	c.Observe(tokenCount(4, 905000))
	c.Observe(obs(5, reconstruct.FlowCompactionEvidence{}))
	c.Observe(tokenCount(6, 60000))
	turn(7)
	c.Observe(obs(8, reconstruct.FlowUserPromptEvidence{TurnID: "", Tokens: int64(prompt3)}))
	return c.Evidence(nil)
}

// Two handoffs at one turn share its budget, in arrival order.
func TestHandoffsShareTurnBudget(t *testing.T) {
	c := NewCollector()
	c.Observe(obs(1, reconstruct.FlowTurnStartedEvidence{TurnID: "", Window: 258400}))
	c.Observe(tokenCount(2, 1000))
	c.Observe(obs(3, reconstruct.FlowTurnStartedEvidence{TurnID: "", Window: 258400}))
	ev := c.Evidence(nil)
	ev.Handoffs = []Handoff{{ID: "a", Tokens: 10000, TargetTurn: 0}, {ID: "b", Tokens: 10000, TargetTurn: 0}}
	// Turn 1: budget 16,000: a fits (6,000 left), b does not: deferred.
	// Turn 2: fill 1,000: budget 16,000 again: b fits.
	res, _ := Simulate(ev, DefaultSettings())
	o := res.Settings[0]
	if o.Deferrals != 1 || o.Undelivered != 0 || *o.Handoffs[1].DeliveredTurn != 2 || *o.Handoffs[0].DeliveredTurn != 1 {
		t.Errorf("got deferrals %d, %+v", o.Deferrals, o.Handoffs)
	}
}

// calibration.jsonl (W = 200,000): fills 50k, 120k, 185k | compaction |
// 30k, 100k, 150k, 182k | compaction | 34k, 90k. Recorded compactions at
// requests 4 and 8; P = (30000 + 34000) / 2 = 32,000. Growth: 50k, 70k,
// 65k, 0, 70k, 50k, 32k, 0, 56k.
func TestCalibration(t *testing.T) {
	ev := extract(t, fixtures+"calibration.jsonl")
	tests := []struct {
		at   string
		want Calibration
		sim  []int // the calibration replay's compactions, via a run at W_rec
	}{
		// T = 180,000: 50k, 120k, 185k (>= T) -> compaction at 4: 32k;
		// 5: 102k; 6: 152k; 7: 184k (>= T) -> compaction at 8: 32k; 9: 88k.
		{"90%", Calibration{Threshold: ptr64(180000), RecordedCompactions: 2, Reproduced: 2}, []int{4, 8}},
		// T = 184,000: 185k >= T -> 4; 7: 184,000 >= 184,000 -> 8 (the
		// rule is "reached", >=).
		{"92%", Calibration{Threshold: ptr64(184000), RecordedCompactions: 2, Reproduced: 2}, []int{4, 8}},
		// T = 184,001: request 7's 184,000 no longer reaches it.
		{"184001", Calibration{Threshold: ptr64(184001), RecordedCompactions: 2, Reproduced: 1}, []int{4}},
		// T = 190,000: 185k < T; 4: 185k + 0; 5: 255k > 200k: overflow ->
		// 32k; 6: 82k; 7: 114k; 8: 114k; 9: 170k. No compaction at all.
		{"95%", Calibration{Threshold: ptr64(190000), RecordedCompactions: 2, Reproduced: 0}, []int{}},
	}
	for _, tt := range tests {
		t.Run(tt.at, func(t *testing.T) {
			th, err := ParseThreshold(tt.at)
			if err != nil {
				t.Fatal(err)
			}
			s := DefaultSettings()
			s.CompactAt = th
			res, err := Simulate(ev, s)
			if err != nil {
				t.Fatal(err)
			}
			got := res.Calibration
			got.CompactAt, got.Fitted = CompactAt{}, nil
			if !cmp.Equal(got, tt.want) {
				t.Errorf("calibration %+v, want %+v", res.Calibration, tt.want)
			}
			// The setting at the recorded window is the same replay.
			if diff := cmp.Diff(tt.sim, res.Settings[0].CompactionRequests, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("compactions (-want +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]int{4, 8}, ev.CompactionRequests()); diff != "" {
		t.Errorf("recorded (-want +got):\n%s", diff)
	}
}

func TestMatchWithin1(t *testing.T) {
	tests := []struct {
		rec, sim []int
		want     int
	}{
		{[]int{4, 8}, []int{4, 8}, 2},
		{[]int{4, 8}, []int{3, 9}, 2},
		{[]int{4, 8}, []int{2, 10}, 0},
		{[]int{4, 5}, []int{5}, 1},    // one simulated compaction matches one recorded
		{[]int{4, 5}, []int{4, 5}, 2}, // not 4-5 then nothing for 5
		{[]int{4, 5}, []int{3, 6}, 2}, // greedy earliest: 3-4, 6-5
		{[]int{10}, []int{}, 0},
		{[]int{}, []int{1, 2}, 0},
	}
	for _, tt := range tests {
		if got := matchWithin1(tt.rec, tt.sim); got != tt.want {
			t.Errorf("matchWithin1(%v, %v) = %d, want %d", tt.rec, tt.sim, got, tt.want)
		}
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		in     string
		window int64
		want   int64
		str    string
	}{
		{"90%", 258400, 232560, "90%"}, // budget.md's example
		{"90%", 128000, 115200, "90%"},
		{"87.5%", 100000, 87500, "87.5%"},
		{"33.3333%", 100, 33, "33.3333%"}, // floor(33.3333)
		{"100%", 12345, 12345, "100%"},
		{"0.01%", 99, 0, "0.01%"}, // floor(0.0099) = 0
		{"230000", 258400, 230000, "230000"},
		{"128k", 1, 128000, "128000"},
	}
	for _, tt := range tests {
		th, err := ParseThreshold(tt.in)
		if err != nil {
			t.Errorf("ParseThreshold(%q): %v", tt.in, err)
			continue
		}
		if got := th.At(tt.window); got != tt.want {
			t.Errorf("%s of %d = %d, want %d", tt.in, tt.window, got, tt.want)
		}
		if th.String() != tt.str {
			t.Errorf("%q prints as %q, want %q", tt.in, th.String(), tt.str)
		}
	}
	if got := (Threshold{}).At(1000); got != 900 {
		t.Errorf("zero threshold: %d, want 90%% = 900", got)
	}
	for _, bad := range []string{"", "0%", "101%", "-5%", "abc", "9.12345%", "%", "-5", "0", "1e3", ".5%", "5.%x"} {
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("ParseThreshold(%q) accepted", bad)
		}
	}
}

func TestParseTokens(t *testing.T) {
	good := map[string]int64{"258400": 258400, "128k": 128000, "128K": 128000, "1M": 1000000, "1.5M": 1500000, "0": 0, "2.5k": 2500,
		"1m": 1000000, "1,000,000": 1000000, "258,400": 258400}
	for in, want := range good {
		if got, err := ParseTokens(in); err != nil || got != want {
			t.Errorf("ParseTokens(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "k", "1.5", "1.0001k", "1e3k", "-1k", "x", "12 k", "0x10", "1,00", "1000,000", ",000", "1,000k"} {
		if _, err := ParseTokens(bad); err == nil {
			t.Errorf("ParseTokens(%q) accepted", bad)
		}
	}
}

func TestParseWindows(t *testing.T) {
	for in, want := range map[string][]int64{
		"1m":            {1000000},
		"1,000,000":     {1000000},
		"258,400":       {258400},
		"128000,258400": {128000, 258400},
		"64k,100,000":   {64000, 100000},
		"1M,128k, 272K": {1000000, 128000, 272000},
		"64000,100,000": {64000, 100000},
	} {
		if got, err := ParseWindows(in); err != nil || !slices.Equal(got, want) {
			t.Errorf("ParseWindows(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"0", "64k,abc", "1,000,00", "1,0000", ""} {
		if got, err := ParseWindows(bad); err == nil {
			t.Errorf("ParseWindows(%q) = %v, accepted", bad, got)
		}
	}
}

func TestSimulateErrorsAndWarnings(t *testing.T) {
	empty := NewCollector().Evidence(nil)
	if _, err := Simulate(empty, DefaultSettings()); err != ErrNoWindow {
		t.Errorf("no window: %v, want ErrNoWindow", err)
	}
	s := DefaultSettings()
	s.Windows = []int64{1000}
	res, err := Simulate(empty, s)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.Settings[0].Compactions != 0 || res.Calibration.Threshold != nil {
		t.Errorf("empty: %+v", res)
	}
	s.Windows = []int64{0}
	if _, err := Simulate(empty, s); err == nil {
		t.Error("window 0 accepted")
	}
	s.Windows = []int64{5}
	s.CompactAt = Percent(10) // floor(0.5) = 0
	if _, err := Simulate(empty, s); err == nil || !strings.Contains(err.Error(), "is 0 tokens") {
		t.Errorf("zero threshold: %v", err)
	}

	ev := extract(t, fixtures+"basic.jsonl")
	for _, tt := range []struct {
		set  func(*Settings)
		want string
	}{
		{func(s *Settings) { s.CompactAt = Tokens(200000) }, "threshold 200000 is above the window"},
		{func(s *Settings) { s.PostCompact = 95000 }, "at or above the threshold 90000"},
		{func(s *Settings) { s.PostCompact = 100001 }, "does not fit in the window"},
	} {
		s := DefaultSettings()
		tt.set(&s)
		res, err := Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], tt.want) {
			t.Errorf("warnings %q, want one with %q", res.Warnings, tt.want)
		}
	}
}

// A recorded drop without a compaction (negative growth) cannot take the
// simulated context below 0.
func TestNegativeGrowthClamped(t *testing.T) {
	c := NewCollector()
	c.Observe(tokenCount(1, 10000))
	c.Observe(obs(2, reconstruct.FlowCompactionEvidence{}))
	c.Observe(tokenCount(3, 50000)) // post-compaction fill: P = 50,000 by default
	c.Observe(tokenCount(4, 1000))  // growth -49,000
	ev := c.Evidence(nil)
	s := DefaultSettings()
	s.Windows = []int64{20000} // T = 18,000
	s.PostCompact = 0
	s.Trace = true
	// 1: 10,000. 2: 10,000 + 0. 3: 10,000 - 49,000 -> 0.
	res, _ := Simulate(ev, s)
	if diff := cmp.Diff([]int64{10000, 10000, 0}, res.Settings[0].Trace.Fills); diff != "" {
		t.Errorf("fills (-want +got):\n%s", diff)
	}
}
func ptr64(n int64) *int64 { return &n }

// Every second request compacts: the result lists each compaction, and the
// trace holds one fill per request (report's tables elide long lists).
func TestEveryOtherRequestCompacts(t *testing.T) {
	c := NewCollector()
	for i := 1; i <= 40; i++ {
		c.Observe(tokenCount(i, int64(1000*i)))
	}
	s := DefaultSettings()
	s.Windows = []int64{3000} // T = 2,700, P = F0 = 1,000, +1,000 per request
	s.Trace = true
	res, _ := Simulate(c.Evidence(nil), s)
	o := res.Settings[0]
	// 1: 1000, 2: 2000, 3: 3000 (>= T); compaction at 4: 1000 + 1000 =
	// 2000; 5: 3000; compaction at 6 ... every second request from 4.
	if o.Compactions != 19 || o.CompactionRequests[0] != 4 || o.CompactionRequests[18] != 40 {
		t.Fatalf("compactions %v", o.CompactionRequests)
	}
	// The trace: one fill per request, the compactions' starting fills.
	if len(o.Trace.Fills) != 40 || len(o.Trace.CompactionFrom) != 19 || o.Trace.CompactionFrom[0] != 3000 {
		t.Errorf("trace: %d fills, from %v", len(o.Trace.Fills), o.Trace.CompactionFrom)
	}
}
