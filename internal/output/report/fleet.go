package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rollout-dev/rollout/internal/derive/budget"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// The outputs of `rollout simulate-budget` over many rollouts (and of
// merge of its shards): JSON, CSV and a terminal table.

// fleetReport is the JSON of a fleet: the common header, its kind, then
// the fleet's fields.
type fleetReport struct {
	schema.Header
	Kind string `json:"kind"` // "fleet"
	*budget.Fleet
}

// WriteFleetJSON writes the fleet (after Finish) as indented JSON with a
// final newline.
func WriteFleetJSON(w io.Writer, f *budget.Fleet) error {
	return writeJSON(w, fleetReport{schema.NewHeader(schema.BudgetFleet), "fleet", f})
}

// ReadFleet decodes a fleet written by WriteFleetJSON.
func ReadFleet(data []byte) (*budget.Fleet, error) {
	r := fleetReport{Fleet: &budget.Fleet{}}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.Command != "simulate-budget" || r.Kind != "fleet" {
		return nil, fmt.Errorf("not a simulate-budget fleet report")
	}
	if v := schema.Version(schema.BudgetFleet); r.SchemaVersion != v {
		return nil, fmt.Errorf("a fleet report of schema_version %d (this rollout merges %d: make every shard with the same rollout)", r.SchemaVersion, v)
	}
	return r.Fleet, nil
}

var fleetCSVHeader = []string{"window", "compact_at", "sessions", "sessions_with_overflow", "overflows",
	"compactions", "compactions_p50", "compactions_p95", "peak_fill_p50", "peak_fill_p95", "peak_fill_max",
	"handoffs_deferred", "handoffs_undelivered", "ledger_exhaustions", "reminders"}

var sessionCSVHeader = []string{"path", "thread_id", "window", "threshold", "post_compact_tokens",
	"compactions", "peak_fill", "overflows", "deferrals", "undelivered", "ledger_exhausted_at", "reminders"}

// WriteFleetCSV writes one row per setting, or with per-session rows one
// row per rollout and setting. A window of 0 is each rollout's recorded one.
func WriteFleetCSV(w io.Writer, f *budget.Fleet) error {
	cw := csv.NewWriter(w)
	if f.PerSession != nil {
		cw.Write(sessionCSVHeader)
		for _, r := range f.PerSession {
			for _, o := range r.Settings {
				cw.Write([]string{r.Path, r.ThreadID, i64(o.Window), i64(o.Threshold), i64(o.PostCompactTokens),
					strconv.Itoa(o.Compactions), i64(o.PeakFill), strconv.Itoa(o.Overflows), strconv.Itoa(o.Deferrals),
					strconv.Itoa(o.Undelivered), exhaustedAt(o.LedgerExhaustedAt), strconv.Itoa(o.Reminders)})
			}
		}
	} else {
		cw.Write(fleetCSVHeader)
		for _, o := range f.Settings {
			cw.Write([]string{i64(o.Window), o.CompactAt.String(), strconv.Itoa(o.Sessions), strconv.Itoa(o.SessionsOverflowing),
				strconv.Itoa(o.Overflows), strconv.Itoa(o.Compactions), i64(o.CompactionsP50), i64(o.CompactionsP95),
				i64(o.PeakFillP50), i64(o.PeakFillP95), i64(o.PeakFillMax), strconv.Itoa(o.Deferrals),
				strconv.Itoa(o.Undelivered), strconv.Itoa(o.LedgerExhaustions), strconv.Itoa(o.Reminders)})
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteFleetText writes the fleet view for a terminal: with per-session
// rows first, then the summary, the calibration, one row per setting and
// the shared ledgers that ran out.
func WriteFleetText(w io.Writer, f *budget.Fleet) error {
	var b strings.Builder
	if f.PerSession != nil {
		writeSessionRows(&b, f)
		b.WriteString("\n")
	}
	if f.Sessions == 0 {
		// A table of zeros says nothing; the walk's note says why.
		writeFleetHead(&b, f)
		_, err := io.WriteString(w, b.String())
		return err
	}
	writeFleetSummary(&b, f)
	if err := writeFleetSettings(&b, f); err != nil {
		return err
	}
	out := trimLines(b.String())
	for _, l := range f.Ledgers {
		win := "the recorded window"
		if l.Window > 0 {
			win = "window " + thousands(l.Window)
		}
		out += fmt.Sprintf("shared ledger of %s (%s, %d threads) exhausted by thread %s at its request %d (%s), %s charged\n",
			l.RootPath, win, l.Threads, l.ThreadID, l.Request, l.Path, thousands(l.Charged))
	}
	out += "\npeak fill percentiles are exact to 1,000 tokens; THRESHOLD applies to each window\n"
	if slices.ContainsFunc(f.Settings, func(o budget.FleetOutcome) bool { return o.SessionsOverflowing > 0 }) {
		out += peakNote
	}
	_, err := io.WriteString(w, out)
	return err
}

// writeSessionRows writes the --per-session table: one row per rollout
// and setting.
func writeSessionRows(b *strings.Builder, f *budget.Fleet) {
	ledger := f.Params.Ledger > 0
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	cols := []string{"PATH", "THREAD", "WINDOW", "COMPACTIONS", "PEAK FILL", "OVERFLOWS"}
	if ledger {
		cols = append(cols, "LEDGER")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for _, r := range f.PerSession {
		for _, o := range r.Settings {
			cells := []string{r.Path, r.ThreadID, thousands(o.Window), strconv.Itoa(o.Compactions), thousands(o.PeakFill), strconv.Itoa(o.Overflows)}
			if ledger {
				led := "ok"
				switch {
				case o.LedgerExhaustedAt != nil:
					led = fmt.Sprintf("exhausted at %d", *o.LedgerExhaustedAt)
				case o.SharedLedger != nil:
					led = fmt.Sprintf("stopped after %d (shared)", o.SharedLedger.StoppedAfter)
				}
				cells = append(cells, led)
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t"))
		}
	}
	tw.Flush()
}

// writeFleetSummary writes how many rollouts were simulated and how well
// the model reproduces their recorded compactions.
func writeFleetSummary(b *strings.Builder, f *budget.Fleet) {
	writeFleetHead(b, f)
	c := f.Calibration
	how := f.Params.CompactAt.String()
	if c.Auto {
		how += ", fitted by --compact-at auto"
	}
	if c.RecordedCompactions == 0 {
		fmt.Fprintf(b, "calibration: none: no rollout records a compaction to compare the model with (threshold %s is not checked)\n", how)
	} else {
		fmt.Fprintf(b, "calibration: at each recorded window with threshold %s, the model reproduces %d of %d recorded compactions (same request +/- 1)\n",
			how, c.Reproduced, c.RecordedCompactions)
	}
	if fit := c.Fitted; fit != nil && fit.Better && !c.Auto {
		post := ""
		if fit.PostCompactPercent != nil {
			post = fmt.Sprintf(" with post-compaction fill %d%%", *fit.PostCompactPercent)
		}
		fmt.Fprintf(b, "fitted:      threshold %s%s reproduces %d of %d (--compact-at auto uses it)\n",
			fit.CompactAt.String(), post, fit.Reproduced, fit.RecordedCompactions)
	}
	b.WriteString("\n")
}

// writeFleetHead writes how many rollouts were simulated.
func writeFleetHead(b *strings.Builder, f *budget.Fleet) {
	fmt.Fprintf(b, "fleet: %s simulated, %s", Count(f.Sessions, "rollout"), Count(f.Requests, "request"))
	if f.SkippedNoWindow > 0 {
		fmt.Fprintf(b, "; %d skipped (no recorded window: name one with --window)", f.SkippedNoWindow)
	}
	b.WriteString("\n")
}

// writeFleetSettings writes one row per simulated setting.
func writeFleetSettings(b *strings.Builder, f *budget.Fleet) error {
	p := f.Params
	handoffs := p.HandoffTokens > 0
	for _, o := range f.Settings {
		handoffs = handoffs || o.Deferrals > 0 || o.Undelivered > 0
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.TabIndent)
	cols := []string{"WINDOW", "THRESHOLD", "SESSIONS", "WITH OVERFLOW", "COMPACTIONS", "PER SESSION P50", "P95",
		"PEAK FILL P50", "P95", "MAX"}
	cols = append(cols, optionalColumns(handoffs, p.Ledger > 0, p.ReminderEvery > 0, "DEFERRED", "LEDGERS EXHAUSTED")...)
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, o := range f.Settings {
		win := "recorded"
		if o.Window > 0 {
			win = thousands(o.Window)
		}
		cells := []string{win, o.CompactAt.String(), strconv.Itoa(o.Sessions), strconv.Itoa(o.SessionsOverflowing),
			strconv.Itoa(o.Compactions), i64(o.CompactionsP50), i64(o.CompactionsP95),
			thousands(o.PeakFillP50), thousands(o.PeakFillP95), thousands(o.PeakFillMax)}
		if handoffs {
			cells = append(cells, strconv.Itoa(o.Deferrals), strconv.Itoa(o.Undelivered))
		}
		if p.Ledger > 0 {
			cells = append(cells, strconv.Itoa(o.LedgerExhaustions))
		}
		if p.ReminderEvery > 0 {
			cells = append(cells, strconv.Itoa(o.Reminders))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}
