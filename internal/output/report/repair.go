package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rollout-dev/rollout/internal/edit/artifacts"
	"github.com/rollout-dev/rollout/internal/output/termsafe"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/edit/repair"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/rollout"
)

// What repair says: the plan (one line per fix), the outcome, what remains,
// and the JSON report.

// RepairPrinter prints one repair (`rollout repair`): the plan, the diff,
// the outcome and the errors that remain.
type RepairPrinter struct {
	Out, Err io.Writer
	Path     string // the input as named
	Write    bool   // --write: the plan is applied
	Output   string // -o: where it is written, "" in place
	Diff     string // --diff: "short", "full" or ""
	Color    bool   // colour the short diff
	OutIsTTY bool   // Out is a terminal: the full diff is escaped
	// Say and Hint write one message on Err; the command owns their
	// prefix.
	Say, Hint func(format string, args ...any)
}

// appendShort appends a value rendered for the one-line plan: invalid
// UTF-8 as U+FFFD, line breaks and tabs as \n, \r and \t, and past 60
// runes (or when the value was kept truncated, n > len(b)) cut with "…".
// It makes no string: a plan of 100,000 fixes prints from one buffer.
func appendShort(dst, b []byte, n int) []byte {
	if len(b) == 0 {
		return append(dst, "(none)"...)
	}
	runes := 0
	cut := n > len(b)
	room := func() bool { // room for one more rune of the escaped text
		if runes == 60 {
			cut = true
			return false
		}
		runes++
		return true
	}
scan:
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			// As strings.ToValidUTF8: one U+FFFD per run of bad bytes.
			for i < len(b) {
				if r, size := utf8.DecodeRune(b[i:]); r != utf8.RuneError || size != 1 {
					break
				}
				i++
			}
			if !room() {
				break scan
			}
			dst = utf8.AppendRune(dst, utf8.RuneError)
			continue
		case r == '\n' || r == '\r' || r == '\t':
			for _, c := range [2]byte{'\\', "nrt"[strings.IndexByte("\n\r\t", byte(r))]} {
				if !room() {
					break scan
				}
				dst = append(dst, c)
			}
		default:
			if !room() {
				break scan
			}
			dst = append(dst, b[i:i+size]...)
		}
		i += size
	}
	if cut {
		dst = append(dst, "…"...)
	}
	return dst
}

// PlanLine is one line of the printed plan: a change, or a run of ordinal
// changes on consecutive lines shifted by the same amount.
type PlanLine struct {
	repair.LineRange // its rule and the input lines it covers
	Where, What      string
}

// PlanLines are the lines of the plan of changes cs, as repair prints them.
func PlanLines(cs *repair.Changes) []PlanLine {
	var out []PlanLine
	var where, what []byte
	for i := 0; i < cs.Len(); {
		j := planGroup(cs, i)
		g := groupOf(cs, i, j)
		where, what = appendWhere(where[:0], g), appendWhat(what[:0], g)
		out = append(out, PlanLine{repair.LineRange{Rule: g.first.Rule, First: g.first.Line, Last: g.last.Line}, string(where), string(what)})
		i = j
	}
	return out
}

// group is the changes of one plan line: one, or a run (its first and
// last change and their number).
type group struct {
	first, last repair.Change
	n           int
}

func groupOf(cs *repair.Changes, i, j int) group {
	return group{cs.At(i), cs.At(j - 1), j - i}
}

// planGroup returns the end of the plan line that starts at change i: a
// run of ordinal changes, or the change alone.
func planGroup(cs *repair.Changes, i int) int {
	if j := ordinalRun(cs, i); j > i+1 {
		return j
	}
	return i + 1
}

// appendWhere appends where a plan line's changes are: "line N", or
// "lines A-B" for a run.
func appendWhere(dst []byte, g group) []byte {
	if g.n > 1 {
		dst = strconv.AppendInt(append(dst, "lines "...), int64(g.first.Line), 10)
		return strconv.AppendInt(append(dst, '-'), int64(g.last.Line), 10)
	}
	return strconv.AppendInt(append(dst, "line "...), int64(g.first.Line), 10)
}

// appendWhat appends what a plan line's changes do.
func appendWhat(dst []byte, g group) []byte {
	c := g.first
	if g.n > 1 {
		last := g.last
		dst = append(dst, "ordinal: "...)
		if c.HadBefore {
			dst = appendShort(dst, c.Before, c.BeforeLen)
			dst = appendShort(append(dst, ".."...), last.Before, last.BeforeLen)
		} else {
			dst = append(dst, "(none)"...)
		}
		dst = append(append(append(dst, " -> "...), c.After...), ".."...)
		dst = append(append(dst, last.After...), " ("...)
		return append(strconv.AppendInt(dst, int64(g.n), 10), " lines)"...)
	}
	switch c.Action {
	case rollout.ActionSet:
		dst = appendShort(append(append(dst, c.Member...), ": "...), c.Before, c.BeforeLen)
		if c.AfterLen == 0 && c.HadBefore {
			return append(dst, " -> (removed)"...)
		}
		return appendShort(append(dst, " -> "...), c.After, c.AfterLen)
	case rollout.ActionEdit:
		dst = append(append(dst, c.Member...), ": "...)
		switch {
		case c.BeforeLen == 0:
			return appendShort(append(dst, "inserted "...), c.After, c.AfterLen)
		case c.AfterLen == 0:
			return appendShort(append(dst, "removed "...), c.Before, c.BeforeLen)
		}
		dst = appendShort(dst, c.Before, c.BeforeLen)
		return appendShort(append(dst, " -> "...), c.After, c.AfterLen)
	case rollout.ActionQuarantine:
		dst = strconv.AppendInt(append(dst, "to quarantine, "...), int64(c.BeforeLen), 10)
		return appendShort(append(dst, " bytes: "...), c.Before, c.BeforeLen)
	case rollout.ActionSplit:
		return append(append(dst, "split into "...), c.After...)
	case rollout.ActionCut:
		dst = strconv.AppendInt(append(dst, "torn bytes to quarantine, "...), int64(c.BeforeLen), 10)
		return appendShort(append(dst, " bytes: "...), c.Before, c.BeforeLen)
	case rollout.ActionMove:
		return strconv.AppendInt(append(dst, "moved to line "...), int64(c.OutLine), 10)
	case rollout.ActionInsert:
		dst = append(strconv.AppendInt(append(dst, "new line "...), int64(c.OutLine), 10), ": "...)
		return appendShort(dst, c.After, c.AfterLen)
	case rollout.ActionLF:
		return append(dst, `line end \r\n -> \n`...)
	}
	return dst
}

// ordinalRun returns the end of the run of ordinal changes starting at i.
func ordinalRun(cs *repair.Changes, i int) int {
	first := cs.At(i)
	if !isOrdinalSet(first) {
		return i
	}
	delta := func(c repair.Change) (int64, bool) {
		if !c.HadBefore {
			return 0, true
		}
		b, err1 := strconv.ParseInt(string(c.Before), 10, 64)
		a, err2 := strconv.ParseInt(string(c.After), 10, 64)
		return a - b, err1 == nil && err2 == nil
	}
	d0, ok := delta(first)
	if !ok {
		return i + 1
	}
	j, p := i+1, first
	for ; j < cs.Len(); j++ {
		c := cs.At(j)
		d, ok := delta(c)
		if !isOrdinalSet(c) || !ok || d != d0 || c.Rule != p.Rule || c.HadBefore != p.HadBefore || c.OutLine != p.OutLine+1 {
			break
		}
		p = c
	}
	return j
}

// isOrdinalSet reports whether a change sets a line's ordinal.
func isOrdinalSet(c repair.Change) bool {
	return c.Action == rollout.ActionSet && c.Member == "ordinal"
}

func (p *RepairPrinter) PrintPlan(out *repair.Outcome) {
	w := bufio.NewWriterSize(p.Out, 64<<10)
	defer w.Flush()
	// Two passes over the changes, the first for the count and the column
	// widths: the plan is printed as it is made, never held as strings.
	cs := out.Changes
	var buf []byte
	lines, wr, ww := 0, 0, 0
	renumbered := 0 // the first input line whose ordinal changes (0: none)
	for i := 0; i < cs.Len(); {
		j := planGroup(cs, i)
		g := groupOf(cs, i, j)
		if isOrdinalSet(g.first) && (renumbered == 0 || g.first.Line < renumbered) {
			renumbered = g.first.Line
		}
		buf = appendWhere(buf[:0], g)
		ww = max(ww, utf8.RuneCount(buf))
		wr = max(wr, utf8.RuneCountInString(g.first.Rule))
		lines++
		i = j
	}
	const salvageWhere, salvageRule = "zstd tail", "line/torn-tail"
	if out.Salvage != nil {
		ww, wr = max(ww, len(salvageWhere)), max(wr, len(salvageRule))
		lines++
	}
	mode := "planned (dry run: nothing is written)"
	if p.Write {
		mode = "planned"
	}
	fmt.Fprintf(w, "%s: %d %s %s\n", termsafe.String(p.Path), lines, plural(lines, "fix", "fixes"), mode)
	var what []byte
	for i := 0; i < cs.Len(); {
		j := planGroup(cs, i)
		g := groupOf(cs, i, j)
		// "  %-*s  %-*s  %s\n" of where, rule and the escaped what.
		buf = append(buf[:0], "  "...)
		n := len(buf)
		buf = appendWhere(buf, g)
		buf = appendPad(buf, ww-utf8.RuneCount(buf[n:]))
		buf = append(append(buf, "  "...), g.first.Rule...)
		buf = appendPad(buf, wr-utf8.RuneCountInString(g.first.Rule))
		what = appendWhat(what[:0], g)
		buf = append(termsafe.Append(append(buf, "  "...), what), '\n')
		w.Write(buf)
		i = j
	}
	if sv := out.Salvage; sv != nil {
		fmt.Fprintf(w, "  %-*s  %-*s  to quarantine as base64, %d bytes from byte %d on: the zstd stream is cut short there (the %d bytes decoded before it are kept)\n",
			ww, salvageWhere, wr, salvageRule, sv.TailBytes(), sv.Offset, sv.Decoded)
	}
	for _, s := range out.Skips {
		fmt.Fprintf(w, "  line %d  %s  not fixed: %s\n", s.Line, s.Label, termsafe.String(s.Reason))
	}
	if st := out.Input.State; st != nil && st.HistoryMode == rollout.HistoryPaginated && lines > 0 {
		// Only what is renumbered: a torn last line removed shifts no
		// ordinal, though the plan's sequence starts there.
		if renumbered > 1 {
			fmt.Fprintf(w, "  note: ordinals are renumbered from line %d on; the lines before it keep theirs\n", renumbered)
		}
		if out.Projection == nil && !out.InHome {
			fmt.Fprintf(w, "  note: Codex keeps a projection of this paginated thread (%s) in thread_history_1.sqlite, by byte offset and ordinal: if this repair changes a line before its cursor, stop Codex and remove the thread's projection (docs/repair.md, \"Codex's history database\")\n", st.ThreadID)
		}
	}
	if pp := out.Projection; pp != nil {
		fmt.Fprintf(w, "  note: Codex's projection of thread %s in %s (%d items, %d turns) was made from the file up to byte %d, and this repair changes it from byte %d on: --write deletes the projection in one transaction before it replaces the file, as Codex does before it rewrites a rollout, and Codex projects the thread again from the repaired file; repair --undo puts the rows back\n",
			pp.ThreadID, termsafe.String(filepath.Base(pp.DB)), pp.Items, pp.Turns, pp.Cursor, pp.From)
	}
	if out.Links > 1 && p.Output == "" {
		fmt.Fprintf(w, "  note: %s has %d other hard %s: %s the old content (the repair writes a new file)\n",
			termsafe.String(p.Path), out.Links-1, plural(int(out.Links-1), "link", "links"), plural(int(out.Links-1), "it keeps", "they keep"))
	}
}

func appendPad(dst []byte, n int) []byte {
	for ; n > 0; n-- {
		dst = append(dst, ' ')
	}
	return dst
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printOutcome says what was written and what remains: the counts on
// stdout, the remaining errors on stderr.
func (p *RepairPrinter) PrintOutcome(out *repair.Outcome, remaining []checks.Finding) {
	w := p.Out
	switch {
	case out.Wrote && !out.NothingToFix():
		fmt.Fprintf(w, "wrote %s (%d lines, %d changed", termsafe.String(out.Target), out.LinesOut, out.Changes.Len())
		if out.Backup != "" {
			fmt.Fprintf(w, "; the original is kept as %s", termsafe.String(out.Backup))
		}
		fmt.Fprintln(w, ")")
	case out.Wrote:
		fmt.Fprintf(w, "wrote %s (unchanged copy)\n", termsafe.String(out.Target))
	}
	if pp := out.Projection; pp != nil && pp.Deleted && out.Wrote {
		fmt.Fprintf(w, "deleted Codex's projection of thread %s (%d items, %d turns) from %s: Codex projects it again from the file\n",
			pp.ThreadID, pp.Items, pp.Turns, termsafe.String(pp.DB))
	}
	if n := len(out.Quarantined); n > 0 {
		verb := "would go"
		if out.Wrote {
			verb = "went"
		}
		if k := out.AlreadyQuarantined; k > 0 {
			fmt.Fprintf(w, "%d %s %s to %s (%d already there, not added again)\n", n, plural(n, "line", "lines"), verb, termsafe.String(out.Quarantine), k)
		} else {
			fmt.Fprintf(w, "%d %s %s to %s\n", n, plural(n, "line", "lines"), verb, termsafe.String(out.Quarantine))
		}
	}
	if sv := out.Salvage; sv != nil && out.Refusal == nil {
		verb := "would go"
		if out.Wrote {
			verb = "went"
		}
		again := ""
		if sv.Duplicate {
			again = " (already there, not added again)"
		}
		fmt.Fprintf(w, "the unreadable end of the zstd stream (%d bytes from byte %d on) %s to %s as base64%s\n", sv.TailBytes(), sv.Offset, verb, termsafe.String(out.Quarantine), again)
	}
	var nerr, nwarn, ninfo int
	for _, f := range remaining {
		switch f.Severity {
		case checks.Error:
			nerr++
		case checks.Warning:
			nwarn++
		default:
			ninfo++
		}
	}
	after := "after repair"
	if out.NothingToFix() {
		after = "as it is"
	} else if !out.Wrote {
		after = "after this repair"
	}
	fmt.Fprintf(w, "%s: %d %s, %d %s, %d %s\n", after, nerr, plural(nerr, "error", "errors"), nwarn,
		plural(nwarn, "warning", "warnings"), ninfo, plural(ninfo, "info", "infos"))
	if nerr > 0 {
		p.printRemaining(out, remaining, nerr)
	}
	if !p.Write && !out.NothingToFix() && out.Refusal == nil {
		backup := p.Path + artifacts.BackupSuffix
		if place, err := artifacts.For(p.Path); err == nil {
			backup = place.Backup(0)
		}
		p.Hint("add --write to apply the plan (the original is kept as %s), or --write -o OUT to write elsewhere", termsafe.String(backup))
	}
	p.hintOptIn(out, remaining)
}

// hintOptIn offers the opt-in fixes of what remains after this repair:
// a finding the plan's own fixes resolve (the call of an orphan output
// restored by splitting a glued line, the copy of a call removed) would be
// "fixed" again by discarding or inventing data.
func (p *RepairPrinter) hintOptIn(out *repair.Outcome, remaining []checks.Finding) {
	left := map[string]bool{}
	for _, f := range remaining {
		left[f.Rule] = true
	}
	var optIn []string
	seen := map[string]bool{}
	for _, u := range out.Fixes.Left {
		if strings.HasPrefix(u.Reason, "opt-in") && left[u.Rule] && !seen[u.Rule] {
			seen[u.Rule] = true
			optIn = append(optIn, u.Rule)
		}
	}
	if len(optIn) > 0 {
		p.Hint("%s %s an opt-in fix: add --fix default,%s to apply it",
			strings.Join(optIn, ", "), plural(len(optIn), "has", "have"), strings.Join(optIn, ","))
	}
}

// printRemaining lists the errors left after the repair on stderr.
func (p *RepairPrinter) printRemaining(out *repair.Outcome, remaining []checks.Finding, nerr int) {
	e := p.Err
	where := "lines of the repaired file"
	if out.NothingToFix() {
		where = "lines of the file"
	}
	p.Say("%d %s (%s):", nerr, plural(nerr, "error remains", "errors remain"), where)
	left := map[string]string{}
	for _, u := range out.Fixes.Left {
		left[u.Rule] = u.Reason
	}
	for _, f := range remaining {
		if f.Severity != checks.Error {
			continue
		}
		note := "no fix"
		if why, ok := left[f.Rule]; ok {
			note = "not fixed: " + why
		} else if checks.HasFixer(f.Rule) {
			note = "not fixed"
		}
		fmt.Fprintf(e, "  %d  %s  %s (%s)\n", f.Line, f.Rule, termsafe.String(f.Message), note)
	}
}

// The JSON report (--report FILE): versioned and additive like verify's.
type repairReportJSON struct {
	schema.Header
	Path        string           `json:"path"`
	Output      string           `json:"output"`
	Written     bool             `json:"written"`
	Backup      string           `json:"backup,omitempty"`
	Quarantine  string           `json:"quarantine,omitempty"`
	Changes     []changeJSON     `json:"changes"`
	Quarantined []quarantineJSON `json:"quarantined"`
	ZstdTail    *zstdTailJSON    `json:"zstd_tail,omitempty"`
	NotFixed    []notFixedJSON   `json:"not_fixed"`
	Remaining   remainingJSON    `json:"remaining"`
	Refused     string           `json:"refused,omitempty"`
}

type changeJSON struct {
	Rule       string          `json:"rule"`
	Line       int             `json:"line"`
	ByteOffset int64           `json:"byte_offset"`
	Object     int             `json:"object,omitempty"`
	Action     string          `json:"action"`
	Path       string          `json:"path,omitempty"`
	Before     json.RawMessage `json:"before,omitempty"`
	After      json.RawMessage `json:"after,omitempty"`
	OutputLine int             `json:"output_line,omitempty"`
}

type quarantineJSON struct {
	Line       int    `json:"line"`
	ByteOffset int64  `json:"byte_offset"`
	Reason     string `json:"reason"`
	Bytes      int    `json:"bytes"`
}

// zstdTailJSON is the salvage of a zstd input cut short: the bytes from
// Offset on, stored in the quarantine.
type zstdTailJSON struct {
	Offset       int64 `json:"offset"`
	Bytes        int64 `json:"bytes"`
	FileSize     int64 `json:"file_size"`
	DecodedBytes int64 `json:"decoded_bytes"`
	Line         int   `json:"line"`
}

type notFixedJSON struct {
	Rule   string `json:"rule"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

type remainingJSON struct {
	Errors   int           `json:"errors"`
	Warnings int           `json:"warnings"`
	Infos    int           `json:"infos"`
	Findings []findingJSON `json:"findings"`
}

type findingJSON struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

// jsonValue is a change's value as JSON: the value itself when it is a
// JSON scalar (ids, ordinals), else a JSON string of its bytes (a new line
// stays byte for byte, not re-indented).
func jsonValue(b []byte, n int, had bool) json.RawMessage {
	if !had && len(b) == 0 {
		return nil
	}
	// json.Valid accepts invalid UTF-8 inside strings: the report must not.
	if n == len(b) && len(b) > 0 && b[0] != '{' && b[0] != '[' && json.Valid(b) && utf8.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(strings.ToValidUTF8(string(b), "\uFFFD"))
	return s
}

func WriteRepairJSON(w io.Writer, out *repair.Outcome) error {
	rep := repairReportJSON{Header: schema.NewHeader(schema.Repair),
		Path: out.Path, Output: out.Target, Written: out.Wrote, Backup: out.Backup,
		Changes: []changeJSON{}, Quarantined: []quarantineJSON{}, NotFixed: []notFixedJSON{}}
	if len(out.Quarantined) > 0 || out.Salvage != nil {
		rep.Quarantine = out.Quarantine
	}
	if sv := out.Salvage; sv != nil {
		rep.ZstdTail = &zstdTailJSON{Offset: sv.Offset, Bytes: sv.TailBytes(), FileSize: sv.Size, DecodedBytes: sv.Decoded, Line: sv.Line}
	}
	if out.Refusal != nil {
		rep.Refused = out.Refusal.Error()
	}
	for _, c := range out.Changes.All {
		cj := changeJSON{Rule: c.Rule, Line: c.Line, ByteOffset: c.Offset, Object: c.Part, Action: c.Action, Path: c.Member, OutputLine: c.OutLine}
		switch c.Action {
		case rollout.ActionSet, rollout.ActionInsert, rollout.ActionEdit:
			cj.Before = jsonValue(c.Before, c.BeforeLen, c.HadBefore)
			cj.After = jsonValue(c.After, c.AfterLen, true)
		case rollout.ActionSplit, rollout.ActionLF:
			cj.Before = jsonValue(c.Before, c.BeforeLen, c.HadBefore)
			cj.After = jsonValue(c.After, c.AfterLen, true)
		}
		rep.Changes = append(rep.Changes, cj)
	}
	for _, q := range out.Quarantined {
		rep.Quarantined = append(rep.Quarantined, quarantineJSON{q.Line, q.Offset, q.Reason, q.Bytes})
	}
	for _, u := range out.Fixes.Left {
		rep.NotFixed = append(rep.NotFixed, notFixedJSON{u.Rule, u.Line, u.Reason})
	}
	for _, s := range out.Skips {
		rep.NotFixed = append(rep.NotFixed, notFixedJSON{s.Label, s.Line, s.Reason})
	}
	rep.Remaining.Findings = []findingJSON{}
	for _, f := range out.Remaining() {
		switch f.Severity {
		case checks.Error:
			rep.Remaining.Errors++
		case checks.Warning:
			rep.Remaining.Warnings++
		default:
			rep.Remaining.Infos++
		}
		rep.Remaining.Findings = append(rep.Remaining.Findings, findingJSON{f.Rule, f.Severity.String(), f.Line, f.Message})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(rep)
}

// printDiff prints the diff --diff asks for. The unified diff (--diff=full)
// is written as is for patch, and escaped only when it goes to a terminal.
func (p *RepairPrinter) PrintDiff(t *repair.Txn) error {
	w := p.Out
	switch p.Diff {
	case "short":
		d := &wordDiff{w: w, color: p.Color}
		if err := t.DiffLines(d.line); err != nil {
			return err
		}
		return d.close()
	case "full":
		if p.OutIsTTY {
			w = &termsafeWriter{w: w}
		}
		return t.WriteDiff(w)
	}
	return nil
}

// termsafeWriter escapes each line written through it (the writes of the
// unified diff are whole lines).
type termsafeWriter struct{ w io.Writer }

func (t *termsafeWriter) Write(b []byte) (int, error) {
	if _, err := io.WriteString(t.w, termsafe.Lines(string(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// NothingToRepair says why a repair plans nothing, and what would change it.
func NothingToRepair(out *repair.Outcome, fixes checks.FixSet) string {
	fs := out.Input.Findings
	if len(fs) == 0 {
		return "verify finds nothing in it"
	}
	var unselected []string
	for _, f := range fs {
		if f.Fixable && !fixes[f.Rule] && !slices.Contains(unselected, f.Rule) {
			unselected = append(unselected, f.Rule)
		}
	}
	if len(unselected) > 0 {
		return fmt.Sprintf("the fixes of %s are not selected (opt-in): add --fix %s", strings.Join(unselected, ", "), strings.Join(unselected, ","))
	}
	return fmt.Sprintf("no fix applies to its %s (rollout explain RULE says what to do)", Count(len(fs), "finding"))
}

// RepairOutcomes is the summary of a repair of many files: how many ended
// each way (outcomes, by name), in a fixed order, or "nothing to repair".
func RepairOutcomes(outcomes map[string]int) string {
	var parts []string
	for _, k := range []string{"clean", "errors remain", "incomplete", "refused", "unusable", "internal error", "not read"} {
		if n := outcomes[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		return "nothing to repair"
	}
	return strings.Join(parts, ", ")
}

// PrintRepairUndo says what repair --undo of path put back.
func PrintRepairUndo(w io.Writer, path string, out *repair.UndoOutcome) {
	note := ""
	if out.Resumed {
		note = " (an undo stopped after its rename, finished)"
	}
	fmt.Fprintf(w, "%s: restored from %s%s\n", termsafe.String(path), termsafe.String(out.Backup), note)
	switch {
	case out.Quarantine != "" && out.Deleted:
		fmt.Fprintf(w, "removed %s (the repair created it, %s)\n", termsafe.String(out.Quarantine), Count(out.Removed, "line"))
	case out.Quarantine != "":
		fmt.Fprintf(w, "removed %s the repair added from %s\n", Count(out.Removed, "line"), termsafe.String(out.Quarantine))
	}
	if out.Projection {
		fmt.Fprintf(w, "put back Codex's projection of the thread the repair had deleted\n")
	}
}
