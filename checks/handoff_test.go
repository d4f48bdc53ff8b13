package checks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/rollout"
)

// Handoff fixtures live in fixtures/handoffs, in the format of
// fixtures/rules (README.md there): one per rule, named after it, plus
// variants such as the field cases, and the golden of each fixture whose
// findings repair fixes: <fixture>.fixed.jsonl, the rollout after every
// planned handoff fix.
const handoffsDir = "../fixtures/handoffs"

func handoffFixtures(t *testing.T) []*ruleFixture {
	t.Helper()
	all, err := loadRuleFixtures()
	if err != nil {
		t.Fatal(err)
	}
	var out []*ruleFixture
	for _, fx := range all {
		if filepath.Dir(fx.source) == filepath.Clean(handoffsDir) {
			out = append(out, fx)
		}
	}
	if len(out) < 9 {
		t.Fatalf("found %d handoff fixtures, want at least 9", len(out))
	}
	return out
}

// TestHandoffMessages: each message states the numbers a support engineer
// needs. The expected texts are written from the fixtures' comments.
func TestHandoffMessages(t *testing.T) {
	const (
		hof1  = "hof_019d3c10-3000-7001-8001-000000000001"
		hof2  = "hof_019d3c10-3000-7002-8002-000000000002"
		turn2 = "019d3c10-2000-7002-8002-000000000002"
		turn3 = "019d3c10-2000-7003-8003-000000000003"
		me    = "019d3c10-0a00-7c1e-9d2a-4b5c6d7e8f90"
	)
	tests := []struct {
		fixture string
		want    []string
	}{
		{"handoffs/handoff-oversized-not-deferred.txtar", []string{
			"handoff " + hof1 + " needs 20000 tokens but the budget at turn " + turn2 + " is 0 (window 1000000, fill 840960, prompt 33, reserve 250000, cap 16000): it would wedge the thread; set deferred"}},
		{"handoffs/handoff-oversized-not-deferred.near-full.txtar", []string{
			"handoff " + hof1 + " needs 6000 tokens but the budget at turn " + turn2 + " is 0 (window 44000, fill 41800, prompt 25, reserve 16000, cap 16000): it would wedge the thread; set deferred"}},
		{"handoffs/handoff-oversized-not-deferred.eof.txtar", []string{
			"handoff " + hof1 + " needs 16001 tokens but the budget at the end of the file (target turn " + turn2 + " is not in the rollout) is 16000 (window 258400, fill 170000, prompt 0, reserve 64600, cap 16000): it would wedge the thread; set deferred"}},
		{"handoffs/handoff-lost-deferred.txtar", []string{
			"handoff " + hof1 + " (12000 tokens) lost its deferred marker (last set on line 7) while its delivery is pending and turn " + turn3 + " has ended (aborted): it would be silently dropped; restore deferred"}},
		{"handoffs/handoff-stale-deferred.txtar", []string{
			"handoff " + hof1 + " (12000 tokens) is still deferred although its delivery is confirmed (injected): the history would be delivered again; clear deferred"}},
		{"handoffs/handoff-duplicate-deferred.txtar", []string{
			"handoff " + hof2 + " duplicates deferred handoff " + hof1 + " (first written on line 7): both cover the same 2 items for provider thread " + me + "; mark " + hof2 + " superseded"}},
		{"handoffs/handoff-double-delivery.txtar", []string{
			"handoff " + hof1 + " delivered again (inline) after its confirmed delivery (injected) on line 11: a handoff is delivered at most once (2 confirmed deliveries)"}},
		{"handoffs/handoff-bad-items.txtar", []string{
			"handoff " + hof1 + " has 1 item ids in both item_ids and omitted_item_ids (msg_019d3c10-1000-7002-8002-000000000002) and 1 item ids that name no item of this rollout (msg_019d3c10-1000-704d-804d-00000000004d)",
			"handoff " + hof2 + " has 1 item ids that name no item of this rollout (msg_019d3c10-1000-704e-804e-00000000004e)"}},
		{"handoffs/handoff-abandoned.txtar", []string{
			"handoff " + hof1 + " (12000 tokens) is deferred but provider thread " + me + " has no turn after its target turn " + turn2 + " (line 7): it is retried only if that thread is used again"}},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			fx, err := parseRuleFixture(filepath.Join("../fixtures", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			res, err := checks.RunReader("x.jsonl", bytes.NewReader(fx.cases[0].data), checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.Message)
				if f.EvidenceMap()["id"] == nil {
					t.Errorf("%s: no id in the evidence", f.Rule)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHandoffFixGoldens plans the fixes of every handoff fixture and
// compares the fixed rollout with its golden byte for byte; the fixed
// rollout must then verify clean. A fixture with fixable findings needs a
// golden and one without must not have one, so the test fails both ways.
func TestHandoffFixGoldens(t *testing.T) {
	goldens := map[string]bool{}
	m, _ := filepath.Glob(filepath.Join(handoffsDir, "*.fixed.jsonl"))
	for _, p := range m {
		goldens[strings.TrimSuffix(filepath.Base(p), ".fixed.jsonl")] = true
	}
	for _, fx := range handoffFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			c := fx.cases[0]
			if c.section != "rollout.jsonl" {
				t.Fatalf("first case is %s", c.section)
			}
			res, err := checks.RunReader(fx.runPath(c), bytes.NewReader(c.data), checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			fp, err := checks.PlanFixes(res, nil, checks.FixOptions{Fix: selectFixes(t, "handoff/")})
			if err != nil {
				t.Fatal(err)
			}
			fixable := 0
			for _, f := range res.Findings {
				if strings.HasPrefix(f.Rule, "handoff/") && f.Fixable {
					fixable++
				}
			}
			if len(fp.Planned) != fixable || len(fp.Left) != 0 {
				t.Errorf("%d findings planned, %d left, for %d fixable findings", len(fp.Planned), len(fp.Left), fixable)
			}
			golden := filepath.Join(handoffsDir, fx.name+".fixed.jsonl")
			delete(goldens, fx.name)
			want, err := os.ReadFile(golden)
			switch {
			case fixable == 0 && err == nil:
				t.Fatalf("%s exists but no finding of %s is fixable", golden, fx.source)
			case fixable == 0:
				return
			case err != nil:
				t.Fatalf("%d fixable findings but no golden: %v", fixable, err)
			}
			var out bytes.Buffer
			var skips []rollout.Skip
			if _, err := rollout.Rewrite(&out, bytes.NewReader(c.data), &fp.Plan, rollout.RewriteOptions{
				OnSkip: func(s rollout.Skip) { skips = append(skips, s) }}); err != nil {
				t.Fatal(err)
			}
			if len(skips) != 0 {
				t.Errorf("edits skipped: %+v", skips)
			}
			got := out.Bytes()
			if bytes.Equal(got, c.data) {
				t.Fatal("the fixes change nothing")
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("fixed rollout differs from %s (-want +got):\n%s", golden, diff)
			}
			again, err := checks.RunReader("fixed.jsonl", bytes.NewReader(got), checks.Options{})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range again.Findings {
				t.Errorf("after the fix: line %d %s: %s", f.Line, f.Rule, f.Message)
			}
		})
	}
	for name := range goldens {
		t.Errorf("%s/%s.fixed.jsonl has no fixture", handoffsDir, name)
	}
}

// TestHandoffSimulateBudget: recorded handoffs reach simulate-budget's
// evidence at their target turns. The 1,000,000-token field case: the
// 20,000-token handoff targets turn 2; the fill at turn 2 is 840,960 (prompt
// 33) and at turn 3 846,200 (prompt 23), so with the recorded window the
// budget is 0 at both and it waits 2 turns, undelivered. With a window of
// 2,000,000 and a cap of 64,000 the budget at turn 2 is
// min(64000, 2000000 - 840960 - 33 - 500000) = 64,000: delivered at once.
func TestHandoffSimulateBudget(t *testing.T) {
	fx, err := parseRuleFixture(filepath.Join(handoffsDir, "handoff-oversized-not-deferred.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fx.cases { // deferred or not, the handoff is the same
		col := budget.NewCollector()
		res, err := checks.RunReader("x.jsonl", bytes.NewReader(c.data), checks.Options{}, col.Observe)
		if err != nil {
			t.Fatal(err)
		}
		ev := col.Evidence(res.State)
		want := []budget.Handoff{{ID: "hof_019d3c10-3000-7001-8001-000000000001", Line: 7, Tokens: 20000, TargetTurn: 1}}
		if diff := cmp.Diff(want, ev.Handoffs); diff != "" {
			t.Fatalf("%s: evidence handoffs (-want +got):\n%s", c.section, diff)
		}
		s := budget.DefaultSettings()
		s.Windows = []int64{1000000, 2000000}
		r, err := budget.Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		s.Windows, s.HandoffCap = []int64{2000000}, 64000
		big, err := budget.Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		type row struct {
			Deferrals, Undelivered, Waited int
			Delivered                      bool
		}
		var got []row
		for _, o := range append(r.Settings, big.Settings...) {
			if len(o.Handoffs) != 1 {
				t.Fatalf("window %d: %d handoff outcomes, want 1", o.Window, len(o.Handoffs))
			}
			h := o.Handoffs[0]
			got = append(got, row{o.Deferrals, o.Undelivered, h.WaitedTurns, h.Delivered})
		}
		wantRows := []row{{2, 1, 2, false}, {2, 1, 2, false}, {0, 0, 0, true}}
		if diff := cmp.Diff(wantRows, got); diff != "" {
			t.Errorf("%s: 1M, 2M, 2M with cap 64000 (-want +got):\n%s", c.section, diff)
		}
	}
}

func selectFixes(t *testing.T, sel ...string) checks.FixSet {
	t.Helper()
	fs, err := checks.SelectFixes(sel)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
