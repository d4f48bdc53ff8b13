package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/rollout-dev/rollout/checks"
	"github.com/rollout-dev/rollout/internal/termsafe"
	"github.com/rollout-dev/rollout/reconstruct"
	"github.com/rollout-dev/rollout/report"
	"github.com/rollout-dev/rollout/rollout"
	"github.com/rollout-dev/rollout/schema"
	"github.com/spf13/cobra"
)

type diffOptions struct {
	paths        []string // two files, or one with two atLines
	atLines      []int
	threads      []string
	format       string
	output       string
	maxLineBytes int64
	force        bool
}

func newDiffCmd(a *app, runF func(context.Context, *diffOptions) error) *cobra.Command {
	opts := &diffOptions{}
	cmd := &cobra.Command{
		Use:   "diff A B | diff --at-line N --at-line M FILE",
		Short: "Compare the reconstructed states of two rollouts, or of one at two lines",
		Long: `diff replays two rollouts as resume does (or one rollout up to two lines) and
compares what the model would see: thread id, era, history mode, turns, the live
history (item ids, types, call ids, lines), the world-state baseline, the
context-window lineage, token usage and handoffs. It prints each difference as
a path into the state with both values (- only in A, + only in B, ~ changed)
and, when the histories differ, the first item where they diverge.

After a repair (rollout diff FILE.bak FILE) it shows exactly the ids and lines
that changed; between a fork and its parent, where they diverge.

Exit codes: 0 when the states are the same, 1 when they differ, 2 for usage
errors and files that cannot be read.`,
		Example: `  rollout diff rollout.jsonl.bak rollout.jsonl
  rollout diff --at-line 100 --at-line 200 rollout.jsonl
  rollout diff --format json --thread 019cd719 --thread 019cd800`,
		RunE: func(cmd *cobra.Command, args []string) error {
			threads, err := resolveThreads(opts.threads)
			if err != nil {
				return err
			}
			opts.paths = append(threads, args...)
			if err := opts.validate(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDiff(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.IntSliceVar(&opts.atLines, "at-line", nil, "stop the replay after line N: twice with one FILE, once or twice with two")
	f.StringArrayVar(&opts.threads, "thread", nil, threadUsage("compare", true))
	f.StringVar(&opts.format, "format", "text", "output: text|json")
	addOutput(f, &opts.output, "the comparison")
	f.Int64Var(&opts.maxLineBytes, "max-line-bytes", rollout.DefaultMaxLineBytes, "longest line to analyse")
	f.BoolVar(&opts.force, "force", false, "read files whose first line is not a JSON object (a damaged first line)")
	return cmd
}

func (o *diffOptions) validate(cmd *cobra.Command) error {
	const want = "two FILEs, or one FILE with --at-line N --at-line M"
	switch {
	case len(o.paths) == 1 && len(o.atLines) == 2:
		o.paths = append(o.paths, o.paths[0])
	case len(o.paths) == 2 && len(o.atLines) <= 2:
		if len(o.atLines) == 1 {
			o.atLines = append(o.atLines, o.atLines[0])
		}
	case len(o.paths) == 1:
		return usageError("usage: "+cmd.UseLine(), "rollout diff of one FILE needs --at-line twice; got it %d times", len(o.atLines))
	default:
		return argCountError(cmd, o.paths, want)
	}
	for _, n := range o.atLines {
		if n < 1 {
			return usageError("", "invalid --at-line %d", n)
		}
	}
	if len(o.atLines) == 0 {
		o.atLines = []int{0, 0}
	}
	if o.format != "text" && o.format != "json" {
		return usageError("use --format text|json", "invalid --format %q", o.format)
	}
	for _, p := range o.paths {
		if p == rollout.StdinPath {
			return usageError("save it to a file first", "diff reads files: standard input cannot be read twice")
		}
	}
	return nil
}

// stateView is what diff compares: the state of `rollout state` without
// what always differs between two files (path, number of lines), with the
// JSON values decoded so that key order does not count.
type stateView struct {
	ThreadID    string        `json:"thread_id"`
	Era         string        `json:"era"`
	HistoryMode string        `json:"history_mode"`
	CLIVersion  string        `json:"cli_version"`
	Turns       []turnJSON    `json:"turns"`
	History     []itemJSON    `json:"history"`
	WorldState  any           `json:"world_state"`
	Lineage     lineageJSON   `json:"lineage"`
	Tokens      *tokensJSON   `json:"token_usage"`
	Handoffs    []handoffView `json:"handoffs"`
}

type handoffView struct {
	ID     string `json:"id"`
	Line   int    `json:"line"`
	Record any    `json:"record"`
}

// diffSide describes one of the compared states.
type diffSide struct {
	Path    string `json:"path"`
	AtLine  *int   `json:"at_line"`
	Records int    `json:"records"`
}

// stateChange is one difference: a path into the state and both values
// (A absent: only in B; B absent: only in A).
type stateChange struct {
	Path   string `json:"path"`
	Change string `json:"change"` // changed | removed | added
	A      any    `json:"a"`      // null when added
	B      any    `json:"b"`      // null when removed
	// LineA and LineB are the lines of the turn, item or handoff the
	// change is in (0: not in one, or absent on that side).
	LineA int `json:"line_a,omitempty"`
	LineB int `json:"line_b,omitempty"`
}

// diffJSON is the designed output of `rollout diff --format json`.
type diffJSON struct {
	SchemaVersion int      `json:"schema_version"`
	A             diffSide `json:"a"`
	B             diffSide `json:"b"`
	Equal         bool     `json:"equal"`
	// HistoryCommon is how many history items, from the first, are the
	// same in both (id, type, call id and line): where they diverge.
	HistoryCommon int           `json:"history_common_prefix"`
	Changes       []stateChange `json:"changes"`
}

func runDiff(ctx context.Context, a *app, o *diffOptions) error {
	if err := checkOutputsOf(o.paths, o.output); err != nil {
		return err
	}
	var views [2]stateView
	var sides [2]diffSide
	for i := range 2 {
		ro := checks.Options{MaxLineBytes: o.maxLineBytes, Force: o.force}.Replay()
		ro.StopAfterLine = o.atLines[i]
		st, err := reconstruct.ReplayFile(o.paths[i], nil, ro)
		if err != nil {
			return err
		}
		views[i] = viewOf(buildStateJSON(o.paths[i], st))
		sides[i] = diffSide{Path: o.paths[i], Records: st.Records}
		if n := o.atLines[i]; n > 0 {
			sides[i].AtLine = &n
		}
	}
	out := diffJSON{SchemaVersion: schema.Version(schema.Diff), A: sides[0], B: sides[1],
		Changes: compareStates(views[0], views[1]), HistoryCommon: commonPrefix(views[0].History, views[1].History)}
	out.Equal = len(out.Changes) == 0
	err := writeOutput(a, o.output, "the comparison", func(w io.Writer) error {
		if o.format == "json" {
			return writeJSON(w, out)
		}
		return printDiff(w, &out, len(views[0].History), len(views[1].History))
	})
	if err != nil {
		return err
	}
	if !out.Equal {
		return silentExit(exitFindings)
	}
	return nil
}

func viewOf(s stateJSON) stateView {
	v := stateView{ThreadID: s.ThreadID, Era: s.Era, HistoryMode: s.HistoryMode, CLIVersion: s.CLIVersion,
		Turns: s.Turns, History: s.History, WorldState: decodeJSON(s.WorldState), Lineage: s.Lineage, Tokens: s.Tokens,
		Handoffs: []handoffView{}}
	for _, h := range s.Handoffs {
		v.Handoffs = append(v.Handoffs, handoffView{h.ID, h.Line, decodeJSON(h.Record)})
	}
	return v
}

// decodeJSON decodes a JSON value keeping numbers as written.
func decodeJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return v
}

func commonPrefix(a, b []itemJSON) int {
	n := 0
	for n < len(a) && n < len(b) && cmp.Equal(a[n], b[n]) {
		n++
	}
	return n
}

// compareStates runs go-cmp over the two views and collects each leaf
// difference with its path.
func compareStates(a, b stateView) []stateChange {
	r := &changeReporter{}
	cmp.Equal(a, b, cmp.Reporter(r))
	return r.changes
}

type changeReporter struct {
	path    cmp.Path
	changes []stateChange
}

func (r *changeReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }
func (r *changeReporter) PopStep()                 { r.path = r.path[:len(r.path)-1] }

func (r *changeReporter) Report(rs cmp.Result) {
	if rs.Equal() {
		return
	}
	vx, vy := r.path.Last().Values()
	c := stateChange{Path: pathString(r.path), Change: "changed"}
	switch {
	case !vx.IsValid():
		c.Change, c.B = "added", vy.Interface()
	case !vy.IsValid():
		c.Change, c.A = "removed", vx.Interface()
	default:
		c.A, c.B = vx.Interface(), vy.Interface()
	}
	c.LineA, c.LineB = elementLines(r.path)
	r.changes = append(r.changes, c)
}

// elementLines are the lines of the list element (turn, item, handoff) a
// path goes through, on each side.
func elementLines(p cmp.Path) (a, b int) {
	for _, step := range p {
		if _, ok := step.(cmp.SliceIndex); !ok {
			continue
		}
		vx, vy := step.Values()
		return lineOf(vx), lineOf(vy)
	}
	return 0, 0
}

func lineOf(v reflect.Value) int {
	if !v.IsValid() || v.Kind() != reflect.Struct {
		return 0
	}
	if f := v.FieldByName("Line"); f.IsValid() && f.Kind() == reflect.Int {
		return int(f.Int())
	}
	return 0
}

// pathString spells a go-cmp path with the JSON names of `rollout state`:
// history[5].id, world_state.files["a.go"], token_usage.total_tokens.
func pathString(p cmp.Path) string {
	var b strings.Builder
	var parent reflect.Type
	for _, step := range p {
		switch s := step.(type) {
		case cmp.StructField:
			name := s.Name()
			if parent != nil {
				if f, ok := parent.FieldByName(name); ok {
					if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag != "" {
						name = tag
					}
				}
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(name)
		case cmp.SliceIndex:
			kx, ky := s.SplitKeys()
			switch {
			case kx == ky:
				fmt.Fprintf(&b, "[%d]", kx)
			case kx < 0:
				fmt.Fprintf(&b, "[%d]", ky)
			case ky < 0:
				fmt.Fprintf(&b, "[%d]", kx)
			default:
				fmt.Fprintf(&b, "[%d->%d]", kx, ky)
			}
		case cmp.MapIndex:
			key := fmt.Sprint(s.Key().Interface())
			if isIdent(key) {
				b.WriteString("." + key)
			} else {
				b.WriteString("[" + strconv.Quote(key) + "]")
			}
		}
		t := step.Type()
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		parent = nil
		if t != nil && t.Kind() == reflect.Struct {
			parent = t
		}
	}
	return b.String()
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func printDiff(w io.Writer, d *diffJSON, na, nb int) error {
	bw := &report.ErrWriter{W: w}
	pr := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	side := func(mark string, s diffSide) {
		at := ""
		if s.AtLine != nil {
			at = fmt.Sprintf(", up to line %d", *s.AtLine)
		}
		pr("%s %s (%d lines read%s)\n", mark, termsafe.String(s.Path), s.Records, at)
	}
	side("---", d.A)
	side("+++", d.B)
	if d.Equal {
		pr("same state: %s\n", count(na, "history item"))
		return bw.Err
	}
	switch {
	case na == nb && d.HistoryCommon == na:
		pr("history: the same %s\n", count(na, "item"))
	case d.HistoryCommon == 0:
		pr("history: %s in A, %d in B; they differ from the first item\n", count(na, "item"), nb)
	default:
		pr("history: %s in A, %d in B; %d in common from the start", count(na, "item"), nb, d.HistoryCommon)
		if d.HistoryCommon < na && d.HistoryCommon < nb {
			pr(", then they diverge at history[%d]", d.HistoryCommon)
		}
		pr("\n")
	}
	marks := map[string]string{"changed": "~", "removed": "-", "added": "+"}
	for _, c := range d.Changes {
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
		case "changed":
			pr("%s %s%s: %s -> %s\n", marks[c.Change], c.Path, where, showValue(c.A), showValue(c.B))
		case "removed":
			pr("%s %s%s: %s\n", marks[c.Change], c.Path, where, showValue(c.A))
		default:
			pr("%s %s%s: %s\n", marks[c.Change], c.Path, where, showValue(c.B))
		}
	}
	pr("%s\n", count(len(d.Changes), "difference"))
	return bw.Err
}

// showValue is a value as compact JSON, escaped for the terminal and cut
// to a readable length.
func showValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
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

func count(n int, what string) string {
	if n != 1 {
		what += "s"
	}
	return fmt.Sprintf("%d %s", n, what)
}

// writeJSON writes v as indented JSON that is safe on a terminal (the
// strings it holds come from a rollout; see termsafe.JSON).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encoding JSON: %w", err)
	}
	_, err := w.Write(termsafe.JSON(b.Bytes()))
	return err
}
