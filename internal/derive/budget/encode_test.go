package budget

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

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
	for _, ev := range []*Evidence{extract(t, fixtures+"basic.jsonl"), NewCollector().Evidence(nil)} {
		s := DefaultSettings()
		s.Windows = []int64{64000, 100000}
		s.Ledger = 100000
		res, err := Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		allowed := strings.Count(b.String(), `"ledger_exhausted_at": null`) + strings.Count(b.String(), `"fitted": null`) +
			strings.Count(b.String(), `"post_compact_percent": null`)
		if ev.Window == 0 {
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
	ev := extract(t, fixtures+"basic.jsonl")
	s := DefaultSettings()
	s.Windows = []int64{100000}
	for _, tt := range []struct {
		ledger int64
		want   string
	}{{0, `"ledger_exhausted_at": null`}, {100000, `"ledger_exhausted_at": 5`}} {
		s.Ledger = tt.ledger
		res, _ := Simulate(ev, s)
		var b bytes.Buffer
		res.WriteJSON(&b)
		if !strings.Contains(b.String(), tt.want) {
			t.Errorf("ledger %d: no %s", tt.ledger, tt.want)
		}
	}
}

func TestCSVShape(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	s := DefaultSettings()
	s.Windows = []int64{30000, 64000, 100000}
	s.HandoffTokens = 15000
	res, _ := Simulate(ev, s)
	var b bytes.Buffer
	if err := res.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[0]) != 13 || rows[0][0] != "path" || rows[1][0] != fixtures+"basic.jsonl" {
		t.Fatalf("rows %q", rows)
	}
	// W = 30,000 (TestSimulateBasicByHand): compactions at 7 and 8,
	// overflows at 2, 3, 4, 8, 3 deferrals, 1 undelivered.
	if diff := cmp.Diff([]string{"30000", "27000", "12000", "2", "7 8", "30000", "4", "2 3 4 8", "3", "1", "", "0"}, rows[1][1:]); diff != "" {
		t.Errorf("row 1 (-want +got):\n%s", diff)
	}
}

func TestTableColumns(t *testing.T) {
	ev := extract(t, fixtures+"basic.jsonl")
	table := func(set func(*Settings)) string {
		s := DefaultSettings()
		set(&s)
		res, err := Simulate(ev, s)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := res.WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	plain := table(func(s *Settings) {})
	for _, absent := range []string{"DEFERRALS", "LEDGER", "REMINDERS"} {
		if strings.Contains(plain, absent) {
			t.Errorf("column %s without its setting:\n%s", absent, plain)
		}
	}
	all := table(func(s *Settings) { s.HandoffTokens = 1; s.Ledger = 1e6; s.ReminderEvery = 1000 })
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
	c := NewCollector()
	for i := 1; i <= 40; i++ {
		c.Observe(tokenCount(i, int64(1000*i)))
	}
	ev := c.Evidence(nil)
	s := DefaultSettings()
	s.Windows = []int64{3000} // T = 2,700, P = F0 = 1,000, +1,000 per request
	s.Trace = true
	res, _ := Simulate(ev, s)
	o := res.Settings[0]
	// 1: 1000, 2: 2000, 3: 3000 (>= T); compaction at 4: 1000 + 1000 =
	// 2000; 5: 3000; compaction at 6 ... every second request from 4.
	if o.Compactions != 19 || o.CompactionRequests[0] != 4 || o.CompactionRequests[18] != 40 {
		t.Fatalf("compactions %v", o.CompactionRequests)
	}
	var b bytes.Buffer
	res.WriteTable(&b)
	if !strings.Contains(b.String(), "19 at 4, 6, 8, 10, 12, 14, ...") {
		t.Errorf("table:\n%s", b.String())
	}
	b.Reset()
	res.WriteJSON(&b)
	if !strings.Contains(b.String(), "40\n") {
		t.Error("JSON lost the last compaction request")
	}
	// The trace: one fill per request, the compactions' starting fills.
	if len(o.Trace.Fills) != 40 || len(o.Trace.CompactionFrom) != 19 || o.Trace.CompactionFrom[0] != 3000 {
		t.Errorf("trace: %d fills, from %v", len(o.Trace.Fills), o.Trace.CompactionFrom)
	}
}

func TestGroup(t *testing.T) {
	for in, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 258400: "258,400", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := group(in); got != want {
			t.Errorf("group(%d) = %q, want %q", in, got, want)
		}
	}
}
