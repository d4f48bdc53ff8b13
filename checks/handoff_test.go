package checks_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/reconstruct/budget"
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
				if f.Evidence["id"] == nil {
					t.Errorf("%s: no id in the evidence", f.Rule)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// splitLines maps 1-based line numbers to their bytes without terminator.
func splitLines(data []byte) (map[int][]byte, [][]byte, []string) {
	lines := map[int][]byte{}
	var raws [][]byte
	var eols []string
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		raw, eol := data, ""
		if i >= 0 {
			raw, eol, data = data[:i], "\n", data[i+1:]
		} else {
			data = nil
		}
		if len(raw) > 0 && raw[len(raw)-1] == '\r' && eol != "" {
			raw, eol = raw[:len(raw)-1], "\r\n"
		}
		lines[n] = raw
		raws, eols = append(raws, raw), append(eols, eol)
	}
	return lines, raws, eols
}

// applyEdits rebuilds a file with the edits applied, later ranges first so
// earlier offsets stay valid.
func applyEdits(data []byte, edits []checks.HandoffEdit) []byte {
	_, raws, eols := splitLines(data)
	sorted := slices.Clone(edits)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Start > sorted[j].Start })
	var out []byte
	for i, raw := range raws {
		for _, x := range sorted {
			if x.Line == i+1 {
				raw = x.Apply(raw)
			}
		}
		out = append(out, raw...)
		out = append(out, eols[i]...)
	}
	return out
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
			lines, _, _ := splitLines(c.data)
			edits, err := checks.PlanHandoffFixes(res.Findings, lines)
			if err != nil {
				t.Fatal(err)
			}
			fixable := 0
			for _, f := range res.Findings {
				if checks.IsHandoffFix(f.Rule) {
					fixable++
				}
			}
			if len(edits) != fixable {
				t.Errorf("%d edits for %d fixable findings", len(edits), fixable)
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
			got := applyEdits(c.data, edits)
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

func TestPlanHandoffFix(t *testing.T) {
	const env = `{"timestamp":"2026-04-02T10:00:00.000Z","type":"context_handoff","payload":`
	tests := []struct {
		name, rule, payload, want, err string
		raw                            string // the whole line, when not env+payload+"}"
	}{
		{name: "insert after status", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","status":"ready","history":{"tokens":5}}`,
			want:    `{"id":"hof_a","status":"ready","deferred":true,"history":{"tokens":5}}`},
		{name: "replace false", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","deferred":false,"status":"ready"}`,
			want:    `{"id":"hof_a","deferred":true,"status":"ready"}`},
		{name: "no status: at the end", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","history":{"tokens":5},"delivery":{"status":"pending"}}`,
			want:    `{"id":"hof_a","history":{"tokens":5},"delivery":{"status":"pending"},"deferred":true}`},
		{name: "top-level status, not the delivery's", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","delivery":{"status":"pending"},"status":"ready"}`,
			want:    `{"id":"hof_a","delivery":{"status":"pending"},"status":"ready","deferred":true}`},
		{name: "nested deferred is not the marker", rule: "handoff/oversized-not-deferred",
			payload: `{"id":"hof_a","status":"ready","history":{"deferred":true}}`,
			want:    `{"id":"hof_a","status":"ready","deferred":true,"history":{"deferred":true}}`},
		{name: "spaced JSON keeps its spacing", rule: "handoff/oversized-not-deferred",
			payload: `{ "id": "hof_a", "status": "ready" , "note": "caf\u00e9 \"x\"" }`,
			want:    `{ "id": "hof_a", "status": "ready","deferred":true , "note": "caf\u00e9 \"x\"" }`},
		{name: "remove in the middle", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true,"delivery":{"status":"inline"}}`,
			want:    `{"id":"hof_a","status":"ready","delivery":{"status":"inline"}}`},
		{name: "remove the first member", rule: "handoff/stale-deferred",
			payload: `{ "deferred": true,  "id": "hof_a"}`,
			want:    `{ "id": "hof_a"}`},
		{name: "remove the last member", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a", "status":"ready" , "deferred" : true }`,
			want:    `{"id":"hof_a", "status":"ready" }`},
		{name: "supersede", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true}`,
			want:    `{"id":"hof_a","status":"superseded","deferred":true}`},
		{name: "concatenated: the handoff is the second object", rule: "handoff/duplicate-deferred",
			raw:  `{"type":"event_msg","payload":{"type":"x","status":"ready"}} ` + env + `{"id":"hof_a","status":"ready"}}`,
			want: `{"type":"event_msg","payload":{"type":"x","status":"ready"}} ` + env + `{"id":"hof_a","status":"superseded"}}`},
		{name: "concatenated: the later record of the id wins", rule: "handoff/stale-deferred",
			raw:  env + `{"id":"hof_a","deferred":true,"status":"ready"}}` + env + `{"id":"hof_a","status":"ready","deferred":true}}`,
			want: env + `{"id":"hof_a","deferred":true,"status":"ready"}}` + env + `{"id":"hof_a","status":"ready"}}`},
		{name: "another handoff's line", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_b","deferred":true}`, err: "no context_handoff record with that id"},
		{name: "not a handoff line", rule: "handoff/stale-deferred",
			raw: `{"type":"event_msg","payload":{"id":"hof_a","deferred":true}}`, err: "no context_handoff record with that id"},
		{name: "not JSON", rule: "handoff/stale-deferred", raw: `hello`, err: "not a sequence of JSON objects"},
		{name: "already deferred", rule: "handoff/lost-deferred",
			payload: `{"id":"hof_a","status":"ready","deferred":true}`, err: "already deferred"},
		{name: "two markers", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","deferred":true,"deferred":false}`, err: `2 "deferred" members`},
		{name: "nothing to clear", rule: "handoff/stale-deferred",
			payload: `{"id":"hof_a","status":"ready"}`, err: "no deferred member"},
		{name: "no status to supersede", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a"}`, err: "no status"},
		{name: "already superseded", rule: "handoff/duplicate-deferred",
			payload: `{"id":"hof_a","status":"superseded"}`, err: "already superseded"},
		{name: "not a handoff fix", rule: "handoff/double-delivery",
			payload: `{"id":"hof_a"}`, err: "has no handoff fix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			if raw == "" {
				raw = env + tt.payload + "}"
			}
			want := tt.want
			if tt.raw == "" {
				want = env + tt.want + "}"
			}
			f := checks.Finding{Rule: tt.rule, Line: 3, ByteOffset: 100, Evidence: map[string]any{"id": "hof_a"}}
			x, err := checks.PlanHandoffFix(f, []byte(raw))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if x.Line != 3 || x.Offset != 100 || x.ID != "hof_a" || x.Rule != tt.rule {
				t.Errorf("edit %+v does not carry the finding's line, offset, id and rule", x)
			}
			if got := string(x.Apply([]byte(raw))); got != want {
				t.Errorf("\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestPlanHandoffFixes(t *testing.T) {
	line := []byte(`{"timestamp":"t","type":"context_handoff","payload":{"id":"hof_a","status":"ready"}}`)
	fs := []checks.Finding{
		{Rule: "line/crlf", Line: 1},
		{Rule: "handoff/double-delivery", Line: 2, Evidence: map[string]any{"id": "hof_a"}},
		{Rule: "handoff/duplicate-deferred", Line: 9, Evidence: map[string]any{"id": "hof_a"}},
		{Rule: "handoff/oversized-not-deferred", Line: 4, Evidence: map[string]any{"id": "hof_a"}},
	}
	edits, err := checks.PlanHandoffFixes(fs, map[int][]byte{4: line, 9: line})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range edits {
		got = append(got, x.Rule+" "+string(x.Apply(line)[x.Start:x.Start+len(x.New)]))
	}
	want := []string{`handoff/oversized-not-deferred ,"deferred":true`, `handoff/duplicate-deferred "superseded"`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("edits in line order (-want +got):\n%s", diff)
	}
	if _, err := checks.PlanHandoffFixes(fs, map[int][]byte{4: line}); err == nil || !strings.Contains(err.Error(), "line 9") {
		t.Errorf("missing line: error %v, want one naming line 9", err)
	}
	two := []checks.Finding{fs[3], {Rule: "handoff/lost-deferred", Line: 4, Evidence: map[string]any{"id": "hof_a"}}}
	if _, err := checks.PlanHandoffFixes(two, map[int][]byte{4: line}); err == nil || !strings.Contains(err.Error(), "overlap") {
		t.Errorf("two fixes of one member: error %v, want an overlap", err)
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
		res, err := checks.RunReader("x.jsonl", bytes.NewReader(c.data), checks.Options{Flow: col.Observe})
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
