// Package drift holds a Codex release to what rollout knows: it lists what
// the release can write (record, item and event types, the field paths of
// each record, the SQLite tables and columns of its home) and reports each
// name the vocabulary (rollout/vocabulary.go, internal/codex/home's
// SchemaVocabulary) does not list. `make drift VERSION=0.172.0` runs it
// (cmd/), and fails on anything new: that is the work a release brings
// before it joins the checked range (reconstruct.CheckedNewest).
//
// Two sources, each finding says which: "live", what the release wrote in
// a run against the conformance mock (exact, but only what the scenarios
// exercise), and "strings", what its binary holds (the serde tags of
// RolloutItem, the SQL of its migrations: what the run did not exercise).
// It sits in internal/testkit: a tool of the repository, not of the CLI.
package drift

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/rollout-dev/rollout/internal/codex/home"
	"github.com/rollout-dev/rollout/rollout"
)

// The kinds of names a release writes.
const (
	KindRecord = "record type"
	KindItem   = "item type"
	KindEvent  = "event type"
	KindField  = "field"
	KindColumn = "sqlite column"
)

// The sources of a name.
const (
	SourceLive    = "live"
	SourceStrings = "strings"
)

// Observed is what one release can write: by kind, each name and where it
// was seen (source, and an example: the file or the text around it).
type Observed struct {
	Version string
	Names   map[string]map[string]Seen // kind -> name -> where
}

// Seen says where a name was seen.
type Seen struct {
	Source  string
	Example string
}

// NewObserved is an empty Observed of version.
func NewObserved(version string) *Observed {
	return &Observed{Version: version, Names: map[string]map[string]Seen{}}
}

// Add notes a name; the first source that saw it stays.
func (o *Observed) Add(kind, name string, s Seen) {
	m := o.Names[kind]
	if m == nil {
		m = map[string]Seen{}
		o.Names[kind] = m
	}
	if _, ok := m[name]; !ok {
		m[name] = s
	}
}

// maxLine bounds a rollout line the live source reads (a golden's lines
// are small; a longer one is an error).
const maxLine = 64 << 20

// AddRollout notes every record type, item and event type and field path
// of a rollout (example: its name).
func (o *Observed) AddRollout(r io.Reader, name string) error {
	rd := rollout.NewReader(r, maxLine)
	defer rd.Release()
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if rec.Raw == nil {
			return fmt.Errorf("%s:%d: line over %d bytes", name, rec.Line, maxLine)
		}
		if len(bytes.TrimSpace(rec.Raw)) == 0 {
			continue
		}
		if !gjson.ValidBytes(rec.Raw) {
			return fmt.Errorf("%s:%d: not JSON", name, rec.Line)
		}
		o.addRecord(gjson.ParseBytes(rec.Raw), fmt.Sprintf("%s:%d", name, rec.Line))
	}
}

// recordKind is the kind a record's field paths are qualified by: its
// type, and for response items and events their payload's type too.
func recordKind(rec gjson.Result) string {
	t := rec.Get("type").String()
	if t == rollout.TypeResponseItem || t == rollout.TypeEventMsg {
		return t + ":" + rec.Get("payload.type").String()
	}
	return t
}

func (o *Observed) addRecord(rec gjson.Result, where string) {
	seen := Seen{SourceLive, where}
	t := rec.Get("type").String()
	if !rec.Get("payload").Exists() {
		return // the bare era: not written by any release drift checks
	}
	o.Add(KindRecord, t, seen)
	switch t {
	case rollout.TypeResponseItem:
		o.Add(KindItem, rec.Get("payload.type").String(), seen)
	case rollout.TypeEventMsg:
		o.Add(KindEvent, rec.Get("payload.type").String(), seen)
	}
	kind := recordKind(rec)
	rec.ForEach(func(k, v gjson.Result) bool {
		if k.String() != "payload" {
			o.Add(KindField, "envelope."+k.String(), seen)
			walk(v, "envelope."+k.String(), func(path string) { o.Add(KindField, path, seen) })
		}
		return true
	})
	walk(rec.Get("payload"), kind, func(path string) { o.Add(KindField, path, seen) })
}

// walk calls fn with the path of every member below v, prefix first.
func walk(v gjson.Result, prefix string, fn func(string)) {
	switch {
	case v.IsObject():
		v.ForEach(func(k, m gjson.Result) bool {
			p := prefix + "." + k.String()
			if prefix == "" {
				p = k.String()
			}
			fn(p)
			walk(m, p, fn)
			return true
		})
	case v.IsArray():
		v.ForEach(func(_, m gjson.Result) bool {
			walk(m, prefix+"[]", fn)
			return true
		})
	}
}

// AddSchema notes the columns of a database's tables, as table.column.
func (o *Observed) AddSchema(tables map[string][]string, db string) {
	for t, cols := range tables {
		for _, c := range cols {
			o.Add(KindColumn, t+"."+c, Seen{SourceLive, db})
		}
	}
}

// Finding is one name of a release and what the vocabulary says of it.
type Finding struct {
	Kind, Name string
	Seen
	Known bool
	Term  rollout.Term // the vocabulary's entry, when known
}

// Vocabulary is what rollout knows, by kind.
type Vocabulary map[string][]rollout.Term

// Known is rollout's vocabulary.
func Known() Vocabulary {
	return Vocabulary{
		KindRecord: rollout.RecordVocabulary,
		KindItem:   rollout.ItemVocabulary,
		KindEvent:  rollout.EventVocabulary,
		KindField:  rollout.FieldVocabulary,
		KindColumn: home.SchemaVocabulary,
	}
}

// Check lists every name of o with what voc says of it, sorted by kind and
// name; new counts the names voc does not list.
func Check(o *Observed, voc Vocabulary) (fs []Finding, unknown int) {
	for kind, names := range o.Names {
		for name, s := range names {
			t, ok := rollout.Known(voc[kind], name)
			fs = append(fs, Finding{Kind: kind, Name: name, Seen: s, Known: ok, Term: t})
			if !ok {
				unknown++
			}
		}
	}
	order := map[string]int{KindRecord: 0, KindItem: 1, KindEvent: 2, KindField: 3, KindColumn: 4}
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Kind != fs[j].Kind {
			return order[fs[i].Kind] < order[fs[j].Kind]
		}
		return fs[i].Name < fs[j].Name
	})
	return fs, unknown
}

// Report writes the findings of one release: a count per kind, then each
// name the vocabulary does not list with its source; verbose lists the
// known ones too.
func Report(w io.Writer, version string, fs []Finding, verbose bool) error {
	var b strings.Builder
	counts := map[string][2]int{}
	var kinds []string
	for _, f := range fs {
		c, seen := counts[f.Kind]
		if !seen {
			kinds = append(kinds, f.Kind)
		}
		if f.Known {
			c[0]++
		} else {
			c[1]++
		}
		counts[f.Kind] = c
	}
	// A new field's members are new too: they are counted under it.
	newNames := map[string]bool{}
	for _, f := range fs {
		if !f.Known {
			newNames[f.Kind+" "+f.Name] = true
		}
	}
	below := map[string]int{}
	firstCol := map[string]string{} // table -> the first new column shown
	folded := func(f Finding) bool {
		if f.Kind == KindColumn {
			table, _, _ := strings.Cut(f.Name, ".")
			if first, ok := firstCol[table]; ok {
				below[f.Kind+" "+first]++
				return true
			}
			firstCol[table] = f.Name
			return false
		}
		for p := parent(f.Name); p != ""; p = parent(p) {
			if newNames[f.Kind+" "+p] {
				below[f.Kind+" "+p]++
				return true
			}
		}
		return false
	}
	var shown []Finding
	for _, f := range fs {
		if f.Known || !folded(f) {
			shown = append(shown, f)
		}
	}
	fmt.Fprintf(&b, "Codex %s\n", version)
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-14s %4d known, %d new\n", k+"s:", counts[k][0], counts[k][1])
	}
	for _, f := range shown {
		switch {
		case !f.Known:
			more := ""
			if n := below[f.Kind+" "+f.Name]; n > 0 && f.Kind == KindColumn {
				more = fmt.Sprintf(" and %d more new columns of its table", n)
			} else if n > 0 {
				more = fmt.Sprintf(" and %d names below it", n)
			}
			fmt.Fprintf(&b, "  NEW %s %s%s (%s: %s)\n", f.Kind, f.Name, more, f.Source, f.Example)
		case verbose:
			how := "read by " + f.Term.ReadBy
			if f.Term.ReadBy == "" {
				how = "ignored: " + f.Term.Why
			}
			fmt.Fprintf(&b, "  known %s %s (%s)\n", f.Kind, f.Name, how)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Run observes each version with observe, checks it against voc and
// writes the reports to w. The exit code is 1 when some version writes a
// name voc does not list, else 0; an error (a version that could not be
// observed) comes back with exit code 2.
func Run(ctx context.Context, versions []string, w io.Writer, voc Vocabulary, observe func(context.Context, string) (*Observed, error), verbose bool) (int, error) {
	if len(versions) == 0 {
		return 2, fmt.Errorf("drift: no version (make drift VERSION=0.172.0)")
	}
	code := 0
	for _, v := range versions {
		o, err := observe(ctx, v)
		if err != nil {
			return 2, fmt.Errorf("drift: %s: %w", v, err)
		}
		fs, unknown := Check(o, voc)
		if err := Report(w, v, fs, verbose); err != nil {
			return 2, err
		}
		if unknown > 0 {
			code = 1
		}
	}
	return code, nil
}

// parent is the field path one level up ("" at the top): a.b[].c -> a.b[]
// -> a.b -> a.
func parent(name string) string {
	if p, ok := strings.CutSuffix(name, "[]"); ok {
		return p
	}
	if i := strings.LastIndexAny(name, ".:"); i > 0 {
		return name[:i]
	}
	return ""
}
