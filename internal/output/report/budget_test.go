package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/reconstruct"
)

const budgetFixtures = "../../../fixtures/budget/"

// simulate reads a fixture's evidence and simulates it under s.
func simulate(t *testing.T, path string, s budget.Settings) *budget.Result {
	t.Helper()
	ev := budget.NewCollector().Evidence(nil)
	if path != "" {
		var err error
		if ev, _, err = budget.ReadEvidence(path, nil, reconstruct.ReplayOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := budget.Simulate(ev, s)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func sorted(ks ...string) []string { slices.Sort(ks); return ks }

// The JSON is the schema of budget.md: these keys, no others, plus the
// documented additive ones; lists are [] and never null.
func TestJSONSchema(t *testing.T) {
	for _, path := range []string{budgetFixtures + "basic.jsonl", ""} {
		s := budget.DefaultSettings()
		s.Windows = []int64{64000, 100000}
		s.Ledger = 100000
		res := simulate(t, path, s)
		var b bytes.Buffer
		if err := WriteBudgetJSON(&b, res); err != nil {
			t.Fatal(err)
		}
		allowed := strings.Count(b.String(), `"ledger_exhausted_at": null`) + strings.Count(b.String(), `"fitted": null`) +
			strings.Count(b.String(), `"post_compact_percent": null`)
		if res.Recorded.Window == 0 {
			allowed += strings.Count(b.String(), `"threshold": null`) // calibration: no recorded window
		}
		if strings.Count(b.String(), "null") != allowed {
			t.Errorf("a null other than ledger_exhausted_at, fitted, post_compact_percent and calibration.threshold:\n%s", b.String())
		}
		var m map[string]any
		if err := json.Unmarshal(b.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sorted("schema", "schema_version", "tool", "version", "command", "path", "requests", "turns", "recorded", "calibration", "settings"), keys(m)); diff != "" {
			t.Errorf("top-level keys (-want +got):\n%s", diff)
		}
		if m["schema_version"] != 2.0 || m["command"] != "simulate-budget" || m["schema"] != "simulate-budget" {
			t.Errorf("schema_version %v command %v", m["schema_version"], m["command"])
		}
		rec := m["recorded"].(map[string]any)
		if diff := cmp.Diff(sorted("window", "compactions", "compaction_requests", "peak_fill"), keys(rec)); diff != "" {
			t.Errorf("recorded keys (-want +got):\n%s", diff)
		}
		if _, ok := rec["compaction_requests"].([]any); !ok {
			t.Errorf("recorded.compaction_requests is %T, want a list", rec["compaction_requests"])
		}
		if diff := cmp.Diff(sorted("threshold", "recorded_compactions", "reproduced", "compact_at", "auto", "fitted"), keys(m["calibration"].(map[string]any))); diff != "" {
			t.Errorf("calibration keys (-want +got):\n%s", diff)
		}
		settings := m["settings"].([]any)
		if len(settings) != 2 {
			t.Fatalf("%d settings, want 2", len(settings))
		}
		for _, st := range settings {
			sm := st.(map[string]any)
			want := sorted("window", "threshold", "post_compact_tokens", "compactions", "compaction_requests",
				"peak_fill", "overflows", "overflow_requests", "deferrals", "ledger_exhausted_at", "reminders",
				"undelivered", "handoffs") // the last two are additive
			if diff := cmp.Diff(want, keys(sm)); diff != "" {
				t.Errorf("setting keys (-want +got):\n%s", diff)
			}
			for _, k := range []string{"compaction_requests", "overflow_requests", "handoffs"} {
				if _, ok := sm[k].([]any); !ok {
					t.Errorf("%s is %T, want a list", k, sm[k])
				}
			}
		}
	}
}

func TestJSONLedgerExhaustedIsNumberOrNull(t *testing.T) {
	s := budget.DefaultSettings()
	s.Windows = []int64{100000}
	for _, tt := range []struct {
		ledger int64
		want   string
	}{{0, `"ledger_exhausted_at": null`}, {100000, `"ledger_exhausted_at": 5`}} {
		s.Ledger = tt.ledger
		res := simulate(t, budgetFixtures+"basic.jsonl", s)
		var b bytes.Buffer
		WriteBudgetJSON(&b, res)
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("ledger %d: no %s", tt.ledger, tt.want)
		}
	}
}

func TestCSVShape(t *testing.T) {
	s := budget.DefaultSettings()
	s.Windows = []int64{30000, 64000, 100000}
	s.HandoffTokens = 15000
	res := simulate(t, budgetFixtures+"basic.jsonl", s)
	var b bytes.Buffer
	if err := WriteBudgetCSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[0]) != 13 || rows[0][0] != "path" || rows[1][0] != budgetFixtures+"basic.jsonl" {
		t.Fatalf("rows %q", rows)
	}
	// W = 30,000 (TestSimulateBasicByHand): compactions at 7 and 8,
	// overflows at 2, 3, 4, 8, 3 deferrals, 1 undelivered.
	if diff := cmp.Diff([]string{"30000", "27000", "12000", "2", "7 8", "30000", "4", "2 3 4 8", "3", "1", "", "0"}, rows[1][1:]); diff != "" {
		t.Errorf("row 1 (-want +got):\n%s", diff)
	}
}

func TestTableColumns(t *testing.T) {
	table := func(set func(*budget.Settings)) string {
		s := budget.DefaultSettings()
		set(&s)
		res := simulate(t, budgetFixtures+"basic.jsonl", s)
		var b bytes.Buffer
		if err := WriteBudgetText(&b, res); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain := table(func(s *budget.Settings) {})
	for _, absent := range []string{"DEFERRALS", "LEDGER", "REMINDERS"} {
		if strings.Contains(plain, absent) {
			t.Errorf("column %s without its setting:\n%s", absent, plain)
		}
	}
	all := table(func(s *budget.Settings) { s.HandoffTokens = 1; s.Ledger = 1e6; s.ReminderEvery = 1000 })
	header := ""
	for _, l := range strings.Split(all, "\n") {
		if strings.Contains(l, "WINDOW") {
			header = l
		}
	}
	if f := strings.Fields(header); !slices.Equal(f, []string{"WINDOW", "THRESHOLD", "POST-COMPACT", "PEAK", "FILL",
		"COMPACTIONS", "OVERFLOWS", "DEFERRALS", "UNDELIVERED", "LEDGER", "REMINDERS"}) {
		t.Errorf("header %q", header)
	}
	// 172,000 charged: 172 reminders every 1,000; a 1,000,000 ledger survives.
	if !strings.Contains(all, "  ok  ") || !strings.HasSuffix(strings.Split(all, "\n")[5], "  172") {
		t.Errorf("ledger/reminder cells:\n%s", all)
	}
	// No trailing blanks on any line.
	for _, l := range strings.Split(all, "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("trailing blanks: %q", l)
		}
	}
}

// Long lists of request numbers are elided in the table, never in JSON.
func TestTableElidesLongLists(t *testing.T) {
	reqs := []int{}
	for n := 4; n <= 40; n += 2 {
		reqs = append(reqs, n)
	}
	res := &budget.Result{Path: "long.jsonl", Settings: []budget.Outcome{{Window: 3000, Compactions: len(reqs), CompactionRequests: reqs}}}
	var b bytes.Buffer
	WriteBudgetText(&b, res)
	if !strings.Contains(b.String(), "19 at 4, 6, 8, 10, 12, 14, ...") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	WriteBudgetJSON(&b, res)
	if !strings.Contains(b.String(), "40\n") {
		t.Error("JSON lost the last compaction request")
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 258400: "258,400", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(in); got != want {
			t.Errorf("thousands(%d) = %q, want %q", in, got, want)
		}
	}
}
