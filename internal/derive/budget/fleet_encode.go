package budget

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/rollout-dev/rollout/internal/output/schema"
)

// WriteJSON writes the fleet (after Finish) as indented JSON with a final
// newline.
func (f *Fleet) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// ReadFleet decodes a fleet written by WriteJSON.
func ReadFleet(data []byte) (*Fleet, error) {
	var f Fleet
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, err
	}
	if f.Command != "simulate-budget" || f.Kind != "fleet" {
		return nil, fmt.Errorf("not a simulate-budget fleet report")
	}
	if v := schema.Version(schema.BudgetFleet); f.SchemaVersion != v {
		return nil, fmt.Errorf("a fleet report of schema_version %d (this rollout merges %d: make every shard with the same rollout)", f.SchemaVersion, v)
	}
	return &f, nil
}

var fleetCSVHeader = []string{"window", "compact_at", "sessions", "sessions_with_overflow", "overflows",
	"compactions", "compactions_p50", "compactions_p95", "peak_fill_p50", "peak_fill_p95", "peak_fill_max",
	"handoffs_deferred", "handoffs_undelivered", "ledger_exhaustions", "reminders"}

var sessionCSVHeader = []string{"path", "thread_id", "window", "threshold", "post_compact_tokens",
	"compactions", "peak_fill", "overflows", "deferrals", "undelivered", "ledger_exhausted_at", "reminders"}

// WriteCSV writes one row per setting, or with per-session rows one row
// per rollout and setting. A window of 0 is each rollout's recorded one.
func (f *Fleet) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if f.PerSession != nil {
		cw.Write(sessionCSVHeader)
		for _, r := range f.PerSession {
			for _, o := range r.Settings {
				exhausted := ""
				if o.LedgerExhaustedAt != nil {
					exhausted = strconv.Itoa(*o.LedgerExhaustedAt)
				}
				cw.Write([]string{r.Path, r.ThreadID, i64(o.Window), i64(o.Threshold), i64(o.PostCompactTokens),
					strconv.Itoa(o.Compactions), i64(o.PeakFill), strconv.Itoa(o.Overflows), strconv.Itoa(o.Deferrals),
					strconv.Itoa(o.Undelivered), exhausted, strconv.Itoa(o.Reminders)})
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

// WriteTable writes the fleet view for a terminal: with per-session rows
// first, then the summary, the calibration and one row per setting.
func (f *Fleet) WriteTable(w io.Writer) error {
	var b strings.Builder
	p := f.Params
	handoffs := p.HandoffTokens > 0
	for _, o := range f.Settings {
		handoffs = handoffs || o.Deferrals > 0 || o.Undelivered > 0
	}
	if f.PerSession != nil {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		cols := []string{"PATH", "THREAD", "WINDOW", "COMPACTIONS", "PEAK FILL", "OVERFLOWS"}
		if p.Ledger > 0 {
			cols = append(cols, "LEDGER")
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
		for _, r := range f.PerSession {
			for _, o := range r.Settings {
				cells := []string{r.Path, r.ThreadID, group(o.Window), strconv.Itoa(o.Compactions), group(o.PeakFill), strconv.Itoa(o.Overflows)}
				if p.Ledger > 0 {
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
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "fleet: %s simulated, %s", plural(f.Sessions, "rollout"), plural(f.Requests, "request"))
	if f.SkippedNoWindow > 0 {
		fmt.Fprintf(&b, "; %d skipped (no recorded window: name one with --window)", f.SkippedNoWindow)
	}
	b.WriteString("\n")
	c := f.Calibration
	how := p.CompactAt.String()
	if c.Auto {
		how += ", fitted by --compact-at auto"
	}
	fmt.Fprintf(&b, "calibration: at each recorded window with threshold %s, the model reproduces %d of %d recorded compactions (same request +/- 1)\n",
		how, c.Reproduced, c.RecordedCompactions)
	if fit := c.Fitted; fit != nil && fit.Better && !c.Auto {
		post := ""
		if fit.PostCompactPercent != nil {
			post = fmt.Sprintf(" with post-compaction fill %d%%", *fit.PostCompactPercent)
		}
		fmt.Fprintf(&b, "fitted:      threshold %s%s reproduces %d of %d (--compact-at auto uses it)\n",
			fit.CompactAt.String(), post, fit.Reproduced, fit.RecordedCompactions)
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.TabIndent)
	cols := []string{"WINDOW", "THRESHOLD", "SESSIONS", "WITH OVERFLOW", "COMPACTIONS", "PER SESSION P50", "P95",
		"PEAK FILL P50", "P95", "MAX"}
	if handoffs {
		cols = append(cols, "DEFERRED", "UNDELIVERED")
	}
	if p.Ledger > 0 {
		cols = append(cols, "LEDGERS EXHAUSTED")
	}
	if p.ReminderEvery > 0 {
		cols = append(cols, "REMINDERS")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, o := range f.Settings {
		win := "recorded"
		if o.Window > 0 {
			win = group(o.Window)
		}
		cells := []string{win, o.CompactAt.String(), strconv.Itoa(o.Sessions), strconv.Itoa(o.SessionsOverflowing),
			strconv.Itoa(o.Compactions), i64(o.CompactionsP50), i64(o.CompactionsP95),
			group(o.PeakFillP50), group(o.PeakFillP95), group(o.PeakFillMax)}
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
	if err := tw.Flush(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	out := strings.Join(lines, "\n") + "\n"
	for _, l := range f.Ledgers {
		win := "the recorded window"
		if l.Window > 0 {
			win = "window " + group(l.Window)
		}
		out += fmt.Sprintf("shared ledger of %s (%s, %d threads) exhausted by thread %s at its request %d (%s), %s charged\n",
			l.RootPath, win, l.Threads, l.ThreadID, l.Request, l.Path, group(l.Charged))
	}
	out += "\npeak fill percentiles are exact to 1,000 tokens; THRESHOLD applies to each window\n"
	_, err := io.WriteString(w, out)
	return err
}

// SeriesHeader is the header of --series: one row per simulated request.
var SeriesHeader = []string{"path", "window", "request", "fill", "event"}

// WriteSeries writes the per-request rows of a result simulated with
// Trace: the fill after each request's growth (above the window when it
// overflowed) and its events, space-separated: compaction (one happened
// before it), overflow, ledger_exhausted.
func (r *Result) WriteSeries(cw *csv.Writer) error {
	for _, o := range r.Settings {
		if o.Trace == nil {
			return fmt.Errorf("%s: no trace (simulate with Settings.Trace)", r.Path)
		}
		comp, over := 0, 0
		for i, fill := range o.Trace.Fills {
			n := i + 1
			var ev []string
			if comp < len(o.CompactionRequests) && o.CompactionRequests[comp] == n {
				ev = append(ev, "compaction")
				comp++
			}
			if over < len(o.OverflowRequests) && o.OverflowRequests[over] == n {
				ev = append(ev, "overflow")
				over++
			}
			if o.LedgerExhaustedAt != nil && *o.LedgerExhaustedAt == n {
				ev = append(ev, "ledger_exhausted")
			}
			cw.Write([]string{r.Path, i64(o.Window), strconv.Itoa(n), i64(fill), strings.Join(ev, " ")})
		}
	}
	return cw.Error()
}
