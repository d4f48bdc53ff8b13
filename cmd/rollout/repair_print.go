package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/rollout"
)

// What repair says: the plan (one line per fix), the outcome, what remains,
// and the JSON report.

// changeRec is a change kept for the plan and the report. Values longer
// than keepBytes are kept truncated (a quarantined line can be megabytes;
// the quarantine file has it whole).
type changeRec struct {
	rule          string
	line, outLine int
	offset        int64
	part          int
	action, path  string
	before, after []byte
	hadBefore     bool
	beforeLen     int
	afterLen      int
}

const keepBytes = 512

type quarantineRec struct {
	line   int
	offset int64
	reason string
	bytes  int
}

func clip(b []byte) []byte {
	if len(b) > keepBytes {
		b = b[:keepBytes]
	}
	return bytes.Clone(b)
}

func (r *repairRun) onChange(c rollout.Change) {
	r.changes = append(r.changes, changeRec{rule: c.Label, line: c.Line, outLine: c.OutLine, offset: c.Offset, part: c.Part,
		action: c.Action, path: c.Path, before: clip(c.Before), after: clip(c.After), hadBefore: c.Before != nil,
		beforeLen: len(c.Before), afterLen: len(c.After)})
}

// short renders a value for the one-line plan.
func short(b []byte, n int, had bool) string {
	if len(b) == 0 {
		return "(none)"
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
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

func (r *repairRun) planLines() []planLine {
	var out []planLine
	cs := r.changes
	for i := 0; i < len(cs); i++ {
		c := cs[i]
		if j := ordinalRun(cs, i); j > i+1 {
			first, last := cs[i], cs[j-1]
			what := fmt.Sprintf("ordinal: %s..%s -> %s..%s (%d lines)", short(first.before, first.beforeLen, first.hadBefore),
				short(last.before, last.beforeLen, last.hadBefore), first.after, last.after, j-i)
			if !first.hadBefore {
				what = fmt.Sprintf("ordinal: (none) -> %s..%s (%d lines)", first.after, last.after, j-i)
			}
			out = append(out, planLine{c.rule, fmt.Sprintf("lines %d-%d", first.line, last.line), what})
			i = j - 1
			continue
		}
		where := fmt.Sprintf("line %d", c.line)
		var what string
		switch c.action {
		case rollout.ActionSet:
			what = fmt.Sprintf("%s: %s -> %s", c.path, short(c.before, c.beforeLen, c.hadBefore), short(c.after, c.afterLen, true))
			if c.afterLen == 0 && c.hadBefore {
				what = fmt.Sprintf("%s: %s -> (removed)", c.path, short(c.before, c.beforeLen, true))
			}
		case rollout.ActionEdit:
			switch {
			case c.beforeLen == 0:
				what = fmt.Sprintf("%s: inserted %s", c.path, short(c.after, c.afterLen, true))
			case c.afterLen == 0:
				what = fmt.Sprintf("%s: removed %s", c.path, short(c.before, c.beforeLen, true))
			default:
				what = fmt.Sprintf("%s: %s -> %s", c.path, short(c.before, c.beforeLen, true), short(c.after, c.afterLen, true))
			}
		case rollout.ActionQuarantine:
			what = fmt.Sprintf("to quarantine, %d bytes: %s", c.beforeLen, short(c.before, c.beforeLen, true))
		case rollout.ActionSplit:
			what = "split into " + string(c.after)
		case rollout.ActionMove:
			what = fmt.Sprintf("moved to line %d", c.outLine)
		case rollout.ActionInsert:
			what = fmt.Sprintf("new line %d: %s", c.outLine, short(c.after, c.afterLen, true))
		case rollout.ActionLF:
			what = `line end \r\n -> \n`
		}
		out = append(out, planLine{c.rule, where, what})
	}
	return out
}

// ordinalRun returns the end of the run of ordinal changes starting at i.
func ordinalRun(cs []changeRec, i int) int {
	isOrd := func(c changeRec) bool { return c.action == rollout.ActionSet && c.path == "ordinal" }
	if !isOrd(cs[i]) {
		return i
	}
	delta := func(c changeRec) (int64, bool) {
		if !c.hadBefore {
			return 0, true
		}
		b, err1 := strconv.ParseInt(string(c.before), 10, 64)
		a, err2 := strconv.ParseInt(string(c.after), 10, 64)
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
		if !isOrd(c) || !ok || d != d0 || c.rule != p.rule || c.hadBefore != p.hadBefore || c.outLine != p.outLine+1 {
			break
		}
	}
	return j
}

func (r *repairRun) printPlan() {
	w := r.a.io.Out
	lines := r.planLines()
	mode := "planned (dry run: nothing is written)"
	if r.o.write {
		mode = "planned"
	}
	fmt.Fprintf(w, "%s: %d %s %s\n", r.o.path, len(lines), plural(len(lines), "fix", "fixes"), mode)
	wr, ww := 0, 0
	for _, l := range lines {
		wr = max(wr, len(l.rule))
		ww = max(ww, len(l.where))
	}
	for _, l := range lines {
		fmt.Fprintf(w, "  %-*s  %-*s  %s\n", ww, l.where, wr, l.rule, l.what)
	}
	for _, s := range r.skips {
		fmt.Fprintf(w, "  line %d  %s  not fixed: %s\n", s.Line, s.Label, s.Reason)
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
func (r *repairRun) printOutcome(remaining []checks.Finding) {
	w, e := r.a.io.Out, r.a.io.Err
	o := r.o
	switch {
	case r.wrote && !r.fp.Plan.Empty():
		fmt.Fprintf(w, "wrote %s (%d lines, %d changed", r.target, r.stats.LinesOut, len(r.changes))
		if r.backup != "" {
			fmt.Fprintf(w, "; the original is kept as %s", r.backup)
		}
		fmt.Fprintln(w, ")")
	case r.wrote:
		fmt.Fprintf(w, "wrote %s (unchanged copy)\n", r.target)
	}
	if n := len(r.quarantine); n > 0 {
		verb := "would go"
		if r.wrote {
			verb = "went"
		}
		fmt.Fprintf(w, "%d %s %s to %s\n", n, plural(n, "line", "lines"), verb, r.qpath)
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
	if r.fp.Plan.Empty() {
		after = "as it is"
	} else if !r.wrote {
		after = "after this repair"
	}
	fmt.Fprintf(w, "%s: %d %s, %d %s, %d %s\n", after, nerr, plural(nerr, "error", "errors"), nwarn,
		plural(nwarn, "warning", "warnings"), ninfo, plural(ninfo, "info", "infos"))
	if nerr > 0 {
		r.printRemaining(remaining, nerr)
	}
	if !o.write && !r.fp.Plan.Empty() && r.refusal == nil {
		fmt.Fprintf(e, "rollout: hint: add --write to apply the plan (the original is kept as %s.bak), or --write -o OUT to write elsewhere\n", o.path)
	}
	var optIn []string
	seen := map[string]bool{}
	for _, u := range r.fp.Left {
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
func (r *repairRun) printRemaining(remaining []checks.Finding, nerr int) {
	e := r.a.io.Err
	where := "lines of the repaired file"
	if r.fp.Plan.Empty() {
		where = "lines of the file"
	}
	fmt.Fprintf(e, "rollout: %d %s (%s):\n", nerr, plural(nerr, "error remains", "errors remain"), where)
	left := map[string]string{}
	for _, u := range r.fp.Left {
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
		fmt.Fprintf(e, "  %d  %s  %s (%s)\n", f.Line, f.Rule, f.Message, note)
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
	if n == len(b) && len(b) > 0 && b[0] != '{' && b[0] != '[' && json.Valid(b) {
		return json.RawMessage(b)
	}
	s, _ := json.Marshal(strings.ToValidUTF8(string(b), "\uFFFD"))
	return s
}

func (r *repairRun) writeReport(w io.Writer) error {
	rep := repairReportJSON{SchemaVersion: 1, Tool: "rollout", Version: version(), Command: "repair",
		Path: r.o.path, Output: r.target, Written: r.wrote, Backup: r.backup,
		Changes: []changeJSON{}, Quarantined: []quarantineJSON{}, NotFixed: []notFixedJSON{}}
	if len(r.quarantine) > 0 {
		rep.Quarantine = r.qpath
	}
	if r.refusal != nil {
		rep.Refused = r.refusal.Error()
	}
	for _, c := range r.changes {
		cj := changeJSON{Rule: c.rule, Line: c.line, ByteOffset: c.offset, Object: c.part, Action: c.action, Path: c.path, OutputLine: c.outLine}
		switch c.action {
		case rollout.ActionSet, rollout.ActionInsert, rollout.ActionEdit:
			cj.Before = jsonValue(c.before, c.beforeLen, c.hadBefore)
			cj.After = jsonValue(c.after, c.afterLen, true)
		case rollout.ActionSplit, rollout.ActionLF:
			cj.Before = jsonValue(c.before, c.beforeLen, c.hadBefore)
			cj.After = jsonValue(c.after, c.afterLen, true)
		}
		rep.Changes = append(rep.Changes, cj)
	}
	for _, q := range r.quarantine {
		rep.Quarantined = append(rep.Quarantined, quarantineJSON{q.line, q.offset, q.reason, q.bytes})
	}
	for _, u := range r.fp.Left {
		rep.NotFixed = append(rep.NotFixed, notFixedJSON{u.Finding.Rule, u.Finding.Line, u.Reason})
	}
	for _, s := range r.skips {
		rep.NotFixed = append(rep.NotFixed, notFixedJSON{s.Label, s.Line, s.Reason})
	}
	rep.Remaining.Findings = []findingJSON{}
	for _, f := range r.remaining() {
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
