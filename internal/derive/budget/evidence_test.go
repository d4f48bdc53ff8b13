package budget

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/rollout-dev/rollout/reconstruct"
)

const fixtures = "../../../fixtures/budget/"

// extract replays a fixture through the engine into a Collector.
func extract(t testing.TB, path string) *Evidence {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := NewCollector()
	st, err := reconstruct.Replay(f, reconstruct.ReplayOptions{Options: reconstruct.Options{Path: path}}, c.Observe)
	if err != nil {
		t.Fatal(err)
	}
	ev := c.Evidence(st)
	ev.Path = path
	return ev
}

// basic.jsonl, line by line (window 100,000; every request outputs 1,000
// tokens and its cached input is the previous fill of the same window):
//
//	 2 task_started turn 1, prompt "fix the parser" (line 5)
//	 6 token_count with info null                      -> no request
//	 7 token_count fill 20,000                         -> request 1
//	 9 token_count fill 35,000                         -> request 2
//	10 the same snapshot again (re-emitted)            -> dropped
//	12 task_started turn 2, prompt "run the suite"
//	16 fill 60,000, 17 fill 92,000                     -> requests 3, 4
//	18 compacted                                       -> recorded compaction
//	20 fill 12,000 (post-compaction), 21 fill 30,000   -> requests 5, 6
//	24 task_started turn 3, prompt "rewrite the lexer"
//	28 fill 88,000, 29 compacted, 31 fill 15,000
//	33 thread_rolled_back num_turns 1                  -> drops lines 24..32
//	34 task_started turn 4, prompt `add a "test"`
//	38 fill 45,000, 39 fill 80,000                     -> requests 7, 8
func TestEvidenceBasic(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	want := []Request{
		// First request: its whole fill is the initial context F0.
		{Line: 7, Fill: 20000, Window: 100000, Input: 19000, Cached: 0, Output: 1000, Growth: 20000},
		{Line: 9, Fill: 35000, Window: 100000, Input: 34000, Cached: 20000, Output: 1000, Growth: 35000 - 20000},
		{Line: 16, Fill: 60000, Window: 100000, Input: 59000, Cached: 35000, Output: 1000, Growth: 60000 - 35000},
		{Line: 17, Fill: 92000, Window: 100000, Input: 91000, Cached: 60000, Output: 1000, Growth: 92000 - 60000},
		// First request after the compaction of line 18: no growth.
		{Line: 20, Fill: 12000, Window: 100000, Input: 11000, Cached: 0, Output: 1000, Growth: 0, AfterCompaction: true},
		{Line: 21, Fill: 30000, Window: 100000, Input: 29000, Cached: 12000, Output: 1000, Growth: 30000 - 12000},
		// After the rollback: the rolled-back compaction of line 29 is
		// gone, so this is ordinary growth from request 6 (30,000).
		{Line: 38, Fill: 45000, Window: 100000, Input: 44000, Cached: 30000, Output: 1000, Growth: 45000 - 30000},
		{Line: 39, Fill: 80000, Window: 100000, Input: 79000, Cached: 45000, Output: 1000, Growth: 80000 - 45000},
	}
	// Times are checked in TestRequestTimes; here the fills and growth.
	if diff := cmp.Diff(want, ev.Requests, cmpopts.IgnoreFields(Request{}, "At")); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	// Prompt tokens: JSON-encoded UTF-8 bytes with quotes.
	//   "fix the parser": 14 + 2 = 16; "run the suite": 13 + 2 = 15;
	//   add a "test": 12 characters, 2 escaped quotes (+2), + 2 = 16.
	wantTurns := []Turn{
		{Line: 2, ID: "019df2a1-0000-7000-8000-000000000011", Window: 100000, PromptTokens: 16, FirstRequest: 0},
		{Line: 12, ID: "019df2a1-0000-7000-8000-000000000012", Window: 100000, PromptTokens: 15, FirstRequest: 2},
		{Line: 34, ID: "019df2a1-0000-7000-8000-000000000014", Window: 100000, PromptTokens: 16, FirstRequest: 6},
	}
	if diff := cmp.Diff(wantTurns, ev.Turns); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Compaction{{Line: 18, Request: 4}}, ev.Compactions); diff != "" {
		t.Errorf("compactions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{5}, ev.CompactionRequests()); diff != "" {
		t.Errorf("compaction requests (-want +got):\n%s", diff)
	}
	if ev.Window != 100000 || ev.F0() != 20000 {
		t.Errorf("window %d, F0 %d; want 100000, 20000", ev.Window, ev.F0())
	}
	// One recorded post-compaction fill: 12,000.
	if got := ev.DefaultPostCompact(); got != 12000 {
		t.Errorf("default post-compaction fill %d, want 12000", got)
	}
	if len(ev.Handoffs) != 0 || ev.Handoffs == nil {
		t.Errorf("handoffs %#v, want an empty slice", ev.Handoffs)
	}
}

// handoff-seed.jsonl: a resumed thread; its first token_count (840,960 of
// 1,000,000) comes before the first task_started.
func TestEvidenceRequestBeforeFirstTurn(t *testing.T) {
	ev := extract(t, fixtures+"handoff-seed.jsonl")
	fills := []int64{}
	for _, r := range ev.Requests {
		fills = append(fills, r.Fill)
	}
	if diff := cmp.Diff([]int64{840960, 905000, 60000, 70000}, fills); diff != "" {
		t.Errorf("fills (-want +got):\n%s", diff)
	}
	// Turn 1 starts after request 1, turn 2 after request 3.
	// "continue": 8 + 2 = 10 tokens; "port the tests": 14 + 2 = 16.
	got := [][3]int64{}
	for _, tr := range ev.Turns {
		got = append(got, [3]int64{int64(tr.FirstRequest), tr.PromptTokens, tr.Window})
	}
	if diff := cmp.Diff([][3]int64{{1, 10, 1000000}, {3, 16, 1000000}}, got); diff != "" {
		t.Errorf("turns (first request, prompt, window) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{3}, ev.CompactionRequests()); diff != "" {
		t.Errorf("compaction requests (-want +got):\n%s", diff)
	}
}

func obs(line int, ev reconstruct.Evidence) reconstruct.Observation {
	return reconstruct.Observation{Pos: reconstruct.Pos{Line: line}, Evidence: ev}
}

func tokenCount(line int, fill int64) reconstruct.Observation {
	return obs(line, reconstruct.FlowTokenCountEvidence{Fill: fill, Input: fill, Total: int64(line)})
}

// Collector edge cases fed directly with observations.
func TestCollectorEdges(t *testing.T) {
	t.Run("window from task_started without token counts", func(t *testing.T) {
		c := NewCollector()
		c.Observe(obs(2, reconstruct.FlowTurnStartedEvidence{TurnID: "a", Window: 258400}))
		ev := c.Evidence(nil)
		if ev.Window != 258400 || len(ev.Requests) != 0 || ev.Requests == nil {
			t.Errorf("window %d, requests %#v; want 258400 and []", ev.Window, ev.Requests)
		}
		if ev.DefaultPostCompact() != 0 {
			t.Errorf("default post-compaction fill %d without requests, want 0", ev.DefaultPostCompact())
		}
	})
	t.Run("trailing compaction is numbered requests+1", func(t *testing.T) {
		c := NewCollector()
		c.Observe(tokenCount(3, 100))
		c.Observe(obs(4, reconstruct.FlowCompactionEvidence{}))
		ev := c.Evidence(nil)
		if diff := cmp.Diff([]int{2}, ev.CompactionRequests()); diff != "" {
			t.Error(diff)
		}
	})
	t.Run("mean post-compaction fill rounds down", func(t *testing.T) {
		c := NewCollector()
		c.Observe(tokenCount(1, 50000))
		c.Observe(obs(2, reconstruct.FlowCompactionEvidence{}))
		c.Observe(tokenCount(3, 30000))
		c.Observe(obs(4, reconstruct.FlowCompactionEvidence{}))
		c.Observe(tokenCount(5, 34001))
		// (30000 + 34001) / 2 = 32000.5 -> 32000
		if got := c.Evidence(nil).DefaultPostCompact(); got != 32000 {
			t.Errorf("got %d, want 32000", got)
		}
	})
	t.Run("rollback drops turns, requests, compactions and the prompt slot", func(t *testing.T) {
		c := NewCollector()
		c.Observe(obs(1, reconstruct.FlowTurnStartedEvidence{TurnID: "t1", Window: 1000}))
		c.Observe(obs(2, reconstruct.FlowUserPromptEvidence{TurnID: "t1", Tokens: int64(7)}))
		c.Observe(tokenCount(3, 100))
		c.Observe(obs(4, reconstruct.FlowTurnStartedEvidence{TurnID: "t2", Window: 1000}))
		c.Observe(obs(5, reconstruct.FlowUserPromptEvidence{TurnID: "t2", Tokens: int64(9)}))
		c.Observe(tokenCount(6, 200))
		c.Observe(obs(7, reconstruct.FlowCompactionEvidence{}))
		c.Observe(obs(8, reconstruct.FlowRollbackEvidence{NumTurns: 1, FromLine: 4}))
		c.Observe(obs(9, reconstruct.FlowTurnStartedEvidence{TurnID: "t3", Window: 1000}))
		c.Observe(obs(10, reconstruct.FlowUserPromptEvidence{TurnID: "t3", Tokens: int64(11)}))
		c.Observe(tokenCount(11, 150))
		ev := c.Evidence(nil)
		want := []Turn{
			{Line: 1, ID: "t1", Window: 1000, PromptTokens: 7, FirstRequest: 0},
			{Line: 9, ID: "t3", Window: 1000, PromptTokens: 11, FirstRequest: 1},
		}
		if diff := cmp.Diff(want, ev.Turns); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
		// 150 - 100 = 50: growth from the surviving request, no compaction.
		if len(ev.Requests) != 2 || ev.Requests[1].Growth != 50 || ev.Requests[1].AfterCompaction || len(ev.Compactions) != 0 {
			t.Errorf("requests %+v, compactions %+v", ev.Requests, ev.Compactions)
		}
	})
	t.Run("a rolled-back window is still the model's window", func(t *testing.T) {
		c := NewCollector()
		c.Observe(obs(2, reconstruct.FlowTurnStartedEvidence{TurnID: "t1", Window: 258400}))
		c.Observe(obs(3, reconstruct.FlowRollbackEvidence{NumTurns: 1, FromLine: 2}))
		ev := c.Evidence(nil)
		if len(ev.Turns) != 0 || ev.Window != 258400 {
			t.Errorf("turns %+v, window %d; want none and 258400", ev.Turns, ev.Window)
		}
	})
	t.Run("only the first prompt of a turn counts", func(t *testing.T) {
		c := NewCollector()
		c.Observe(obs(1, reconstruct.FlowUserPromptEvidence{TurnID: "", Tokens: int64(5)})) // outside turns
		c.Observe(obs(2, reconstruct.FlowTurnStartedEvidence{TurnID: "", Window: 0}))
		c.Observe(obs(3, reconstruct.FlowUserPromptEvidence{TurnID: "", Tokens: int64(12)}))
		c.Observe(obs(4, reconstruct.FlowUserPromptEvidence{TurnID: "", Tokens: int64(99)}))
		st := &reconstruct.State{Turns: []reconstruct.Turn{{ID: "from-turn-context", StartLine: 2}}}
		ev := c.Evidence(st)
		if len(ev.Turns) != 1 || ev.Turns[0].PromptTokens != 12 || ev.Turns[0].ID != "from-turn-context" {
			t.Errorf("turns %+v", ev.Turns)
		}
	})
}

// Each request carries the time of its token_count line (the shared
// ledger's order): request 1 is line 7, request 7 line 38.
func TestRequestTimes(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	first := time.Date(2026, 5, 4, 9, 0, 10, 500e6, time.UTC).UnixNano()
	seventh := time.Date(2026, 5, 4, 9, 0, 57, 0, time.UTC).UnixNano()
	if ev.Requests[0].At != first || ev.Requests[6].At != seventh {
		t.Errorf("times %d, %d; want %d, %d", ev.Requests[0].At, ev.Requests[6].At, first, seventh)
	}
}
