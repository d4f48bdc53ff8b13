package budget

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteJSON writes the versioned JSON of budget.md, indented, with a final
// newline.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// csvHeader names the CSV columns; lists are space-separated inside one
// field, a null ledger exhaustion is an empty field.
var csvHeader = []string{"path", "window", "threshold", "post_compact_tokens", "compactions",
	"compaction_requests", "peak_fill", "overflows", "overflow_requests", "deferrals",
	"undelivered", "ledger_exhausted_at", "reminders"}

// WriteCSV writes a header and one row per window, each with the rollout's
// path first (the same columns for one rollout and for --per-session).
func (r *Result) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, o := range r.Settings {
		exhausted := ""
		if o.LedgerExhaustedAt != nil {
			exhausted = strconv.Itoa(*o.LedgerExhaustedAt)
		}
		row := []string{r.Path, i64(o.Window), i64(o.Threshold), i64(o.PostCompactTokens),
			strconv.Itoa(o.Compactions), joinInts(o.CompactionRequests, " "), i64(o.PeakFill),
			strconv.Itoa(o.Overflows), joinInts(o.OverflowRequests, " "), strconv.Itoa(o.Deferrals),
			strconv.Itoa(o.Undelivered), exhausted, strconv.Itoa(o.Reminders)}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// maxListed is how many request numbers a table cell lists.
const maxListed = 6

// WriteTable writes a summary and one row per window, side by side, for a
// terminal. Handoff, ledger and reminder columns appear only when those
// settings are in play.
func (r *Result) WriteTable(w io.Writer) error {
	p := r.params
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s, %s\n", r.Path, plural(r.Requests, "request"), plural(r.Turns, "turn"))
	rec := r.Recorded
	fmt.Fprintf(&b, "recorded:    window %s, %s, peak fill %s\n",
		group(rec.Window), countAt(rec.Compactions, "compaction", rec.CompactionRequests), group(rec.PeakFill))
	cal := r.Calibration
	if rec.Window > 0 {
		how := p.CompactAt.String()
		if cal.Auto {
			how += ", fitted by --compact-at auto"
		}
		fmt.Fprintf(&b, "calibration: at the recorded window with threshold %s (%s), the model reproduces %d of %d recorded compactions (same request +/- 1)\n",
			group(*cal.Threshold), how, cal.Reproduced, cal.RecordedCompactions)
		if f := cal.Fitted; f != nil && f.Better && !cal.Auto {
			fmt.Fprintf(&b, "fitted:      threshold %s (%s) with post-compaction fill %s reproduces %d of %d (--compact-at auto uses it)\n",
				group(*f.Threshold), f.CompactAt, group(*f.PostCompactTokens), f.Reproduced, f.RecordedCompactions)
		}
	} else {
		b.WriteString("calibration: none (the rollout records no window)\n")
	}
	b.WriteString("\n")

	handoffs := false
	for _, o := range r.Settings {
		handoffs = handoffs || len(o.Handoffs) > 0
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight|tabwriter.TabIndent)
	cols := []string{"WINDOW", "THRESHOLD", "POST-COMPACT", "PEAK FILL", "COMPACTIONS", "OVERFLOWS"}
	if handoffs {
		cols = append(cols, "DEFERRALS", "UNDELIVERED")
	}
	if p.Ledger > 0 {
		cols = append(cols, "LEDGER")
	}
	if p.ReminderEvery > 0 {
		cols = append(cols, "REMINDERS")
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, o := range r.Settings {
		cells := []string{group(o.Window), group(o.Threshold), group(o.PostCompactTokens), group(o.PeakFill),
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
	// tabwriter pads the last cell too: trim trailing blanks.
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	footnote := "\ncompactions and overflows list their request numbers (1-based, re-emitted and rolled-back token counts excluded)\n"
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n"+footnote)
	return err
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
	return plural(n, noun) + " (at request " + strings.TrimPrefix(listed(n, reqs), strconv.Itoa(n)+" at ") + ")"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
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

// group writes 258400 as 258,400.
func group(v int64) string {
	s := strconv.FormatInt(v, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
