package main

import (
	"encoding/json"
	"fmt"
	"github.com/rollout-dev/rollout/internal/termsafe"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/repair"
	"github.com/rollout-dev/rollout/rollout"
)

// What repair says: the plan (one line per fix), the outcome, what remains,
// and the JSON report.

// repairPrinter prints one repair.
type repairPrinter struct {
	a *app
	o *repairOptions
}

// controlEscaper shows line breaks and tabs in a one-line plan; built once,
// not per printed line.
var controlEscaper = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`)

// short renders a value for the one-line plan.
func short(b []byte, n int, had bool) string {
	if len(b) == 0 {
		return "(none)"
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = controlEscaper.Replace(s)
	if utf8.RuneCountInString(s) > 60 || n > len(b) {
		rs := []rune(s)
		if len(rs) > 60 {
			rs = rs[:60]
		}
		s = string(rs) + "…"
	}
	return s
}

// planLine is one line of the printed plan: a change, or a run of ordinal
// changes on consecutive lines shifted by the same amount.
type planLine struct {
	rule, where, what string
}

func planLines(cs []repair.Change) []planLine {
	var out []planLine
	for i := 0; i < len(cs); i++ {
		c := cs[i]
		if j := ordinalRun(cs, i); j > i+1 {
			first, last := cs[i], cs[j-1]
			what := fmt.Sprintf("ordinal: %s..%s -> %s..%s (%d lines)", short(first.Before, first.BeforeLen, first.HadBefore),
				short(last.Before, last.BeforeLen, last.HadBefore), first.After, last.After, j-i)
			if !first.HadBefore {
				what = fmt.Sprintf("ordinal: (none) -> %s..%s (%d lines)", first.After, last.After, j-i)
			}
			out = append(out, planLine{c.Rule, fmt.Sprintf("lines %d-%d", first.Line, last.Line), what})
			i = j - 1
			continue
		}
		where := fmt.Sprintf("line %d", c.Line)
		var what string
		switch c.Action {
		case rollout.ActionSet:
			what = fmt.Sprintf("%s: %s -> %s", c.Member, short(c.Before, c.BeforeLen, c.HadBefore), short(c.After, c.AfterLen, true))
			if c.AfterLen == 0 && c.HadBefore {
				what = fmt.Sprintf("%s: %s -> (removed)", c.Member, short(c.Before, c.BeforeLen, true))
			}
		case rollout.ActionEdit:
			switch {
			case c.BeforeLen == 0:
				what = fmt.Sprintf("%s: inserted %s", c.Member, short(c.After, c.AfterLen, true))
			case c.AfterLen == 0:
				what = fmt.Sprintf("%s: removed %s", c.Member, short(c.Before, c.BeforeLen, true))
			default:
				what = fmt.Sprintf("%s: %s -> %s", c.Member, short(c.Before, c.BeforeLen, true), short(c.After, c.AfterLen, true))
			}
		case rollout.ActionQuarantine:
			what = fmt.Sprintf("to quarantine, %d bytes: %s", c.BeforeLen, short(c.Before, c.BeforeLen, true))
		case rollout.ActionSplit:
			what = "split into " + string(c.After)
		case rollout.ActionMove:
			what = fmt.Sprintf("moved to line %d", c.OutLine)
		case rollout.ActionInsert:
			what = fmt.Sprintf("new line %d: %s", c.OutLine, short(c.After, c.AfterLen, true))
		case rollout.ActionLF:
			what = `line end \r\n -> \n`
		}
		out = append(out, planLine{c.Rule, where, what})
	}
	return out
}

// ordinalRun returns the end of the run of ordinal changes starting at i.
func ordinalRun(cs []repair.Change, i int) int {
	isOrd := func(c repair.Change) bool { return c.Action == rollout.ActionSet && c.Member == "ordinal" }
	if !isOrd(cs[i]) {
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
	d0, ok := delta(cs[i])
	if !ok {
		return i + 1
	}
	j := i + 1
	for ; j < len(cs); j++ {
		c, p := cs[j], cs[j-1]
		d, ok := delta(c)
		if !isOrd(c) || !ok || d != d0 || c.Rule != p.Rule || c.HadBefore != p.HadBefore || c.OutLine != p.OutLine+1 {
			break
		}
	}
	return j
}

func (p *repairPrinter) printPlan(out *repair.Outcome) {
	w := p.a.io.Out
	lines := planLines(out.Changes)
	mode := "planned (dry run: nothing is written)"
	if p.o.write {
		mode = "planned"
	}
	fmt.Fprintf(w, "%s: %d %s %s\n", p.o.path, len(lines), plural(len(lines), "fix", "fixes"), mode)
	wr, ww := 0, 0
	for _, l := range lines {
		wr = max(wr, len(l.rule))
		ww = max(ww, len(l.where))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", ww, l.where, wr, l.rule, termsafe.String(l.what))
	}
	for _, s := range out.Skips {
		fmt.Fprintf(w, "  line %d  %s  not fixed: %s\n", s.Line, s.Label, termsafe.String(s.Reason))
	}
	if st := out.Input.State; st != nil && st.HistoryMode == rollout.HistoryPaginated && len(lines) > 0 {
		if seq := out.Fixes.Plan.Sequence; seq != nil && seq.From > 1 {
			fmt.Fprintf(w, "  note: ordinals are renumbered from line %d on; the lines before it keep theirs\n", seq.From)
		}
		fmt.Fprintf(w, "  note: Codex keeps a projection of this paginated thread (%s) in thread_history_1.sqlite, by byte offset and ordinal: if this repair changes a line before its cursor, stop Codex and remove the thread's projection (docs/repair.md, \"Codex's history database\")\n", st.ThreadID)
	}
	if out.Links > 1 && p.o.output == "" {
		fmt.Fprintf(w, "  note: %s has %d other hard %s: %s the old content (the repair writes a new file)\n",
			p.o.path, out.Links-1, plural(int(out.Links-1), "link", "links"), plural(int(out.Links-1), "it keeps", "they keep"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// printOutcome says what was written and what remains: the counts on
// stdout, the remaining errors on stderr.
func (p *repairPrinter) printOutcome(out *repair.Outcome, remaining []checks.Finding) {
	w, e := p.a.io.Out, p.a.io.Err
	o := p.o
	switch {
	case out.Wrote && !out.NothingToFix():
		fmt.Fprintf(w, "wrote %s (%d lines, %d changed", out.Target, out.LinesOut, len(out.Changes))
		if out.Backup != "" {
			fmt.Fprintf(w, "; the original is kept as %s", out.Backup)
		}
		fmt.Fprintln(w, ")")
	case out.Wrote:
		fmt.Fprintf(w, "wrote %s (unchanged copy)\n", out.Target)
	}
	if n := len(out.Quarantined); n > 0 {
		verb := "would go"
		if out.Wrote {
			verb = "went"
		}
		if k := out.AlreadyQuarantined; k > 0 {
			fmt.Fprintf(w, "%d %s %s to %s (%d already there, not added again)\n", n, plural(n, "line", "lines"), verb, out.Quarantine, k)
		} else {
			fmt.Fprintf(w, "%d %s %s to %s\n", n, plural(n, "line", "lines"), verb, out.Quarantine)
		}
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
	if !o.write && !out.NothingToFix() && out.Refusal == nil {
		fmt.Fprintf(e, "rollout: hint: add --write to apply the plan (the original is kept as %s.bak), or --write -o OUT to write elsewhere\n", o.path)
	}
	var optIn []string
	seen := map[string]bool{}
	for _, u := range out.Fixes.Left {
		if strings.HasPrefix(u.Reason, "opt-in") && !seen[u.Finding.Rule] {
			seen[u.Finding.Rule] = true
			optIn = append(optIn, u.Finding.Rule)
		}
	}
	if len(optIn) > 0 {
		fmt.Fprintf(e, "rollout: hint: %s %s an opt-in fix: add --fix default,%s to apply it\n",
			strings.Join(optIn, ", "), plural(len(optIn), "has", "have"), strings.Join(optIn, ","))
	}
}

// printRemaining lists the errors left after the repair on stderr.
func (p *repairPrinter) printRemaining(out *repair.Outcome, remaining []checks.Finding, nerr int) {
	e := p.a.io.Err
	where := "lines of the repaired file"
	if out.NothingToFix() {
		where = "lines of the file"
	}
	fmt.Fprintf(e, "rollout: %d %s (%s):\n", nerr, plural(nerr, "error remains", "errors remain"), where)
	left := map[string]string{}
	for _, u := range out.Fixes.Left {
		left[u.Finding.Rule] = u.Reason
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
	SchemaVersion int              `json:"schema_version"`
	Tool          string           `json:"tool"`
	Version       string           `json:"version"`
	Command       string           `json:"command"`
	Path          string           `json:"path"`
	Output        string           `json:"output"`
	Written       bool             `json:"written"`
	Backup        string           `json:"backup,omitempty"`
	Quarantine    string           `json:"quarantine,omitempty"`
	Changes       []changeJSON     `json:"changes"`
	Quarantined   []quarantineJSON `json:"quarantined"`
	NotFixed      []notFixedJSON   `json:"not_fixed"`
	Remaining     remainingJSON    `json:"remaining"`
	Refused       string           `json:"refused,omitempty"`
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

func writeRepairReport(w io.Writer, out *repair.Outcome) error {
	rep := repairReportJSON{SchemaVersion: 1, Tool: "rollout", Version: version(), Command: "repair",
		Path: out.Path, Output: out.Target, Written: out.Wrote, Backup: out.Backup,
		Changes: []changeJSON{}, Quarantined: []quarantineJSON{}, NotFixed: []notFixedJSON{}}
	if len(out.Quarantined) > 0 {
		rep.Quarantine = out.Quarantine
	}
	if out.Refusal != nil {
		rep.Refused = out.Refusal.Error()
	}
	for _, c := range out.Changes {
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
		rep.NotFixed = append(rep.NotFixed, notFixedJSON{u.Finding.Rule, u.Finding.Line, u.Reason})
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
func (p *repairPrinter) printDiff(t *repair.Txn) error {
	w := p.a.io.Out
	switch p.o.diff {
	case "short":
		d := &wordDiff{w: w, color: p.a.io.useColor(p.o.color, p.a.io.OutIsTTY)}
		if err := t.DiffLines(d.line); err != nil {
			return err
		}
		return d.close()
	case "full":
		if p.a.io.OutIsTTY {
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
