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
	"github.com/rollout-dev/rollout/internal/output/htmlpage"
	"github.com/rollout-dev/rollout/internal/output/schema"
)

// The outputs of `rollout simulate-budget` over one rollout: JSON, CSV, a
// terminal table and the --series rows (charts: internal/output/chart).

// budgetReport is the JSON of budget.md: the common header, then the
// result's fields.
type budgetReport struct {
	schema.Header
	*budget.Result
}

// WriteBudgetJSON writes the versioned JSON of budget.md, indented, with a
// final newline.
func WriteBudgetJSON(w io.Writer, r *budget.Result) error {
	return writeJSON(w, budgetReport{schema.NewHeader(schema.Budget), r})
}

// writeJSON writes v indented, HTML unescaped, with a final newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// budgetCSVHeader names the CSV columns; lists are space-separated inside
// one field, a null ledger exhaustion is an empty field.
var budgetCSVHeader = []string{"path", "window", "threshold", "post_compact_tokens", "compactions",
	"compaction_requests", "peak_fill", "overflows", "overflow_requests", "deferrals",
	"undelivered", "ledger_exhausted_at", "reminders"}

// WriteBudgetCSV writes a header and one row per window, each with the
// rollout's path first (the same columns for one rollout and for
// --per-session).
func WriteBudgetCSV(w io.Writer, r *budget.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(budgetCSVHeader); err != nil {
		return err
	}
	for _, o := range r.Settings {
		row := []string{r.Path, i64(o.Window), i64(o.Threshold), i64(o.PostCompactTokens),
			strconv.Itoa(o.Compactions), joinInts(o.CompactionRequests, " "), i64(o.PeakFill),
			strconv.Itoa(o.Overflows), joinInts(o.OverflowRequests, " "), strconv.Itoa(o.Deferrals),
			strconv.Itoa(o.Undelivered), exhaustedAt(o.LedgerExhaustedAt), strconv.Itoa(o.Reminders)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// exhaustedAt is a ledger exhaustion's CSV field: the request, or empty.
func exhaustedAt(req *int) string {
	if req == nil {
		return ""
	}
	return strconv.Itoa(*req)
}

// maxListed is how many request numbers a table cell lists.
const maxListed = 6

// WriteBudgetText writes a summary and one row per window, side by side,
// for a terminal. Handoff, ledger and reminder columns appear only when
// those settings are in play.
func WriteBudgetText(w io.Writer, r *budget.Result) error {
	var b strings.Builder
	writeBudgetSummary(&b, r)
	p := r.Params()
	handoffs := false
	for _, o := range r.Settings {
		handoffs = handoffs || len(o.Handoffs) > 0
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.TabIndent)
	cols := []string{"WINDOW", "THRESHOLD", "POST-COMPACT", "PEAK FILL", "COMPACTIONS", "OVERFLOWS"}
	cols = append(cols, optionalColumns(handoffs, p.Ledger > 0, p.ReminderEvery > 0, "DEFERRALS", "LEDGER")...)
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, o := range r.Settings {
		cells := []string{thousands(o.Window), thousands(o.Threshold), thousands(o.PostCompactTokens), thousands(o.PeakFill),
			listed(o.Compactions, o.CompactionRequests), listed(o.Overflows, o.OverflowRequests)}
		if handoffs {
			cells = append(cells, strconv.Itoa(o.Deferrals), strconv.Itoa(o.Undelivered))
		}
		if p.Ledger > 0 {
			led := "ok"
			if o.LedgerExhaustedAt != nil {
				led = fmt.Sprintf("exhausted at %d", *o.LedgerExhaustedAt)
			}
			cells = append(cells, led)
		}
		if p.ReminderEvery > 0 {
			cells = append(cells, strconv.Itoa(o.Reminders))
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	footnote := "\ncompactions and overflows list their request numbers (1-based, re-emitted and rolled-back token counts excluded)\n"
	if slices.ContainsFunc(r.Settings, func(o budget.Outcome) bool { return o.Overflows > 0 }) {
		footnote += peakNote
	}
	_, err := io.WriteString(w, trimLines(b.String())+footnote)
	return err
}

// peakNote says why PEAK FILL can be below the window in a row with
// overflows (docs/simulate-budget.md, "peak_fill").
const peakNote = "PEAK FILL is the highest fill of a request that fit the window: an overflowing request is never sent\n"

// writeBudgetSummary writes the table's head: the rollout, what it
// recorded and how well the model reproduces it.
func writeBudgetSummary(b *strings.Builder, r *budget.Result) {
	fmt.Fprintf(b, "%s: %s, %s\n", r.Path, Count(r.Requests, "request"), Count(r.Turns, "turn"))
	rec := r.Recorded
	fmt.Fprintf(b, "recorded:    window %s, %s, peak fill %s\n",
		thousands(rec.Window), countAt(rec.Compactions, "compaction", rec.CompactionRequests), thousands(rec.PeakFill))
	cal := r.Calibration
	if rec.Window > 0 {
		how := r.Params().CompactAt.String()
		if cal.Auto {
			how += ", fitted by --compact-at auto"
		}
		if cal.RecordedCompactions == 0 {
			fmt.Fprintf(b, "calibration: none: the rollout records no compaction to compare the model with (threshold %s (%s) is not checked)\n",
				thousands(*cal.Threshold), how)
		} else {
			fmt.Fprintf(b, "calibration: at the recorded window with threshold %s (%s), the model reproduces %d of %d recorded compactions (same request +/- 1)\n",
				thousands(*cal.Threshold), how, cal.Reproduced, cal.RecordedCompactions)
		}
		if f := cal.Fitted; f != nil && f.Better && !cal.Auto {
			fmt.Fprintf(b, "fitted:      threshold %s (%s) with post-compaction fill %s reproduces %d of %d (--compact-at auto uses it)\n",
				thousands(*f.Threshold), f.CompactAt, thousands(*f.PostCompactTokens), f.Reproduced, f.RecordedCompactions)
		}
	} else {
		b.WriteString("calibration: none (the rollout records no window)\n")
	}
	b.WriteString("\n")
}

// optionalColumns are the columns of the settings in play: handoffs (two
// columns), the ledger and reminders; deferred and ledger name the first
// handoff column and the ledger's, which the two tables word differently.
func optionalColumns(handoffs, ledger, reminders bool, deferred, ledgerCol string) []string {
	var cols []string
	if handoffs {
		cols = append(cols, deferred, "UNDELIVERED")
	}
	if ledger {
		cols = append(cols, ledgerCol)
	}
	if reminders {
		cols = append(cols, "REMINDERS")
	}
	return cols
}

// trimLines drops the blanks tabwriter pads the last cell with, and ends
// the text with one newline.
func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n") + "\n"
}

// listed renders "3 at 9, 17, 30", eliding long lists.
func listed(n int, reqs []int) string {
	if n == 0 {
		return "0"
	}
	shown := reqs
	if len(shown) > maxListed {
		shown = shown[:maxListed]
	}
	s := fmt.Sprintf("%d at %s", n, joinInts(shown, ", "))
	if len(reqs) > maxListed {
		s += ", ..."
	}
	return s
}

func countAt(n int, noun string, reqs []int) string {
	if n == 0 {
		return "no " + noun + "s"
	}
	return Count(n, noun) + " (at request " + strings.TrimPrefix(listed(n, reqs), strconv.Itoa(n)+" at ") + ")"
}

func joinInts(xs []int, sep string) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

func i64(v int64) string { return strconv.FormatInt(v, 10) }

// thousands writes 258400 as 258,400.
func thousands(v int64) string { return htmlpage.Group(v) }

// seriesHeader is the header of --series: one row per simulated request.
var seriesHeader = []string{"path", "window", "request", "fill", "event"}

// A Series writes the rows of --series as CSV: the header, then each
// result's rows (simulated with Trace) in the order they are added.
type Series struct {
	cw     *csv.Writer
	headed bool
}

// NewSeries starts the series written to w.
func NewSeries(w io.Writer) *Series { return &Series{cw: csv.NewWriter(w)} }

// Add writes the per-request rows of one result: the fill after each
// request's growth (above the window when it overflowed) and its events,
// space-separated: compaction (one happened before it), overflow,
// ledger_exhausted.
func (s *Series) Add(r *budget.Result) error {
	s.head()
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
			s.cw.Write([]string{r.Path, i64(o.Window), strconv.Itoa(n), i64(fill), strings.Join(ev, " ")})
		}
	}
	return s.cw.Error()
}

// head writes the header once, before the first row (or at Flush).
func (s *Series) head() {
	if !s.headed {
		s.cw.Write(seriesHeader)
		s.headed = true
	}
}

// Flush writes what is buffered, the header at least.
func (s *Series) Flush() error {
	s.head()
	s.cw.Flush()
	return s.cw.Error()
}

// WriteBudgetSeries writes the --series of one rollout.
func WriteBudgetSeries(w io.Writer, r *budget.Result) error {
	s := NewSeries(w)
	if err := s.Add(r); err != nil {
		return err
	}
	return s.Flush()
}
