package report

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/rollout-dev/rollout/internal/output/termsafe"
	"github.com/rollout-dev/rollout/rollout"
)

// The readable repair diff (`repair --diff`): one entry per changed line
// holding only the changed regions, token by token, with a little context
// and "…" for the rest, escaped for the terminal and bounded in size, so a
// fixed id on a 4 MB line prints one short line. `--diff=full` is the
// unified diff of whole lines that patch applies.

const (
	wordDiffContext  = 40   // bytes of unchanged text shown around a change
	wordDiffMaxPart  = 160  // bytes of one removed or added run shown
	wordDiffMaxLine  = 1000 // bytes of one rendered line, then "…"
	wordDiffMaxMid   = 8192 // a changed middle longer than this is not split into tokens
	wordDiffMaxToken = 600  // nor one of more tokens than this
)

// wordDiff renders the line stream of a repair.
type wordDiff struct {
	w     io.Writer
	color bool
	del   []rollout.DiffLine // the pending run of removed lines
	add   []rollout.DiffLine // and of added lines after it
	err   error
}

func (d *wordDiff) line(l rollout.DiffLine) error {
	switch l.Op {
	case '-':
		if len(d.add) > 0 {
			d.flush()
		}
		l.Text = bytes.Clone(l.Text)
		d.del = append(d.del, l)
	case '+':
		l.Text = bytes.Clone(l.Text)
		d.add = append(d.add, l)
	default:
		d.flush()
	}
	return d.err
}

// flush renders a run of removed lines and the added lines after it:
// pairwise as changed lines when the counts match, else as removed and
// added lines.
func (d *wordDiff) flush() {
	if len(d.del) == len(d.add) {
		for i := range d.del {
			d.changed(d.del[i], d.add[i])
		}
	} else {
		for _, l := range d.del {
			d.whole('-', l.Old, l.Text)
		}
		for _, l := range d.add {
			d.whole('+', l.New, l.Text)
		}
	}
	d.del, d.add = d.del[:0], d.add[:0]
}

func (d *wordDiff) close() error {
	d.flush()
	return d.err
}

func (d *wordDiff) printf(format string, args ...any) {
	if d.err == nil {
		_, d.err = fmt.Fprintf(d.w, format, args...)
	}
}

// whole prints a line removed or added as a whole, cut to the bound.
func (d *wordDiff) whole(op byte, n int, text []byte) {
	side := "removed"
	if op == '+' {
		side = "added"
	}
	body := strings.TrimRight(string(text), "\r\n")
	if text == nil {
		body = "[a line longer than --max-line-bytes]"
	}
	shown := cut(body, wordDiffMaxLine)
	d.printf("%c line %d (%s, %d bytes): %s\n", op, n, side, len(body), d.paint(op, termsafe.String(shown))+ellipsis(len(shown) < len(body)))
}

// changed prints one line as changed: the regions that differ, with context.
func (d *wordDiff) changed(old, new rollout.DiffLine) {
	a := strings.TrimRight(string(old.Text), "\r\n")
	b := strings.TrimRight(string(new.Text), "\r\n")
	where := fmt.Sprintf("line %d", old.Old)
	if new.New != old.Old {
		where = fmt.Sprintf("line %d -> %d", old.Old, new.New)
	}
	if a == b { // only the line ending changed
		d.printf("~ %s: line ending %s -> %s\n", where, eolName(old.Text), eolName(new.Text))
		return
	}
	d.printf("~ %s: %s\n", where, d.render(a, b))
}

func eolName(b []byte) string {
	switch {
	case bytes.HasSuffix(b, []byte("\r\n")):
		return "CRLF"
	case bytes.HasSuffix(b, []byte("\n")):
		return "LF"
	}
	return "none"
}

// span is a piece of the rendering: text kept (op 0), removed or added.
type span struct {
	op   byte
	text string
}

// render diffs a against b: the common prefix and suffix by bytes, then
// the middle token by token (when it is small enough), and prints the
// changes with wordDiffContext bytes of context each side.
func (d *wordDiff) render(a, b string) string {
	p := commonPrefixLen(a, b)
	// A change inside a word (an id's prefix) shows the whole word.
	for p > 0 && isWordByte(a[p-1]) && (p < len(a) && isWordByte(a[p]) || p < len(b) && isWordByte(b[p])) {
		p--
	}
	s := commonSuffixLen(a[p:], b[p:])
	for s > 0 && isWordByte(a[len(a)-s]) && (len(a)-s > p && isWordByte(a[len(a)-s-1]) || len(b)-s > p && isWordByte(b[len(b)-s-1])) {
		s--
	}
	ma, mb := a[p:len(a)-s], b[p:len(b)-s]
	// A pure insertion or deletion can sit anywhere among equal bytes:
	// slide it left until it starts a JSON string ("id":"x", not id":"x",").
	if run := ma + mb; (ma == "" || mb == "") && run != "" {
		for p > 0 && a[p-1] == run[len(run)-1] && run[0] != '"' {
			run = a[p-1:p] + run[:len(run)-1]
			p--
			s++
		}
		if ma != "" {
			ma = run
		} else {
			mb = run
		}
	}
	spans := []span{{0, a[:p]}}
	spans = append(spans, tokenDiff(ma, mb)...)
	spans = append(spans, span{0, a[len(a)-s:]})

	var out strings.Builder
	for i, sp := range spans {
		if out.Len() > wordDiffMaxLine {
			out.WriteString("…")
			break
		}
		switch {
		case sp.op != 0:
			shown := cut(sp.text, wordDiffMaxPart)
			out.WriteString(d.mark(sp.op, termsafe.String(shown)+ellipsis(len(shown) < len(sp.text))))
		case i == 0:
			out.WriteString(ellipsis(len(sp.text) > wordDiffContext) + termsafe.String(tail(sp.text, wordDiffContext)))
		case i == len(spans)-1:
			out.WriteString(termsafe.String(cut(sp.text, wordDiffContext)) + ellipsis(len(sp.text) > wordDiffContext))
		case len(sp.text) > 2*wordDiffContext:
			out.WriteString(termsafe.String(cut(sp.text, wordDiffContext)) + "…" + termsafe.String(tail(sp.text, wordDiffContext)))
		default:
			out.WriteString(termsafe.String(sp.text))
		}
	}
	return out.String()
}

// mark shows a removed or added run: in colour on a terminal, else
// between [- -] and {+ +} as git's word diff does.
func (d *wordDiff) mark(op byte, s string) string {
	if d.color {
		return d.paint(op, s)
	}
	if op == '-' {
		return "[-" + s + "-]"
	}
	return "{+" + s + "+}"
}

func (d *wordDiff) paint(op byte, s string) string {
	if !d.color {
		return s
	}
	if op == '-' {
		return "\x1b[31m" + s + "\x1b[0m"
	}
	return "\x1b[32m" + s + "\x1b[0m"
}

func ellipsis(cond bool) string {
	if cond {
		return "…"
	}
	return ""
}

// cut returns at most n bytes of the start of s, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// tail returns at most n bytes of the end of s, on a rune boundary.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

func commonPrefixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[n]) { // never split a rune
		n--
	}
	return n
}

func commonSuffixLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[len(a)-1-n] == b[len(b)-1-n] {
		n++
	}
	for n > 0 && n < len(a) && !utf8.RuneStart(a[len(a)-n]) {
		n--
	}
	return n
}

// tokenDiff diffs two short texts token by token (longest common
// subsequence); texts too long for that are one removed and one added run.
func tokenDiff(a, b string) []span {
	if a == "" && b == "" {
		return nil
	}
	ta, tb := tokenize(a), tokenize(b)
	if len(a) > wordDiffMaxMid || len(b) > wordDiffMaxMid || len(ta) > wordDiffMaxToken || len(tb) > wordDiffMaxToken {
		return appendSpan(appendSpan(nil, '-', a), '+', b)
	}
	// lcs[i][j]: the longest common subsequence of ta[i:] and tb[j:].
	lcs := make([][]int, len(ta)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(tb)+1)
	}
	for i := len(ta) - 1; i >= 0; i-- {
		for j := len(tb) - 1; j >= 0; j-- {
			if ta[i] == tb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []span
	i, j := 0, 0
	for i < len(ta) || j < len(tb) {
		switch {
		case i < len(ta) && j < len(tb) && ta[i] == tb[j]:
			out = appendSpan(out, 0, ta[i])
			i, j = i+1, j+1
		case i < len(ta) && (j == len(tb) || lcs[i+1][j] >= lcs[i][j+1]):
			out = appendSpan(out, '-', ta[i])
			i++
		default:
			out = appendSpan(out, '+', tb[j])
			j++
		}
	}
	return out
}

// appendSpan adds text to the last span when it has the same op.
func appendSpan(out []span, op byte, text string) []span {
	if text == "" {
		return out
	}
	if n := len(out); n > 0 && out[n-1].op == op {
		out[n-1].text += text
		return out
	}
	return append(out, span{op, text})
}

// tokenize splits JSON text into tokens: runs of letters, digits, "_", "-"
// and "." (an id, a number, a date), and every other rune alone.
func tokenize(s string) []string {
	var out []string
	start := -1
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		word := r == '_' || r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= 0x80 && r != utf8.RuneError
		switch {
		case word && start < 0:
			start = i
		case !word:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+size])
		}
		i += size
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// isWordByte: a byte of a token tokenize keeps whole (ASCII part; bytes of
// multi-byte runes count as word bytes too).
func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
