package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/rollout-dev/rollout/internal/derive/stateview"
	"github.com/rollout-dev/rollout/internal/output/schema"
	"github.com/rollout-dev/rollout/internal/output/termsafe"
)

// DiffSide is one of the states `rollout diff` compares.
type DiffSide struct {
	Path    string `json:"path"`
	AtLine  *int   `json:"at_line"` // null: to the end
	Records int    `json:"records"`
}

// Diff is the output of `rollout diff`.
type Diff struct {
	schema.Header
	A     DiffSide `json:"a"`
	B     DiffSide `json:"b"`
	Equal bool     `json:"equal"`
	// HistoryCommon is how many history items, from the first, are the
	// same in both: where they diverge.
	HistoryCommon int                `json:"history_common_prefix"`
	Changes       []stateview.Change `json:"changes"` // [] when equal
	// The lengths of both histories, for the text.
	historyA, historyB int
}

// NewDiff compares the views of two sides.
func NewDiff(a, b DiffSide, va, vb stateview.View) *Diff {
	d := &Diff{Header: schema.NewHeader(schema.Diff), A: a, B: b, Changes: stateview.Compare(va, vb),
		HistoryCommon: stateview.CommonPrefix(va, vb), historyA: len(va.History), historyB: len(vb.History)}
	d.Equal = len(d.Changes) == 0
	return d
}

// WriteDiffJSON writes the output of `rollout diff --format json`.
func WriteDiffJSON(w io.Writer, d *Diff) error { return writeTerminalJSON(w, d) }

// WriteDiffText writes the output of `rollout diff`: both sides, where
// the histories diverge, then each change (- only in A, + only in B,
// ~ changed) with the lines it is on.
func WriteDiffText(w io.Writer, d *Diff) error {
	bw := &ErrWriter{W: w}
	pr := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	side := func(mark string, s DiffSide) {
		at := ""
		if s.AtLine != nil {
			at = fmt.Sprintf(", up to line %d", *s.AtLine)
		}
		pr("%s %s (%d lines read%s)\n", mark, termsafe.String(s.Path), s.Records, at)
	}
	na, nb := d.historyA, d.historyB
	side("---", d.A)
	side("+++", d.B)
	if d.Equal {
		pr("same state: %s\n", Count(na, "history item"))
		return bw.Err
	}
	switch {
	case na == nb && d.HistoryCommon == na:
		pr("history: the same %s\n", Count(na, "item"))
	case d.HistoryCommon == 0:
		pr("history: %s in A, %d in B; they differ from the first item\n", Count(na, "item"), nb)
	default:
		pr("history: %s in A, %d in B; %d in common from the start", Count(na, "item"), nb, d.HistoryCommon)
		if d.HistoryCommon < na && d.HistoryCommon < nb {
			pr(", then they diverge at history[%d]", d.HistoryCommon)
		}
		pr("\n")
	}
	for _, c := range d.Changes {
		pr("%s\n", changeLine(c))
	}
	pr("%s\n", Count(len(d.Changes), "difference"))
	return bw.Err
}

// changeLine is one state change as a line of text: its mark, path,
// lines and value(s).
func changeLine(c stateview.Change) string {
	where := ""
	switch {
	case c.LineA > 0 && c.LineB > 0 && c.LineA != c.LineB:
		where = fmt.Sprintf(" (line %d -> %d)", c.LineA, c.LineB)
	case c.LineA > 0:
		where = fmt.Sprintf(" (line %d)", c.LineA)
	case c.LineB > 0:
		where = fmt.Sprintf(" (line %d)", c.LineB)
	}
	switch c.Change {
	case stateview.Changed:
		if c.A == nil && c.B == nil {
			return fmt.Sprintf("~ %s%s", c.Path, where)
		}
		return fmt.Sprintf("~ %s%s: %s -> %s", c.Path, where, showValue(c.A), showValue(c.B))
	case stateview.Removed:
		return fmt.Sprintf("- %s%s: %s", c.Path, where, showValue(c.A))
	default:
		return fmt.Sprintf("+ %s%s: %s", c.Path, where, showValue(c.B))
	}
}

// showValue is a value as compact JSON, escaped for the terminal and cut
// to a readable length.
func showValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return termsafe.String(fmt.Sprint(v))
	}
	s := termsafe.String(strings.TrimSuffix(b.String(), "\n"))
	const limit = 200
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + fmt.Sprintf("… (%d bytes)", len(s))
	}
	return s
}

func utf8RuneStart(b byte) bool { return b&0xc0 != 0x80 }

// Count is n and what, plural unless n is 1: "3 files".
func Count(n int, what string) string {
	if n != 1 {
		what += "s"
	}
	return fmt.Sprintf("%d %s", n, what)
}
